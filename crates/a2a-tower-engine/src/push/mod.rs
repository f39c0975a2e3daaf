//! Push notifications (A2A spec §9): every event of a task is POSTed to each
//! of its push configs, by the [`outbox`] (durable: in order per config,
//! after the task's commit, resumed after a crash, one host at a time on a
//! shared PostgreSQL log) through the [`PushSender`] and its SSRF guard.
//!
//! [`PushSender::deliver`] POSTs one [`StreamResponse`] (a task, message,
//! status update or artifact update, as ProtoJSON: the same bytes as a REST
//! SSE event) to one [`TaskPushNotificationConfig`]'s webhook, with
//!
//! - `Content-Type: application/a2a+json`;
//! - `Authorization: <scheme> <credentials>` from the config's
//!   authentication, when it has credentials;
//! - the config's token in both `A2A-Notification-Token` (the spec's name)
//!   and `X-A2A-Notification-Token` (the Python and JS SDKs'), for their
//!   receivers;
//!
//! a per-attempt timeout (10 s by default), bounded retries with exponential
//! backoff and jitter ([`Backoff`]) on timeouts, connection failures, 408,
//! 429 and 5xx (honouring `Retry-After` within the backoff's cap), and no
//! retry on other answers. A failure is a [`PushError`], which never carries
//! the URL, the token or the credentials; neither do the trace spans.
//!
//! The [`WebhookGuard`] is on by default: every address a webhook's host
//! resolves to is [classified](classify), and loopback, private, link-local,
//! unique-local, shared (CGNAT), documentation, multicast, reserved and the
//! IPv6 forms of those (IPv4-mapped, NAT64, 6to4, …) are refused unless an
//! allow-listed [`IpNet`] contains the address. The check is made by the
//! sender's connector on every new connection, which then connects to an
//! address it allowed (no DNS rebinding between check and use), redirect
//! hops included; redirects are followed only on the webhook's own origin
//! (scheme, host and port), so the token and credentials never reach another
//! origin.
//!
//! `deliver` settles one delivery (including its retries) before it
//! returns: awaiting each delivery of a config before the next keeps that
//! config's events in order, and deliveries to different configs run
//! concurrently and never wait for each other.
//!
//! ```no_run
//! use a2a_tower::push::{PushErrorKind, PushSender, WebhookGuard};
//! use a2a_tower::types::{
//!     StreamResponse, TaskPushNotificationConfig, TaskState, TaskStatus, TaskStatusUpdateEvent,
//! };
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // The defaults (guard on, 10 s, 3 retries); a receiver on this host's
//! // loopback has to be allowed explicitly.
//! let sender = PushSender::builder()
//!     .guard(WebhookGuard::new().allow_networks(["127.0.0.0/8"])?)
//!     .build()?;
//! let config = TaskPushNotificationConfig {
//!     id: "cfg-1".into(),
//!     task_id: "task-1".into(),
//!     url: "http://127.0.0.1:9000/a2a/webhook".into(),
//!     token: "per-task-token".into(),
//!     ..Default::default()
//! };
//! let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
//!     task_id: "task-1".into(),
//!     context_id: "ctx-1".into(),
//!     status: TaskStatus::new(TaskState::Working),
//!     metadata: None,
//! });
//! match sender.deliver(&config, &event).await {
//!     Ok(()) => println!("delivered"),
//!     Err(e) if e.kind() == PushErrorKind::Refused => println!("not a permitted webhook: {e}"),
//!     Err(e) => println!("{e}"),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! [`StreamResponse`]: crate::types::StreamResponse
//! [`TaskPushNotificationConfig`]: crate::types::TaskPushNotificationConfig

mod attempt;
mod backoff;
mod builder;
mod classify;
mod connect;
mod error;
mod guard;
mod net;
pub mod outbox;
mod sender;
mod webhook;

pub use backoff::Backoff;
pub use builder::{DEFAULT_MAX_REDIRECTS, DEFAULT_RETRIES, DEFAULT_TIMEOUT, PushSenderBuilder};
pub use classify::{AddressClass, classify};
pub use error::{PushError, PushErrorKind};
pub use guard::WebhookGuard;
pub use net::IpNet;
pub use sender::PushSender;
