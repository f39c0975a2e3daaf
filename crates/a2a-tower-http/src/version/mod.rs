//! Checks the `A2A-Version` of every A2A request and hands the negotiated
//! version to the binding (a2a-spec.md §1.3).
//!
//! [`VersionLayer`], on the card's JSON-RPC path and under its HTTP+JSON
//! prefix:
//!
//! - reads the version from the `A2A-Version` header, else from the
//!   `A2A-Version` query parameter (`?A2A-Version=1.0`); an empty header falls
//!   back to the query parameter;
//! - compares `Major.Minor` only: a patch component (`1.0.2`) is ignored;
//! - treats a missing or empty value as `0.3`, as the spec requires, so a
//!   1.0-only agent refuses a request without the header. The opt-in
//!   [`VersionLayer::lenient`] treats a missing or empty value as `1.0`
//!   instead, for curl and clients that never send the header; it is off by
//!   default;
//! - accepts the versions the card declares (`protocolVersion`) on the
//!   interfaces of the request's binding, and inserts the negotiated
//!   [`ProtocolVersion`](crate::ProtocolVersion) into the request's
//!   extensions, where [`CallContext::from_http_parts`](crate::CallContext::from_http_parts)
//!   finds it;
//! - refuses any other version, and any value that is not `Major.Minor[.Patch]`,
//!   with VersionNotSupported: on the JSON-RPC path HTTP 200 with a JSON-RPC
//!   error object (`code` −32009, `id: null`); under the REST prefix HTTP 400
//!   with `status` `FAILED_PRECONDITION` and reason `VERSION_NOT_SUPPORTED`.
//!   The ErrorInfo metadata names `supportedVersions` and, when it parsed,
//!   the `requestedVersion` (normalised to `Major.Minor`; the client's raw
//!   text is never echoed).
//!
//! Other paths pass through untouched, and the card endpoint
//! (`/.well-known/agent-card.json`) is always exempt, even when the REST
//! prefix is `/`.
//!
//! # Example
//!
//! ```
//! use a2a_tower::{VersionLayer, ProtocolVersion};
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use http::{Request, Response, StatusCode};
//! use http_body_util::BodyExt;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), a2a_tower::BoxError> {
//! let card = AgentCard::default().with_interface(AgentInterface::http_json("https://agent.example/a2a"));
//! let svc = ServiceBuilder::new()
//!     .layer(VersionLayer::new(&card)?)
//!     .service(service_fn(|req: Request<String>| async move {
//!         let v = req.extensions().get::<ProtocolVersion>().copied();
//!         Ok::<_, std::convert::Infallible>(Response::new(format!("{v:?}")))
//!     }));
//!
//! // No header: 0.3, which this card does not serve.
//! let res = svc.clone().oneshot(Request::get("/a2a/tasks/t-1").body(String::new())?).await?;
//! assert_eq!(res.status(), StatusCode::BAD_REQUEST);
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
//!
//! let req = Request::get("/a2a/tasks/t-1").header("A2A-Version", "1.0").body(String::new())?;
//! let res = svc.oneshot(req).await?;
//! assert_eq!(res.status(), StatusCode::OK);
//! # Ok(())
//! # }
//! ```

mod layer;
mod service;

pub use self::layer::VersionLayer;
pub use self::service::VersionService;

/// The former name of [`VersionLayer`].
#[deprecated(note = "renamed to `VersionLayer`")]
pub type A2aVersionLayer = VersionLayer;

/// The former name of [`VersionService`].
#[deprecated(note = "renamed to `VersionService`")]
pub type A2aVersionService<S> = VersionService<S>;

crate::plumbing::future::opaque_future! {
    /// Response future of [`VersionService`].
    pub type ResponseFuture<F> = crate::plumbing::future::EdgeFuture<F>;
}
