//! The A2A client: [`A2aClient`], a `Service<A2aRequest>` over any HTTP
//! `Service`, the mirror of the server's core.
//!
//! - [`ClientBuilder`] checks the configuration at construction (card URL,
//!   timeouts, sizes, allowed origins) and gives a [`Connector`];
//! - [`CardResolver`] fetches the card with limits of its own (time, size,
//!   origin) and caches it (ETag, `Cache-Control`);
//! - [`Transport`] picks the first JSON-RPC or HTTP+JSON interface (with the
//!   feature `grpc`, also GRPC: [`grpc`]) of the card that speaks A2A 1.0
//!   (or the one a caller insists on); RPC interfaces must be on the card's
//!   [`Origin`] or an allowed one;
//! - [`credentials`] places what the card's security requirements ask for
//!   (from the host's [`CredentialSource`]) on the calls, on the card's
//!   origin and the allowed ones only;
//! - [`A2aClient`] encodes each [`Operation`](crate::Operation) for that
//!   binding (always with `A2A-Version: 1.0`), decodes answers and SSE
//!   streams ([`sse`]) back, and returns remote protocol errors complete.
//!
//! The default HTTP service ([`HttpClient`]) is hyper-util's client, HTTP/1.1
//! over TCP or TLS (rustls, webpki roots); any other `Service` can replace it
//! through [`ClientBuilder::http`]. Host layers (auth, retries, timeouts)
//! wrap that service, or the client itself as an `A2aService`.
//!
//! Uses the wire model, the protocol core, `http` and an HTTP client; never
//! the server's engine or task logs.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_tower::client::{A2aClient, Transport};
//! use a2a_tower::types::GetTaskRequest;
//! use a2a_tower::{A2aRequest, Operation};
//! use tower::ServiceExt;
//!
//! let client = A2aClient::builder("http://localhost:8080/.well-known/agent-card.json")
//!     .transport(Transport::JsonRpc)
//!     .build()?
//!     .connect()
//!     .await?;
//! let get = GetTaskRequest { id: "t-1".into(), ..Default::default() };
//! let task = client.oneshot(A2aRequest::new(Operation::GetTask(get))).await;
//! # let _ = task;
//! # Ok(()) }
//! ```

mod builder;
mod card;
pub mod credentials;
#[cfg(feature = "grpc")]
pub mod grpc;
mod http;
#[cfg(feature = "signing")]
mod jku;
mod origin;
mod request;
mod response;
mod resume;
mod service;
pub mod sse;
mod transport;
#[cfg(feature = "signing")]
mod trust;

pub use builder::{
    ClientBuilder, Connector, DEFAULT_CARD_TIMEOUT, DEFAULT_MAX_CARD_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES, HttpClient,
};
pub use card::CardResolver;
pub use credentials::{
    ClientSecret, Credential, CredentialPlan, CredentialSource, Credentials, CredentialsLayer,
    CredentialsService,
};
pub use http::HttpService;
pub use origin::Origin;
pub use resume::{DEFAULT_RESUME_ATTEMPTS, DEFAULT_RESUME_BACKOFF};
pub use service::{A2aClient, ResponseFuture};
pub use transport::Transport;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use trust::CardTrust;
