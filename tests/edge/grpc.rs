//! The gRPC binding of the assembled stack (`A2aServer` with a GRPC
//! interface), driven over loopback HTTP/2 by a client generated from the
//! same `a2a.proto`: the RPCs (send, stream, get, list, cancel, subscribe),
//! the `a2a-version` and `a2a-extensions` metadata rules, the body limit,
//! unknown methods, statuses with `google.rpc` ErrorInfo details for every
//! `ErrorKind` (from the stack where it produces one, else from a core), and
//! the managed layer's refusal of numeric data parts over gRPC.

use crate::support;

use std::sync::{Arc, Mutex};

use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::grpc::proto::a2a_service_client::A2aServiceClient;
use a2a_tower::grpc::proto::{self, part, send_message_response, stream_response};
use a2a_tower::grpc::rpc;
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentExtension, AgentInterface, AgentSkill};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, BoxError, ERROR_DOMAIN, ErrorKind, Operation};
use futures_core::Stream;
use futures_util::StreamExt;
use prost::Message as _;
use tonic::transport::Channel;

use support::core::{Calls, scripted};

type Client = A2aServiceClient<Channel>;

/// Echoes the message text; after `hold` it waits until the task is canceled.
struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let hold = input.text == "hold";
        let echo = futures_util::stream::iter([Ok(input.text)]);
        echo.chain(futures_util::stream::pending().take(usize::from(hold)))
    }
}

fn card() -> AgentCard {
    AgentCard::new("Grpc", "Echoes over gRPC", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
        .with_interface(AgentInterface::grpc("localhost:50051"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"))
        .with_streaming(true)
}

/// Serves `svc` on a loopback listener (HTTP/1.1 and h2c) and opens a
/// channel to it.
async fn channel<S, B>(svc: S) -> Channel
where
    S: tower::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (listener, base) = support::loopback::listener().await;
    support::loopback::serve(listener, svc);
    Channel::from_shared(base).unwrap().connect().await.unwrap()
}

async fn echo_client() -> Client {
    A2aServiceClient::new(channel(A2aServer::builder(card()).agent(Echo).await.unwrap()).await)
}

/// `msg` with `a2a-version: 1.0`.
fn req<T>(msg: T) -> tonic::Request<T> {
    versioned(msg, Some("1.0"))
}

fn versioned<T>(msg: T, version: Option<&str>) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    if let Some(v) = version {
        r.metadata_mut().insert("a2a-version", v.parse().unwrap());
    }
    r
}

fn text_message(id: &str, text: &str) -> proto::Message {
    proto::Message {
        message_id: id.into(),
        role: proto::Role::User as i32,
        parts: vec![proto::Part {
            content: Some(part::Content::Text(text.into())),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn send(id: &str, text: &str, immediately: bool) -> proto::SendMessageRequest {
    proto::SendMessageRequest {
        message: Some(text_message(id, text)),
        configuration: Some(proto::SendMessageConfiguration {
            return_immediately: immediately,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn get(id: &str) -> proto::GetTaskRequest {
    proto::GetTaskRequest {
        id: id.into(),
        ..Default::default()
    }
}

fn sent_task(r: proto::SendMessageResponse) -> proto::Task {
    match r.payload {
        Some(send_message_response::Payload::Task(t)) => t,
        other => panic!("not a task: {other:?}"),
    }
}

fn state(t: &proto::Task) -> proto::TaskState {
    t.status.as_ref().unwrap().state()
}

fn artifact_text(t: &proto::Task) -> String {
    let parts = t.artifacts.iter().flat_map(|a| &a.parts);
    parts
        .filter_map(|p| match &p.content {
            Some(part::Content::Text(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// `NotFound` → `NOT_FOUND`: the `google.rpc.Code` name of a tonic code.
fn code_name(code: tonic::Code) -> String {
    let mut out = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Checks that `status` is `kind` (code from the table, the ErrorInfo with
/// the reason and domain, the same code and message in the details) and
/// returns the ErrorInfo and the BadRequest, if any.
fn assert_kind(
    status: &tonic::Status,
    kind: ErrorKind,
) -> (rpc::ErrorInfo, Option<rpc::BadRequest>) {
    assert_eq!(
        code_name(status.code()),
        kind.grpc_status(),
        "{kind}: {status:?}"
    );
    let details = rpc::Status::decode(status.details()).expect("grpc-status-details-bin");
    assert_eq!(details.code, status.code() as i32);
    assert_eq!(details.message, status.message());
    let first = details.details.first().expect("an ErrorInfo");
    assert_eq!(first.type_url, "type.googleapis.com/google.rpc.ErrorInfo");
    let info = rpc::ErrorInfo::decode(&first.value[..]).unwrap();
    assert_eq!(info.reason, kind.reason());
    assert_eq!(info.domain, ERROR_DOMAIN);
    let bad = details.details.get(1).map(|d| {
        assert_eq!(d.type_url, "type.googleapis.com/google.rpc.BadRequest");
        rpc::BadRequest::decode(&d.value[..]).unwrap()
    });
    (info, bad)
}

#[tokio::test]
async fn send_get_list_and_stream() {
    let mut c = echo_client().await;
    let task = sent_task(
        c.send_message(req(send("m-1", "hello", false)))
            .await
            .unwrap()
            .into_inner(),
    );
    assert_eq!(state(&task), proto::TaskState::Completed);
    assert_eq!(artifact_text(&task), "hello");
    assert_eq!(task.history[0].role(), proto::Role::User);

    let got = c.get_task(req(get(&task.id))).await.unwrap().into_inner();
    assert_eq!(
        (got.id.as_str(), got.context_id.as_str()),
        (task.id.as_str(), task.context_id.as_str())
    );
    assert_eq!(artifact_text(&got), "hello");

    let list = proto::ListTasksRequest {
        context_id: task.context_id.clone(),
        include_artifacts: Some(true),
        ..Default::default()
    };
    let listed = c.list_tasks(req(list)).await.unwrap().into_inner();
    assert_eq!(listed.tasks.len(), 1);
    assert_eq!(artifact_text(&listed.tasks[0]), "hello");

    let mut events = c
        .send_streaming_message(req(send("m-2", "streamed", false)))
        .await
        .unwrap()
        .into_inner();
    let mut kinds = Vec::new();
    let mut last_state = None;
    while let Some(ev) = events.message().await.unwrap() {
        match ev.payload.unwrap() {
            stream_response::Payload::Task(t) => {
                kinds.push("task");
                last_state = Some(state(&t));
            }
            stream_response::Payload::StatusUpdate(s) => {
                kinds.push("status");
                last_state = Some(s.status.unwrap().state());
            }
            stream_response::Payload::ArtifactUpdate(a) => {
                kinds.push("artifact");
                assert!(
                    matches!(&a.artifact.unwrap().parts[0].content, Some(part::Content::Text(t)) if t == "streamed")
                );
            }
            stream_response::Payload::Message(_) => kinds.push("message"),
        }
    }
    assert_eq!(kinds.first(), Some(&"task"), "{kinds:?}");
    assert!(kinds.contains(&"artifact"), "{kinds:?}");
    assert_eq!(last_state, Some(proto::TaskState::Completed));
}

#[tokio::test]
async fn cancel_and_subscribe() {
    let mut c = echo_client().await;
    let held = sent_task(
        c.send_message(req(send("m-1", "hold", true)))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(matches!(
        state(&held),
        proto::TaskState::Submitted | proto::TaskState::Working
    ));
    let sub = proto::SubscribeToTaskRequest {
        id: held.id.clone(),
        ..Default::default()
    };
    let mut events = c
        .subscribe_to_task(req(sub.clone()))
        .await
        .unwrap()
        .into_inner();
    let first = events.message().await.unwrap().unwrap();
    assert!(
        matches!(first.payload, Some(stream_response::Payload::Task(ref t)) if t.id == held.id)
    );

    let cancel = proto::CancelTaskRequest {
        id: held.id.clone(),
        ..Default::default()
    };
    let canceled = c
        .cancel_task(req(cancel.clone()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state(&canceled), proto::TaskState::Canceled);
    let mut last = None;
    while let Some(ev) = events.message().await.unwrap() {
        if let Some(stream_response::Payload::StatusUpdate(s)) = ev.payload {
            last = Some(s.status.unwrap().state());
        }
    }
    assert_eq!(
        last,
        Some(proto::TaskState::Canceled),
        "the stream ends with the cancel"
    );

    // A terminal task can be neither canceled nor subscribed to.
    let again = c.cancel_task(req(cancel)).await.unwrap_err();
    let (info, _) = assert_kind(&again, ErrorKind::TaskNotCancelable);
    assert_eq!(info.metadata["taskId"], held.id);
    let late = c.subscribe_to_task(req(sub)).await.unwrap_err();
    assert_kind(&late, ErrorKind::UnsupportedOperation);
}

#[tokio::test]
async fn version_metadata_rules() {
    let mut c = echo_client().await;
    for version in [None, Some("0.3"), Some("2.0"), Some("one")] {
        let err = c.get_task(versioned(get("t"), version)).await.unwrap_err();
        let (info, _) = assert_kind(&err, ErrorKind::VersionNotSupported);
        assert_eq!(info.metadata["supportedVersions"], "1.0", "{version:?}");
    }
    // Major.Minor matches; a patch is ignored. The core is reached.
    let err = c
        .get_task(versioned(get("t"), Some("1.0.7")))
        .await
        .unwrap_err();
    assert_kind(&err, ErrorKind::TaskNotFound);
}

#[tokio::test]
async fn extensions_metadata_rules() {
    let mut card = card();
    for (uri, required) in [("urn:x:opt", false), ("urn:x:req", true)] {
        card.capabilities.extensions.push(AgentExtension {
            uri: uri.into(),
            required,
            ..Default::default()
        });
    }
    let calls: Calls = Arc::default();
    let core = scripted(calls.clone(), |op| match op {
        Operation::GetTask(r) => Err(A2aError::task_not_found(r.id.clone())),
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    });
    let mut c = A2aServiceClient::new(channel(A2aServer::builder(card).core(core).unwrap()).await);

    let err = c.get_task(req(get("t"))).await.unwrap_err();
    let (info, _) = assert_kind(&err, ErrorKind::ExtensionSupportRequired);
    assert_eq!(info.metadata["requiredExtensions"], "urn:x:req");
    assert!(calls.lock().unwrap().is_empty(), "refused before the core");

    let mut r = req(get("t"));
    let asked = "urn:x:unknown, urn:x:req,urn:x:opt";
    r.metadata_mut()
        .insert("a2a-extensions", asked.parse().unwrap());
    let err = c.get_task(r).await.unwrap_err();
    assert_kind(&err, ErrorKind::TaskNotFound);
    assert_eq!(
        err.metadata().get("a2a-extensions").unwrap(),
        "urn:x:req, urn:x:opt"
    );
    let calls = calls.lock().unwrap();
    let ctx = &calls[0].context;
    assert_eq!(ctx.activated_extensions, ["urn:x:req", "urn:x:opt"]);
    assert!(ctx.extensions.get::<a2a_tower::GrpcCall>().is_some());
}

#[tokio::test]
async fn the_body_limit_is_resource_exhausted() {
    const MAX: usize = 2048;
    let app = A2aServer::builder(card())
        .max_body_bytes(MAX)
        .agent(Echo)
        .await
        .unwrap();
    let mut c = A2aServiceClient::new(channel(app).await);
    let sized = |len: usize| {
        let mut text = "x".repeat(len);
        while send("m", &text, false).encoded_len() > len {
            text.pop();
        }
        send("m", &text, false)
    };
    // Declared larger than the message limit (refused from the frame
    // header), and within it but over the body limit with the frame prefix.
    for len in [MAX + 100, MAX - 2] {
        let big = sized(len);
        assert_eq!(big.encoded_len(), len);
        let err = c.send_message(req(big)).await.unwrap_err();
        assert_kind(&err, ErrorKind::PayloadTooLarge);
    }
    let fits = sized(MAX - 100);
    assert!(c.send_message(req(fits)).await.is_ok());
}

// Raw bytes from outside: a body that is no protobuf message of the RPC's
// type, a frame cut short, a frame header cut short, no message at all.
// Each is the caller's error: INVALID_ARGUMENT with the ErrorInfo every
// refusal carries, never tonic's bare INTERNAL text.
#[tokio::test]
async fn undecodable_bodies_are_the_callers_error() {
    use tower::ServiceExt;
    let app = A2aServer::builder(card()).agent(Echo).await.unwrap();
    let bodies: [&[u8]; 4] = [
        &[0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff],
        &[0, 0, 0, 0, 10, 0x0a, 0x02, 0x74],
        &[0, 0, 0],
        &[],
    ];
    for body in bodies {
        let request = http::Request::post("http://localhost/lf.a2a.v1.A2AService/GetTask")
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .header("a2a-version", "1.0")
            .body(http_body_util::Full::new(bytes::Bytes::from_static(body)))
            .unwrap();
        let res = app.clone().oneshot(request).await.unwrap();
        assert_eq!(res.status(), http::StatusCode::OK, "{body:?}");
        let status = tonic::Status::from_header_map(res.headers()).expect("trailers-only");
        let (info, _) = assert_kind(&status, ErrorKind::ParseError);
        assert_eq!(info.reason, "PARSE_ERROR", "{body:?}");
        assert!(!status.message().contains("decode"), "{status:?}");
    }
}

#[tokio::test]
async fn errors_the_stack_produces() {
    let mut c = echo_client().await;
    let err = c.get_task(req(get("t-404"))).await.unwrap_err();
    let (info, _) = assert_kind(&err, ErrorKind::TaskNotFound);
    assert_eq!(info.metadata["taskId"], "t-404");

    // A message without its id: the same field check as the JSON bindings.
    let err = c
        .send_message(req(send("", "hi", false)))
        .await
        .unwrap_err();
    let (_, bad) = assert_kind(&err, ErrorKind::InvalidParams);
    assert_eq!(bad.unwrap().field_violations[0].field, "message.messageId");

    let mut png = send("m-png", "hi", false);
    png.configuration.as_mut().unwrap().accepted_output_modes = vec!["image/png".into()];
    let err = c.send_message(req(png)).await.unwrap_err();
    assert_kind(&err, ErrorKind::ContentTypeNotSupported);

    // The card does not declare push notifications.
    let config = proto::TaskPushNotificationConfig {
        task_id: "t".into(),
        url: "https://example.com/hook".into(),
        ..Default::default()
    };
    let err = c
        .create_task_push_notification_config(req(config))
        .await
        .unwrap_err();
    assert_kind(&err, ErrorKind::PushNotificationNotSupported);

    // A method the service does not have: gRPC's UNIMPLEMENTED.
    let app = A2aServer::builder(card()).agent(Echo).await.unwrap();
    let mut grpc = tonic::client::Grpc::new(channel(app).await);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<proto::GetTaskRequest, proto::Task>::default();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/NoSuchMethod");
    let err = grpc.unary(req(get("t")), path, codec).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unimplemented);
}

#[tokio::test]
async fn every_error_kind_from_a_core() {
    // The core answers GetTask with the kind named by the task id.
    let core = tower::service_fn(|r: A2aRequest| async move {
        let Operation::GetTask(get) = r.operation else {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation));
        };
        let kind = ErrorKind::from_reason(&get.id).unwrap();
        let err = A2aError::new(kind)
            .with_metadata("taskId", get.id)
            .with_violation("id", "names an error")
            .with_source(std::io::Error::other("secret cause"));
        Err::<A2aResponse, _>(err)
    });
    let mut c =
        A2aServiceClient::new(channel(A2aServer::builder(card()).core(core).unwrap()).await);
    for kind in ErrorKind::ALL {
        let err = c.get_task(req(get(kind.reason()))).await.unwrap_err();
        let (info, bad) = assert_kind(&err, *kind);
        assert_eq!(info.metadata["taskId"], kind.reason());
        assert_eq!(bad.unwrap().field_violations[0].field, "id");
        assert_eq!(err.message(), kind.default_message());
        assert!(
            !format!("{err:?}").contains("secret"),
            "{kind}: the cause leaked"
        );
    }
}

#[tokio::test]
async fn a_wrong_answer_is_invalid_agent_response() {
    let core = tower::service_fn(|_: A2aRequest| async { Ok::<_, A2aError>(A2aResponse::Empty) });
    let mut c =
        A2aServiceClient::new(channel(A2aServer::builder(card()).core(core).unwrap()).await);
    let err = c.get_task(req(get("t"))).await.unwrap_err();
    assert_kind(&err, ErrorKind::InvalidAgentResponse);
    let err = c
        .send_streaming_message(req(send("m", "x", false)))
        .await
        .unwrap_err();
    assert_kind(&err, ErrorKind::InvalidAgentResponse);
}

#[tokio::test]
async fn managed_refuses_numbers_in_data_parts_over_grpc() {
    use support::managed::{Counter, refund};
    let card = support::managed::card(&["application/json"])
        .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
        .with_interface(AgentInterface::grpc("localhost:50051"))
        .with_skill(AgentSkill::new("refund", "Refund", "Refunds"));
    let app = A2aServer::builder(card)
        .program(refund(Counter::default()))
        .await
        .unwrap();
    let mut c = A2aServiceClient::new(channel(app).await);
    let number = |n: f64| pbjson_types::Value {
        kind: Some(pbjson_types::value::Kind::NumberValue(n)),
    };
    let text = |s: &str| pbjson_types::Value {
        kind: Some(pbjson_types::value::Kind::StringValue(s.into())),
    };
    let data = pbjson_types::Struct {
        fields: [
            ("order".to_owned(), text("o-1")),
            ("amount".to_owned(), number(12.5)),
        ]
        .into(),
    };
    let mut msg = text_message("m-data", "");
    msg.parts[0].content = Some(part::Content::Data(pbjson_types::Value {
        kind: Some(pbjson_types::value::Kind::StructValue(data)),
    }));
    let numeric = proto::SendMessageRequest {
        message: Some(msg),
        ..Default::default()
    };
    let err = c.send_message(req(numeric)).await.unwrap_err();
    let (_, bad) = assert_kind(&err, ErrorKind::InvalidParams);
    assert_eq!(
        bad.unwrap().field_violations[0].field,
        "message.parts[0].data"
    );

    // The same input as JSON text keeps the number's exact text: admitted.
    let ok = send("m-text", r#"{"order": "o-1", "amount": 12.50}"#, true);
    let task = sent_task(c.send_message(req(ok)).await.unwrap().into_inner());
    assert!(!task.id.is_empty());
}

/// The core sees the call marked as gRPC, and the `tenant` field.
#[tokio::test]
async fn the_core_gets_the_same_operation() {
    let calls: Calls = Arc::default();
    let seen = calls.clone();
    let core = scripted(calls, |op| match op {
        Operation::GetTask(r) => Err(A2aError::task_not_found(r.id.clone())),
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    });
    let mut c =
        A2aServiceClient::new(channel(A2aServer::builder(card()).core(core).unwrap()).await);
    let mut r = get("t-1");
    r.tenant = "acme".into();
    r.history_length = Some(3);
    let _ = c.get_task(req(r)).await.unwrap_err();
    let calls: &Mutex<Vec<A2aRequest>> = &seen;
    let calls = calls.lock().unwrap();
    let Operation::GetTask(op) = &calls[0].operation else {
        panic!("not GetTask: {:?}", calls[0].operation)
    };
    assert_eq!(
        (op.id.as_str(), op.tenant.as_str(), op.history_length),
        ("t-1", "acme", Some(3))
    );
    assert_eq!(calls[0].context.tenant, "acme");
    assert_eq!(
        calls[0].context.version,
        Some(a2a_tower::ProtocolVersion::V1_0)
    );
}
