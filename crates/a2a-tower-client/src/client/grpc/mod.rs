//! The gRPC transport ([`Transport::Grpc`](super::Transport), feature
//! `grpc`): each operation as its RPC of `lf.a2a.v1.A2AService` over a tonic
//! channel (HTTP/2 without TLS; an interface URL without a scheme, as cards
//! give `host:port`, is `http://host:port`). Requests carry the metadata
//! `a2a-version: 1.0`, the caller's `a2a-extensions` and, on the card's
//! origin, `authorization`. Messages are bridged to the crate's types through
//! ProtoJSON (the generated messages serialize as ProtoJSON, and so do the
//! types), answers read as the other transports read theirs; an error status
//! becomes the [`A2aError`] its `google.rpc.ErrorInfo` names. An
//! extension method has no RPC: UnsupportedOperation, nothing sent.
//!
//! ```
//! use a2a_tower::client::Transport;
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! let card = AgentCard::new("A", "d", "1")
//!     .with_interface(AgentInterface::grpc("localhost:50051"))
//!     .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"));
//! let (t, i) = Transport::select(&card, None).unwrap();
//! assert_eq!((t, i.url.as_str()), (Transport::Grpc, "localhost:50051"));
//! ```

mod proto;
mod status;

use futures_util::StreamExt;
use http::uri::PathAndQuery;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::client::Grpc;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::Channel;
use tonic_prost::ProstCodec;

use super::request::Target;
use super::response::{Expect, answer, event, invalid, unavailable};
use crate::types::StreamResponse;
use crate::{A2aError, A2aRequest, A2aResponse, ErrorKind, EventStream, Operation};

/// The URL a channel connects to: the interface URL, `http://` added when
/// it has no scheme.
pub(crate) fn channel_url(url: &str) -> String {
    if url.contains("://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    }
}

/// A lazily connected channel to `url` (see [`channel_url`]); must be
/// called within a Tokio runtime.
pub(crate) fn channel(url: &str) -> Result<Channel, A2aError> {
    Channel::from_shared(channel_url(url))
        .map(|e| e.connect_lazy())
        .map_err(|_| invalid("the agent's gRPC interface URL is not a URL"))
}

/// A message of the crate's types as the generated message. A number of a
/// data part or metadata that is not a 64-bit integer becomes the nearest
/// double, as protobuf holds it.
fn to_proto<P: DeserializeOwned>(value: Value) -> Result<P, A2aError> {
    let text = serde_json::to_string(&value).map_err(A2aError::internal)?;
    serde_json::from_str(&text).or_else(|_| {
        let mut value = value;
        doubles(&mut value);
        P::deserialize(value).map_err(|e| A2aError::new(ErrorKind::InvalidParams).with_source(e))
    })
}

fn doubles(value: &mut Value) {
    match value {
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            if let Some(d) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = d;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(doubles),
        Value::Object(members) => members.values_mut().for_each(doubles),
        _ => {}
    }
}

/// An answer's ProtoJSON text.
fn text<P: Serialize>(message: &P) -> Result<String, A2aError> {
    serde_json::to_string(message)
        .map_err(|e| invalid("the agent's answer does not convert to JSON").with_source(e))
}

/// The request metadata of a call.
fn metadata(target: &Target, req: &A2aRequest) -> MetadataMap {
    let mut md = MetadataMap::new();
    md.insert("a2a-version", MetadataValue::from_static("1.0"));
    for v in req.context.headers.get_all("a2a-extensions") {
        if let Ok(v) = MetadataValue::try_from(v.as_bytes()) {
            md.append("a2a-extensions", v);
        }
    }
    if let Some(auth) = &target.authorization
        && let Ok(v) = MetadataValue::try_from(auth.as_bytes())
    {
        md.insert("authorization", v);
    }
    // Header and cookie credentials only: gRPC has no query string.
    if let Some(c) = &target.credentials
        && channel_url(&target.url)
            .parse()
            .ok()
            .and_then(|u| super::origin::Origin::of(&u))
            .is_some_and(|o| c.reaches(&o))
    {
        for (name, v) in c.plan().headers().iter() {
            if let (Ok(k), Ok(v)) = (
                tonic::metadata::MetadataKey::from_bytes(name.as_str().as_bytes()),
                MetadataValue::try_from(v.as_bytes()),
            ) {
                md.insert(k, v);
            }
        }
    }
    md
}

/// One unary RPC: `Q` sent, `R` read back as ProtoJSON text.
async fn unary<Q, R>(
    channel: Channel,
    path: &'static str,
    query: Q,
    md: MetadataMap,
) -> Result<String, A2aError>
where
    Q: prost::Message + Send + Sync + 'static,
    R: prost::Message + Default + Serialize + Send + Sync + 'static,
{
    let mut grpc = Grpc::new(channel);
    grpc.ready().await.map_err(unavailable)?;
    let mut request = tonic::Request::new(query);
    *request.metadata_mut() = md;
    let codec = ProstCodec::<Q, R>::default();
    let res = grpc
        .unary(request, PathAndQuery::from_static(path), codec)
        .await
        .map_err(|s| status::error(&s))?;
    text(res.get_ref())
}

/// One server-streaming RPC: the events, ending at the first error.
async fn streaming<Q>(
    channel: Channel,
    path: &'static str,
    query: Q,
    md: MetadataMap,
) -> Result<EventStream, A2aError>
where
    Q: prost::Message + Send + Sync + 'static,
{
    let mut grpc = Grpc::new(channel);
    grpc.ready().await.map_err(unavailable)?;
    let mut request = tonic::Request::new(query);
    *request.metadata_mut() = md;
    let codec = ProstCodec::<Q, proto::StreamResponse>::default();
    let res = grpc
        .server_streaming(request, PathAndQuery::from_static(path), codec)
        .await
        .map_err(|s| status::error(&s))?;
    let events = res
        .into_inner()
        .map(|item| -> Result<StreamResponse, A2aError> {
            let message = item.map_err(|s| status::error(&s))?;
            event(&text(&message)?)
        });
    // Nothing is read after the first error.
    let mut failed = false;
    Ok(EventStream::new(events.take_while(move |item| {
        let go = !failed;
        failed |= item.is_err();
        futures_util::future::ready(go)
    })))
}

/// Sends `req` over `channel` to the interface `target`.
pub(crate) async fn call(
    channel: Channel,
    target: &Target,
    req: A2aRequest,
) -> Result<A2aResponse, A2aError> {
    let op = &req.operation;
    let Some(kind) = op.kind() else {
        return Err(A2aError::new(ErrorKind::UnsupportedOperation)
            .with_message("extension methods are sent over JSON-RPC only"));
    };
    let mut p = op.to_params().map_err(A2aError::internal)?;
    if op.tenant().is_empty() && !target.tenant.is_empty() {
        p.insert("tenant".into(), target.tenant.clone().into());
    }
    let p = Value::Object(p);
    let md = metadata(target, &req);
    let path = kind.grpc_path();
    let expect = Expect::of(op);
    let text = match op {
        Operation::SendStreamingMessage(_) => {
            let q: proto::SendMessageRequest = to_proto(p)?;
            return Ok(A2aResponse::Stream(streaming(channel, path, q, md).await?));
        }
        Operation::SubscribeToTask(_) => {
            let q: proto::SubscribeToTaskRequest = to_proto(p)?;
            return Ok(A2aResponse::Stream(streaming(channel, path, q, md).await?));
        }
        Operation::SendMessage(_) => {
            let q: proto::SendMessageRequest = to_proto(p)?;
            unary::<_, proto::SendMessageResponse>(channel, path, q, md).await?
        }
        Operation::GetTask(_) => {
            let q: proto::GetTaskRequest = to_proto(p)?;
            unary::<_, proto::Task>(channel, path, q, md).await?
        }
        Operation::ListTasks(_) => {
            let q: proto::ListTasksRequest = to_proto(p)?;
            unary::<_, proto::ListTasksResponse>(channel, path, q, md).await?
        }
        Operation::CancelTask(_) => {
            let q: proto::CancelTaskRequest = to_proto(p)?;
            unary::<_, proto::Task>(channel, path, q, md).await?
        }
        Operation::CreateTaskPushNotificationConfig(_) => {
            let q: proto::TaskPushNotificationConfig = to_proto(p)?;
            unary::<_, proto::TaskPushNotificationConfig>(channel, path, q, md).await?
        }
        Operation::GetTaskPushNotificationConfig(_) => {
            let q: proto::GetTaskPushNotificationConfigRequest = to_proto(p)?;
            unary::<_, proto::TaskPushNotificationConfig>(channel, path, q, md).await?
        }
        Operation::ListTaskPushNotificationConfigs(_) => {
            let q: proto::ListTaskPushNotificationConfigsRequest = to_proto(p)?;
            unary::<_, proto::ListTaskPushNotificationConfigsResponse>(channel, path, q, md).await?
        }
        Operation::DeleteTaskPushNotificationConfig(_) => {
            let q: proto::DeleteTaskPushNotificationConfigRequest = to_proto(p)?;
            unary::<_, pbjson_types::Empty>(channel, path, q, md).await?
        }
        Operation::GetExtendedAgentCard(_) => {
            let q: proto::GetExtendedAgentCardRequest = to_proto(p)?;
            unary::<_, proto::AgentCard>(channel, path, q, md).await?
        }
        _ => {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message("the operation has no RPC this client knows"));
        }
    };
    answer(expect, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_without_a_scheme_are_plain_http() {
        assert_eq!(channel_url("localhost:50051"), "http://localhost:50051");
        assert_eq!(channel_url("http://h:1/x"), "http://h:1/x");
    }

    #[test]
    fn exact_numbers_become_doubles_only_when_protobuf_needs_it() {
        let p = serde_json::json!({"id": "t", "historyLength": 3});
        let q: proto::GetTaskRequest = to_proto(p).unwrap();
        assert_eq!((q.id.as_str(), q.history_length), ("t", Some(3)));
    }
}
