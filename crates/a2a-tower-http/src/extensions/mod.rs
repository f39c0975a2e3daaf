//! Activates the protocol extensions a client asks for in `A2A-Extensions`
//! and enforces the card's required ones (a2a-spec.md §1.5).
//!
//! [`ExtensionsLayer`], on the card's JSON-RPC path and under its HTTP+JSON
//! prefix:
//!
//! - reads `A2A-Extensions` as a comma-separated list of URIs, across any
//!   number of header lines; entries are trimmed, empty ones dropped, and
//!   duplicates removed keeping the first;
//! - activates the requested URIs that the card declares in
//!   `capabilities.extensions`, in the client's order; unknown URIs are
//!   ignored, as the spec recommends;
//! - refuses the request with ExtensionSupportRequired (−32008) when an
//!   extension the card marks `required` was not requested: on the JSON-RPC
//!   path HTTP 200 with a JSON-RPC error object (`id: null`); under the REST
//!   prefix HTTP 400, `FAILED_PRECONDITION`, reason `EXTENSION_SUPPORT_REQUIRED`.
//!   The ErrorInfo metadata lists the `requiredExtensions` that are missing;
//! - inserts [`ActivatedExtensions`](crate::ActivatedExtensions) into the
//!   request's extensions (the bindings copy it into the call context) and
//!   sets one comma-joined `A2A-Extensions` header on the response when any
//!   extension was activated.
//!
//! Other paths, and the card endpoint, pass through untouched.
//!
//! # Example
//!
//! ```
//! use a2a_tower::{ExtensionsLayer, ActivatedExtensions};
//! use a2a_tower::types::{AgentCard, AgentExtension, AgentInterface};
//! use http::{Request, Response, StatusCode};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), a2a_tower::BoxError> {
//! let mut card = AgentCard::default().with_interface(AgentInterface::jsonrpc("https://agent.example/"));
//! card.capabilities.extensions.push(AgentExtension {
//!     uri: "https://ext.example/trace/v1".into(),
//!     ..Default::default()
//! });
//! let svc = ServiceBuilder::new()
//!     .layer(ExtensionsLayer::new(&card)?)
//!     .service(service_fn(|req: Request<String>| async move {
//!         let active = req.extensions().get::<ActivatedExtensions>().cloned().unwrap_or_default();
//!         Ok::<_, std::convert::Infallible>(Response::new(active.0.join(" ")))
//!     }));
//!
//! let req = Request::post("/")
//!     .header("A2A-Extensions", "https://ext.example/trace/v1, https://unknown.example/x")
//!     .body(String::new())?;
//! let res = svc.oneshot(req).await?;
//! assert_eq!(res.status(), StatusCode::OK);
//! assert_eq!(res.headers()["A2A-Extensions"], "https://ext.example/trace/v1");
//! # Ok(())
//! # }
//! ```

mod future;
mod layer;
mod service;

pub use self::future::ResponseFuture;
pub use self::layer::ExtensionsLayer;
pub use self::service::ExtensionsService;

/// The former name of [`ExtensionsLayer`].
#[deprecated(note = "renamed to `ExtensionsLayer`")]
pub type A2aExtensionsLayer = ExtensionsLayer;

/// The former name of [`ExtensionsService`].
#[deprecated(note = "renamed to `ExtensionsService`")]
pub type A2aExtensionsService<S> = ExtensionsService<S>;

/// The request and response header listing extension URIs (a name: a
/// lookup by `&str` parses it on every request).
const A2A_EXTENSIONS: http::HeaderName = http::HeaderName::from_static("a2a-extensions");
