//! The JSON-RPC 2.0 binding (a2a-spec.md §6): [`JsonRpcLayer`] turns a core
//! [`A2aService`](crate::A2aService) into an HTTP service.
//!
//! # Transport
//!
//! - Served at the exact path of the card's first `JSONRPC` interface, with or
//!   without a trailing slash, as the full path or relative to where the host
//!   mounted the stack (see [Mounting](https://docs.rs/a2a-tower/latest/a2a_tower/server/index.html#mounting)); other paths
//!   go to the fallback service
//!   ([`NotFound`](crate::NotFound) by default, replace it with [`JsonRpcLayer::fallback`] to
//!   chain bindings).
//! - `POST` only (`405` with `Allow: POST` otherwise). `Content-Type` must be
//!   `application/json` or `application/a2a+json`; any other is error −32005.
//! - Every JSON-RPC error is HTTP 200 with `Content-Type: application/json`,
//!   except a body over a limit set by a layer above (`413`, when the body
//!   error has an `http_body_util::LengthLimitError` in its source chain) and
//!   the wrong HTTP method (`405`).
//!
//! # Envelope
//!
//! | fault | code | `id` |
//! |---|---|---|
//! | not well-formed JSON | −32700 | `null` |
//! | not a request object (incl. a batch array), `jsonrpc` ≠ `"2.0"`, no string `method` | −32600 | echoed if readable |
//! | `id` not a string, number or null | −32600 | `null` |
//! | unknown method | −32601 | echoed |
//! | params that do not decode or validate (missing `params` means `{}`) | −32602 | echoed |
//! | capability not declared (§4.8) | −32003 / −32004 | echoed |
//! | core answer that does not fit the method | −32006 | echoed |
//!
//! The `id` is echoed exactly as sent, numbers included (`1.0` stays `1.0`).
//! A request without `id` is answered with `id: null`.
//!
//! # Methods
//!
//! | method | params | result | core response |
//! |---|---|---|---|
//! | `SendMessage` | SendMessageRequest | `{task}` \| `{message}` | [`A2aResponse::SendMessage`](crate::A2aResponse::SendMessage) |
//! | `SendStreamingMessage` | SendMessageRequest | SSE of StreamResponse | `Stream` |
//! | `GetTask` | GetTaskRequest | Task | `Task` |
//! | `ListTasks` | ListTasksRequest | ListTasksResponse | `Tasks` |
//! | `CancelTask` | CancelTaskRequest | Task | `Task` |
//! | `SubscribeToTask` | SubscribeToTaskRequest | SSE of StreamResponse | `Stream` |
//! | `CreateTaskPushNotificationConfig` | TaskPushNotificationConfig | TaskPushNotificationConfig | `PushConfig` |
//! | `GetTaskPushNotificationConfig` | `{taskId, id}` | TaskPushNotificationConfig | `PushConfig` |
//! | `ListTaskPushNotificationConfigs` | `{taskId, pageSize?, pageToken?}` | `{configs, nextPageToken}` | `PushConfigs` |
//! | `DeleteTaskPushNotificationConfig` | `{taskId, id}` | `{}` | `Empty` |
//! | `GetExtendedAgentCard` | `{}` | AgentCard | `AgentCard` |
//! | an extension method | any object | any JSON | `Extension` |
//!
//! The core methods are the operation table's ([`OperationKind::jsonrpc_method`](crate::OperationKind::jsonrpc_method)).
//!
//! Extension methods are registered with [`JsonRpcLayer::extension_method`]
//! (see [`ExtensionMethod`](crate::ExtensionMethod)); their params object
//! reaches the core as it was sent, and any other name is −32601.
//!
//! The [`CallContext`](crate::CallContext) is built from the HTTP request
//! (version, activated extensions, headers and extensions, so a principal a
//! host layer inserted reaches the core); its `tenant` is the params' `tenant`.
//!
//! # Streaming
//!
//! Streaming methods answer `200 text/event-stream` with `Cache-Control:
//! no-cache` and `X-Accel-Buffering: no`. Each event is one `data:` line
//! holding a full JSON-RPC response with the request's id and a StreamResponse
//! result. The first event is read before the headers are sent: an error
//! there is a plain JSON-RPC error response. A later error is written as
//! `event: error` plus a `data:` line with the error response, and ends the
//! stream. A stream whose first event is a `message` ends after it. Idle
//! streams get a `: keep-alive` comment every 15 s ([`JsonRpcLayer::keep_alive`]).
//!
//! Each call runs in an `a2a.jsonrpc` span with fields `method` and, on error,
//! `error` (the ErrorKind reason, never error text).
//!
//! # Example
//!
//! ```
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, JsonRpcLayer, Operation};
//! use a2a_tower::types::{AgentCard, AgentInterface, Task};
//! use http_body_util::BodyExt;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let card = AgentCard::new("Echo", "Answers GetTask", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost:8080/rpc"));
//! let core = tower::service_fn(|req: A2aRequest| async move {
//!     match req.operation {
//!         Operation::GetTask(r) => Ok(A2aResponse::Task(Task { id: r.id, ..Default::default() })),
//!         _ => Err(A2aError::new(a2a_tower::ErrorKind::UnsupportedOperation)),
//!     }
//! });
//! let svc = ServiceBuilder::new().layer(JsonRpcLayer::new(&card)?).service(core);
//!
//! let req = http::Request::post("/rpc/")
//!     .header("content-type", "application/json")
//!     .body(http_body_util::Full::new(bytes::Bytes::from(
//!         r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#,
//!     )))?;
//! let res = svc.oneshot(req).await?;
//! assert_eq!(res.status(), 200);
//! let body = res.into_body().collect().await?.to_bytes();
//! assert_eq!(
//!     &body[..],
//!     br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t-1","contextId":"","status":{"state":"TASK_STATE_UNSPECIFIED"}}}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod binding;
#[doc(hidden)]
pub mod codec;

pub use crate::binding::service::ResponseFuture;
pub use binding::JsonRpcCodec;

/// Serves the card's JSON-RPC interface over a core
/// [`A2aService`](crate::A2aService): the generic
/// [`BindingLayer`](crate::binding::BindingLayer) filled with [`JsonRpcCodec`]; see
/// the [module docs](self).
pub type JsonRpcLayer<F = crate::NotFound> = crate::binding::BindingLayer<JsonRpcCodec, F>;

/// The JSON-RPC binding over a core `S`, other requests to the
/// fallback `F`: the generic [`BindingService`](crate::binding::BindingService)
/// filled with [`JsonRpcCodec`]. Built by [`JsonRpcLayer`].
pub type JsonRpcService<S, F = crate::NotFound> =
    crate::binding::BindingService<JsonRpcCodec, S, F>;
