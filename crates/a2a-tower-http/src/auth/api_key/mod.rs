//! API key authentication ([`ApiKeyLayer`], feature `auth-api-key`): a key
//! in a header, query parameter or cookie, looked up in the host's table of
//! keys, each mapped to a principal of the host's type `P`, which goes into
//! the request extensions for `Authority::principal` and the agent.
//!
//! Keys are compared in constant time (every key of the table is compared,
//! each without an early exit; only a key's length can show). A request
//! without the key gets `401` with `WWW-Authenticate: ApiKey in="…",
//! name="…"`; with an unknown key, the same challenge with
//! `error="invalid_key"` (no registered HTTP scheme exists for API keys, so
//! the challenge names the placement the card declares). The card
//! declares an `apiKey` scheme with the same placement and name (see
//! [`SecuredLayer`](super::SecuredLayer)).
//!
//! ```
//! use a2a_tower::auth::api_key::ApiKeyLayer;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! #[derive(Clone)]
//! struct Caller(&'static str);
//! let layer = ApiKeyLayer::query("api_key").key("s3cret", Caller("alice"));
//! let app = layer.layer(tower::service_fn(|req: http::Request<String>| async move {
//!     let who = req.extensions().get::<Caller>().map(|c| c.0).unwrap_or("nobody");
//!     Ok::<_, std::convert::Infallible>(http::Response::new(who.to_owned()))
//! }));
//! let res = app.clone().oneshot(http::Request::get("/?api_key=s3cret").body(String::new())?).await?;
//! assert_eq!(res.status(), 200);
//! let res = app.oneshot(http::Request::get("/?api_key=guess").body(String::new())?).await?;
//! assert_eq!(res.status(), 401);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod layer;
mod service;

pub use self::layer::ApiKeyLayer;
pub use self::service::ApiKeyService;

crate::plumbing::future::opaque_future! {
    /// Response future of [`ApiKeyService`].
    pub type ResponseFuture<F> = crate::plumbing::future::EdgeFuture<F>;
}
