//! The HTTP+JSON binding (a2a-spec.md §7): [`RestLayer`] turns a core
//! [`A2aService`](crate::A2aService) into an HTTP service.
//!
//! # Routes
//!
//! Paths are below the path of the card's first `HTTP+JSON` interface (the
//! prefix), as the full path or relative to where the host mounted the stack
//! (see [Mounting](https://docs.rs/a2a-tower/latest/a2a_tower/server/index.html#mounting)). Each route also exists under one `/{tenant}` segment; routes
//! without a tenant are matched first, so `/tasks/tasks` is the task `tasks`
//! (§7.1, recommended). Path segments are percent-decoded; a trailing slash is
//! ignored. Requests outside the prefix, on the card's JSON-RPC path and on
//! the well-known card path go to the fallback service ([`NotFound`](crate::NotFound) by
//! default; [`RestLayer::fallback`] chains another binding).
//!
//! | operation | verb and path | body | success (200) | core response |
//! |---|---|---|---|---|
//! | SendMessage | `POST /message:send` | SendMessageRequest | `{task}` \| `{message}` | `SendMessage` |
//! | SendStreamingMessage | `POST /message:stream` | SendMessageRequest | SSE of StreamResponse | `Stream` |
//! | GetTask | `GET /tasks/{id}` | — | Task | `Task` |
//! | ListTasks | `GET /tasks` | — | ListTasksResponse | `Tasks` |
//! | CancelTask | `POST /tasks/{id}:cancel` | `{metadata?}`, empty or absent | Task | `Task` |
//! | SubscribeToTask | `GET` or `POST /tasks/{id}:subscribe` | none | SSE of StreamResponse | `Stream` |
//! | CreateTaskPushNotificationConfig | `POST /tasks/{id}/pushNotificationConfigs` | TaskPushNotificationConfig | TaskPushNotificationConfig | `PushConfig` |
//! | ListTaskPushNotificationConfigs | `GET /tasks/{id}/pushNotificationConfigs` | — | `{configs, nextPageToken}` | `PushConfigs` |
//! | GetTaskPushNotificationConfig | `GET /tasks/{id}/pushNotificationConfigs/{configId}` | — | TaskPushNotificationConfig | `PushConfig` |
//! | DeleteTaskPushNotificationConfig | `DELETE /tasks/{id}/pushNotificationConfigs/{configId}` | — | `{}` | `Empty` |
//! | GetExtendedAgentCard | `GET /extendedAgentCard` | — | AgentCard | `AgentCard` |
//! | an extension method | its registered route | a JSON object (POST, PUT, PATCH) | any JSON | `Extension` |
//!
//! The core rows are the operation table's routes ([`OperationKind::http_routes`](crate::OperationKind::http_routes)).
//!
//! Extension routes are registered with [`RestLayer::extension_method`] (see
//! [`ExtensionMethod`](crate::ExtensionMethod) for how the params object is
//! built); in each form, without and then under a tenant, they are tried
//! after the core's routes, whose paths they may not share.
//!
//! Path values win over body fields: `{id}` is the request's `id` (`taskId`
//! for push configs), `{configId}` its `id`, and `{tenant}` its `tenant`
//! (also [`CallContext::tenant`](crate::CallContext::tenant); without a
//! tenant segment, the body's `tenant`). So a cancel body such as Python's
//! `{"id": "t-1"}` is tolerated.
//!
//! # Query parameters (GET and DELETE, §7.2)
//!
//! camelCase names (proto snake_case names are accepted too), decimal
//! integers, `true`/`false`, enums by name (`status=TASK_STATE_WORKING`),
//! RFC 3339 timestamps, percent-encoded with `+` as a space. Unknown keys
//! (such as `A2A-Version`) are ignored.
//!
//! - GetTask: `historyLength`.
//! - ListTasks: `contextId`, `status`, `pageSize`, `pageToken`,
//!   `historyLength`, `statusTimestampAfter` (alias `lastUpdatedAfter`, as
//!   the a2a-go client sends it), `includeArtifacts`.
//! - ListTaskPushNotificationConfigs: `pageSize`, `pageToken`.
//!
//! No parameter of these operations is a repeated field, so a parameter
//! given twice (or under both alias names) is refused, and a comma is part
//! of a string value (`contextId=a,b` is the context `a,b`). A value that
//! does not parse is InvalidParams (400 `INVALID_ARGUMENT`) with a
//! BadRequest field violation naming the parameter; so are the ranges the
//! spec sets (§3.8, §4.4) and missing required body fields.
//!
//! # Bodies and errors
//!
//! POST bodies are `application/json`, `application/a2a+json` or come
//! without a `Content-Type`; any other type is 415 (`UnsupportedMediaType`).
//! An empty body means `{}`. GET and DELETE bodies are ignored. A body that
//! is not JSON is ParseError, JSON that does not fit the operation is
//! InvalidParams. A body over the limit of a layer above is 413.
//!
//! Success and error bodies are `application/json`. Errors are the
//! `google.rpc.Status` body of [`A2aError::to_rest_error`](crate::A2aError::to_rest_error)
//! with the HTTP status of the error table: unknown routes 404
//! (`METHOD_NOT_FOUND`), a known path with another verb 405
//! (`METHOD_NOT_ALLOWED`, with an `Allow` header), undeclared capabilities
//! (§4.8) and every error of the core by its kind.
//!
//! # Streaming (§7.5)
//!
//! `200 text/event-stream`, `Cache-Control: no-cache`. Each event is one
//! `data:` line with a bare StreamResponse. The first event is read before
//! the headers are sent: an error there is an ordinary error response. A
//! later error is `event: error` plus `data: {"error": {…}}`, and ends the
//! stream. A stream whose first event is a `message` ends after it. Idle
//! streams get a `: keep-alive` comment every 15 s ([`RestLayer::keep_alive`]).
//!
//! Each call under the prefix runs in an `a2a.rest` span with fields
//! `operation` and, on error, `error` (the ErrorKind reason, never error text).
//!
//! # Example
//!
//! Both bindings over one core: JSON-RPC at `/rpc`, HTTP+JSON under `/a2a`.
//! Either layer takes the other's service as its fallback.
//!
//! ```
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, JsonRpcLayer, Operation, RestLayer};
//! use a2a_tower::types::{AgentCard, AgentInterface, Task};
//! use http_body_util::{BodyExt, Empty};
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let card = AgentCard::new("Echo", "Answers GetTask", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost:8080/rpc"))
//!     .with_interface(AgentInterface::http_json("http://localhost:8080/a2a"));
//! let core = tower::service_fn(|req: A2aRequest| async move {
//!     match req.operation {
//!         Operation::GetTask(r) => Ok(A2aResponse::Task(Task { id: r.id, ..Default::default() })),
//!         _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
//!     }
//! });
//! let rest = RestLayer::new(&card)?.layer(core.clone());
//! let svc = JsonRpcLayer::new(&card)?.fallback(rest).layer(core);
//!
//! let req = http::Request::get("/a2a/tasks/t%2D1?historyLength=0").body(Empty::<bytes::Bytes>::new())?;
//! let res = svc.clone().oneshot(req).await?;
//! assert_eq!(res.status(), 200);
//! let body = res.into_body().collect().await?.to_bytes();
//! assert_eq!(&body[..], br#"{"id":"t-1","contextId":"","status":{"state":"TASK_STATE_UNSPECIFIED"}}"#);
//!
//! let req = http::Request::get("/a2a/nowhere").body(Empty::<bytes::Bytes>::new())?;
//! let res = svc.oneshot(req).await?;
//! assert_eq!(res.status(), 404);
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["error"]["details"][0]["reason"], "METHOD_NOT_FOUND");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod binding;
mod query;
mod routes;
mod verbs;

pub use crate::binding::service::ResponseFuture;
pub use binding::RestCodec;

/// Serves the card's HTTP+JSON interface over a core
/// [`A2aService`](crate::A2aService): the generic
/// [`BindingLayer`](crate::binding::BindingLayer) filled with [`RestCodec`]; see
/// the [module docs](self).
pub type RestLayer<F = crate::NotFound> = crate::binding::BindingLayer<RestCodec, F>;

/// The HTTP+JSON binding over a core `S`, other requests to the
/// fallback `F`: the generic [`BindingService`](crate::binding::BindingService)
/// filled with [`RestCodec`]. Built by [`RestLayer`].
pub type RestService<S, F = crate::NotFound> = crate::binding::BindingService<RestCodec, S, F>;
