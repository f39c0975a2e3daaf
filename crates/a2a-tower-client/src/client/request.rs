//! Encoding an [`A2aRequest`] as the HTTP request of one binding: exactly
//! what this crate's JSON-RPC and HTTP+JSON services decode (a2a-spec.md
//! §6, §7.1, §7.2).

use bytes::Bytes;
use http::{HeaderValue, Method, Request, header};
use http_body_util::Full;
use serde_json::{Map, Value, json};

use super::transport::Transport;
use crate::{A2aError, A2aRequest, Operation};

/// The `A2A-Version` every request carries.
pub(crate) const VERSION: HeaderValue = HeaderValue::from_static("1.0");

/// Where requests go: the chosen interface, and the credentials it may see.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) transport: Transport,
    /// The interface URL as the card gives it (JSON-RPC posts to it).
    pub(crate) url: String,
    /// The interface URL without a trailing slash (HTTP+JSON routes follow it).
    pub(crate) base: String,
    /// The interface's tenant, used when the request names none.
    pub(crate) tenant: String,
    /// `Authorization`, only when the interface is on the card's origin.
    pub(crate) authorization: Option<HeaderValue>,
    /// The card-driven credentials, for the interface's origin only.
    pub(crate) credentials: Option<super::CredentialsLayer>,
    /// The interface speaks A2A 0.3: requests are sent in its wire.
    pub(crate) v03: bool,
}

impl Target {
    /// The host of the interface URL (the call span's `server.address`).
    pub(crate) fn host(&self) -> Option<&str> {
        let rest = self.url.split_once("://")?.1;
        let authority = rest.split(['/', '?', '#']).next()?;
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split_once(']')?.0,
            None => authority.split(':').next()?,
        };
        (!host.is_empty()).then_some(host)
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub(crate) fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn take_str(m: &mut Map<String, Value>, key: &str) -> String {
    match m.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The query string of a GET: every remaining scalar parameter.
fn query(m: &Map<String, Value>) -> String {
    let pairs: Vec<String> = m
        .iter()
        .filter_map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some(format!("{}={}", pct(k), pct(&v)))
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("?{}", pairs.join("&"))
    }
}

/// The HTTP request of `req` on `target`; `id` is the JSON-RPC request id.
pub(crate) fn encode(
    target: &Target,
    req: &A2aRequest,
    id: u64,
) -> Result<Request<Full<Bytes>>, A2aError> {
    let op = &req.operation;
    let mut p = op.to_params().map_err(A2aError::internal)?;
    if op.tenant().is_empty() && !target.tenant.is_empty() {
        p.insert("tenant".into(), target.tenant.clone().into());
    }
    let (method, uri, body) = match target.transport {
        Transport::JsonRpc if target.v03 => {
            let method = crate::v03::rpc::method_from_v10(op.method()).ok_or_else(not_in_v03)?;
            let params = crate::v03::rpc::params_from_v10(op.method(), &Value::Object(p));
            let env = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            (Method::POST, target.url.clone(), Some(env))
        }
        Transport::JsonRpc => {
            let env = json!({"jsonrpc": "2.0", "id": id, "method": op.method(), "params": p});
            (Method::POST, target.url.clone(), Some(env))
        }
        Transport::HttpJson => rest(target, op, p)?,
        // Sent by the gRPC transport itself, never as an HTTP request here.
        #[cfg(feature = "grpc")]
        Transport::Grpc => {
            return Err(crate::A2aError::new(crate::ErrorKind::UnsupportedOperation)
                .with_message("gRPC calls go through the gRPC channel"));
        }
    };
    let body = match body {
        Some(v) => Bytes::from(serde_json::to_vec(&v).map_err(A2aError::internal)?),
        None => Bytes::new(),
    };
    let accept = if op.is_streaming() {
        "text/event-stream, application/json"
    } else {
        "application/json"
    };
    let mut builder = Request::builder()
        .method(method.clone())
        .uri(uri)
        .header(header::ACCEPT, accept);
    // A 0.3 request is one without `A2A-Version`.
    if !target.v03 {
        builder = builder.header("a2a-version", VERSION);
    }
    if method == Method::POST {
        builder = builder.header(header::CONTENT_TYPE, "application/json");
    }
    let extensions = if target.v03 {
        "x-a2a-extensions"
    } else {
        "a2a-extensions"
    };
    for v in req.context.headers.get_all("a2a-extensions") {
        builder = builder.header(extensions, v.clone());
    }
    // A resumed SubscribeToTask: the last event id the caller saw.
    if matches!(req.operation, crate::Operation::SubscribeToTask(_))
        && let Some(id) = req.context.headers.get(crate::LastEventId::HEADER)
    {
        builder = builder.header(crate::LastEventId::HEADER, id.clone());
    }
    if let Some(auth) = &target.authorization {
        builder = builder.header(header::AUTHORIZATION, auth.clone());
    }
    let mut req = builder
        .body(Full::new(body))
        .map_err(|e| A2aError::new(crate::ErrorKind::InvalidParams).with_source(e))?;
    if let Some(c) = &target.credentials {
        c.apply(&mut req);
    }
    Ok(req)
}

/// An operation A2A 0.3 does not have.
fn not_in_v03() -> A2aError {
    A2aError::new(crate::ErrorKind::UnsupportedOperation)
        .with_message("the operation does not exist in A2A 0.3, which the agent speaks")
}

/// Method, URI and body of an HTTP+JSON call (§7.1): the first route of
/// the operation's row, its captures filled with the row's path parameters;
/// the other parameters are the body of a POST, else the query. An
/// extension method has no route the client knows: UnsupportedOperation.
fn rest(
    target: &Target,
    op: &Operation,
    mut p: Map<String, Value>,
) -> Result<(Method, String, Option<Value>), A2aError> {
    let Some(kind) = op.kind() else {
        return Err(A2aError::new(crate::ErrorKind::UnsupportedOperation)
            .with_message("extension methods are sent over JSON-RPC only"));
    };
    let tenant = take_str(&mut p, "tenant");
    let mut uri = target.base.clone();
    if target.v03 {
        // The 0.3 routes: `/v1` and the 1.0 path (the card at `/v1/card`);
        // no tenant, no ListTasks.
        if kind == crate::OperationKind::ListTasks {
            return Err(not_in_v03());
        }
        uri.push_str(&crate::v03::rest::path_from_v10(""));
        if kind == crate::OperationKind::GetExtendedAgentCard {
            return Ok((Method::GET, format!("{uri}/card"), None));
        }
    } else if !tenant.is_empty() {
        uri = format!("{uri}/{}", pct(&tenant));
    }
    // 0.3 servers subscribe with GET (the Python SDK's serves GET only).
    let route = match kind.http_routes() {
        [_, get, ..] if target.v03 && kind == crate::OperationKind::SubscribeToTask => *get,
        routes => routes[0],
    };
    let mut params = kind.path_params().iter();
    let mut rest = route.path;
    while let Some((literal, after)) = rest.split_once('{') {
        uri.push_str(literal);
        let (_, after) = after.split_once('}').unwrap_or((after, ""));
        let name = params.next().copied().unwrap_or_default();
        uri.push_str(&pct(&take_str(&mut p, name)));
        rest = after;
    }
    uri.push_str(rest);
    Ok(if route.verb.has_body() {
        let body = Value::Object(p);
        let body = if target.v03 {
            crate::v03::rest::request_from_v10(kind, &body)
        } else {
            body
        };
        (route.verb.method(), uri, Some(body))
    } else {
        let query = query(&p);
        (route.verb.method(), format!("{uri}{query}"), None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{GetTaskRequest, ListTasksRequest, TaskPushNotificationConfigId, TaskState};

    fn target(transport: Transport, tenant: &str) -> Target {
        Target {
            transport,
            url: "http://h/a2a/".into(),
            base: "http://h/a2a".into(),
            tenant: tenant.into(),
            authorization: None,
            credentials: None,
            v03: false,
        }
    }

    #[test]
    fn rest_routes_and_queries() {
        let t = target(Transport::HttpJson, "");
        let get = Operation::GetTask(GetTaskRequest {
            id: "a/b c".into(),
            history_length: Some(2),
            ..Default::default()
        });
        let r = encode(&t, &A2aRequest::new(get), 1).unwrap();
        assert_eq!(r.method(), Method::GET);
        assert_eq!(r.uri(), "http://h/a2a/tasks/a%2Fb%20c?historyLength=2");
        assert_eq!(r.headers()["a2a-version"], "1.0");
        let list = Operation::ListTasks(ListTasksRequest {
            context_id: "c&1".into(),
            status: TaskState::Working,
            include_artifacts: Some(true),
            ..Default::default()
        });
        let r = encode(
            &target(Transport::HttpJson, "acme"),
            &A2aRequest::new(list),
            1,
        )
        .unwrap();
        assert_eq!(
            r.uri(),
            "http://h/a2a/acme/tasks?contextId=c%261&status=TASK_STATE_WORKING&includeArtifacts=true"
        );
        let del = Operation::DeleteTaskPushNotificationConfig(TaskPushNotificationConfigId {
            task_id: "t".into(),
            id: "c".into(),
            ..Default::default()
        });
        let r = encode(&t, &A2aRequest::new(del), 1).unwrap();
        assert_eq!(r.method(), Method::DELETE);
        assert_eq!(r.uri(), "http://h/a2a/tasks/t/pushNotificationConfigs/c");
    }

    #[test]
    fn every_operation_goes_to_its_first_route() {
        use crate::types::{SendMessageRequest, TaskPushNotificationConfig};
        let t = target(Transport::HttpJson, "");
        let config = TaskPushNotificationConfig {
            task_id: "t 1".into(),
            id: "c/1".into(),
            url: "http://hook".into(),
            ..Default::default()
        };
        let id = || TaskPushNotificationConfigId {
            task_id: "t 1".into(),
            id: "c/1".into(),
            ..Default::default()
        };
        let cases = [
            (
                Operation::SendMessage(SendMessageRequest::default()),
                "POST",
                "/message:send",
            ),
            (
                Operation::SendStreamingMessage(SendMessageRequest::default()),
                "POST",
                "/message:stream",
            ),
            (
                Operation::GetTask(GetTaskRequest {
                    id: "t 1".into(),
                    ..Default::default()
                }),
                "GET",
                "/tasks/t%201",
            ),
            (
                Operation::ListTasks(ListTasksRequest::default()),
                "GET",
                "/tasks",
            ),
            (
                Operation::CancelTask(crate::types::CancelTaskRequest {
                    id: "t 1".into(),
                    ..Default::default()
                }),
                "POST",
                "/tasks/t%201:cancel",
            ),
            (
                Operation::SubscribeToTask(crate::types::SubscribeToTaskRequest {
                    id: "t 1".into(),
                    ..Default::default()
                }),
                "POST",
                "/tasks/t%201:subscribe",
            ),
            (
                Operation::CreateTaskPushNotificationConfig(config),
                "POST",
                "/tasks/t%201/pushNotificationConfigs",
            ),
            (
                Operation::GetTaskPushNotificationConfig(id()),
                "GET",
                "/tasks/t%201/pushNotificationConfigs/c%2F1",
            ),
            (
                Operation::ListTaskPushNotificationConfigs(
                    crate::types::ListTaskPushNotificationConfigsRequest {
                        task_id: "t 1".into(),
                        ..Default::default()
                    },
                ),
                "GET",
                "/tasks/t%201/pushNotificationConfigs",
            ),
            (
                Operation::DeleteTaskPushNotificationConfig(id()),
                "DELETE",
                "/tasks/t%201/pushNotificationConfigs/c%2F1",
            ),
            (
                Operation::GetExtendedAgentCard(Default::default()),
                "GET",
                "/extendedAgentCard",
            ),
        ];
        for (op, method, path) in cases {
            let r = encode(&t, &A2aRequest::new(op), 1).unwrap();
            assert_eq!(
                (r.method().as_str(), r.uri().to_string()),
                (method, format!("http://h/a2a{path}"))
            );
        }
    }

    #[test]
    fn jsonrpc_envelope_carries_the_interface_tenant() {
        let t = target(Transport::JsonRpc, "acme");
        let get = Operation::GetTask(GetTaskRequest {
            id: "t".into(),
            ..Default::default()
        });
        let r = encode(&t, &A2aRequest::new(get), 9).unwrap();
        assert_eq!(r.method(), Method::POST);
        assert_eq!(r.uri(), "http://h/a2a/");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
        use futures_util::FutureExt;
        use http_body_util::BodyExt;
        let bytes = r.into_body().collect().now_or_never().unwrap().unwrap();
        let body: Value = serde_json::from_slice(&bytes.to_bytes()).unwrap();
        assert_eq!(
            body,
            json!({"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t","tenant":"acme"}})
        );
    }

    #[test]
    fn extensions_go_over_jsonrpc_only() {
        let params = json!({"contextId": "c-1"}).as_object().cloned().unwrap();
        let ext = || {
            A2aRequest::new(Operation::Extension(crate::ExtensionRequest::new(
                "GetContextQueue",
                params.clone(),
            )))
        };
        let r = encode(&target(Transport::JsonRpc, "acme"), &ext(), 3).unwrap();
        use futures_util::FutureExt;
        use http_body_util::BodyExt;
        let bytes = r.into_body().collect().now_or_never().unwrap().unwrap();
        let body: Value = serde_json::from_slice(&bytes.to_bytes()).unwrap();
        assert_eq!(
            body,
            json!({"jsonrpc":"2.0","id":3,"method":"GetContextQueue",
                   "params":{"contextId":"c-1","tenant":"acme"}})
        );
        let err = encode(&target(Transport::HttpJson, ""), &ext(), 3).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::UnsupportedOperation);
    }

    #[test]
    fn v03_requests_use_the_03_wire() {
        use futures_util::FutureExt;
        use http_body_util::BodyExt;
        let mut t = target(Transport::JsonRpc, "");
        t.v03 = true;
        let req = A2aRequest::new(Operation::GetTask(GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        }));
        let r = encode(&t, &req, 4).unwrap();
        assert!(r.headers().get("a2a-version").is_none());
        let bytes = r.into_body().collect().now_or_never().unwrap().unwrap();
        let body: Value = serde_json::from_slice(&bytes.to_bytes()).unwrap();
        assert_eq!(body["method"], "tasks/get");
        assert_eq!(body["params"]["id"], "t-1");

        t.transport = Transport::HttpJson;
        let r = encode(&t, &req, 5).unwrap();
        assert_eq!(r.uri(), "http://h/a2a/v1/tasks/t-1");
        let list = A2aRequest::new(Operation::ListTasks(ListTasksRequest::default()));
        let e = encode(&t, &list, 6).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::UnsupportedOperation);
    }
}
