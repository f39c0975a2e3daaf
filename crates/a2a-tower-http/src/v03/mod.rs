//! A2A 0.3 beside 1.0 (opt-in): [`V03Layer`] serves the 0.3 wire of the
//! JSON-RPC and HTTP+JSON interfaces on the card with the same stack, so
//! one engine and one task log answer both: a task created over 0.3 is
//! read, canceled and subscribed to over 1.0, and back.
//!
//! Put it outermost (around the card endpoint). A request without
//! `A2A-Version` (header or query parameter), or asking for `0.3`, is a
//! 0.3 request (A2A 1.0 §3.6.2); one asking for another version passes
//! as it is. A 0.3 request is turned into the 1.0 one with the
//! [`codec`] and `A2A-Version: 1.0`, and its 1.0 answer, stream events
//! and errors back into 0.3:
//!
//! - JSON-RPC at the interface URL: the 0.3 method names (`message/send`,
//!   `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`,
//!   `tasks/pushNotificationConfig/{set,get,list,delete}`,
//!   `agent/getAuthenticatedExtendedCard`), `kind`-tagged objects, the
//!   request's id echoed with its JSON type on the answer and on every
//!   stream event; another method passes to the 1.0 stack as it is;
//! - HTTP+JSON under `<interface URL>/v1/...` (the 0.3 routes, ProtoJSON
//!   bodies; errors as `{"code", "message"}` with the JSON-RPC code);
//! - the agent card (`/.well-known/agent-card.json`) gains the fields 0.3
//!   clients read (`url`, `preferredTransport`, `additionalInterfaces`,
//!   `protocolVersion`, ...) and lists each interface again with
//!   `protocolVersion` `0.3`, beside the 1.0 fields;
//! - `X-A2A-Extensions` (0.3's header) is read as `A2A-Extensions`, and
//!   the answer's `A2A-Extensions` is also sent as `X-A2A-Extensions`.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface, Task, TaskState, TaskStatus};
//! use a2a_tower::types::SendMessageResponse;
//! use a2a_tower::v03::V03Layer;
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, JsonRpcLayer, VersionLayer};
//! use http_body_util::BodyExt;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let card = AgentCard::new("Doc", "Answers with a task", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"));
//! let core = tower::service_fn(|_: A2aRequest| async {
//!     let mut task = Task::default();
//!     task.id = "t-1".into();
//!     task.context_id = "c-1".into();
//!     task.status = TaskStatus::new(TaskState::Completed);
//!     Ok::<_, A2aError>(A2aResponse::SendMessage(SendMessageResponse::Task(task.into())))
//! });
//! let stack = VersionLayer::new(&card)?.layer(JsonRpcLayer::new(&card)?.layer(core));
//! let app = V03Layer::new(&card)?.layer(stack);
//!
//! // A 0.3 client: no A2A-Version, a 0.3 method, a numeric id.
//! let rpc = r#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":
//!     {"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
//! let req = http::Request::post("/rpc")
//!     .header("content-type", "application/json")
//!     .body(rpc.to_owned())?;
//! let res = app.oneshot(req).await?;
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["id"], 7);
//! assert_eq!(body["result"]["kind"], "task");
//! assert_eq!(body["result"]["status"]["state"], "completed");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod layer;
mod service;
mod sse;

/// The 0.3 ⇄ 1.0 conversions of JSON values the layer and the client use.
pub use a2a_tower_core::v03 as codec;
pub use layer::V03Layer;
pub use service::{ResponseFuture, V03Service};
