//! Bearer JWT authentication ([`JwtLayer`], feature `auth-jwt`): a JWS
//! compact token in `Authorization: Bearer`, signed with ES256, RS256 or
//! EdDSA by a key of the host's JWKS (never `none`, never HMAC), with the
//! issuer and audience the layer names, an `exp` in the future and any
//! `nbf` in the past (both within the clock skew, 60 s by default).
//!
//! The keys are a [`Jwks`], which the host may keep and replace (key
//! rotation, or a refreshed copy of its issuer's JWKS URL).
//!
//! A valid token's claims go into the request extensions as [`JwtClaims`],
//! the principal `Authority::principal` reads. A request without a bearer
//! token gets `401` with `WWW-Authenticate: Bearer` (RFC 6750 §3.1), one
//! with a bad token `Bearer error="invalid_token", error_description=...`.
//! The card declares the scheme as HTTP `Bearer`, format `JWT` (see
//! [`SecuredLayer`](super::SecuredLayer)).
//!
//! ```
//! use a2a_tower::auth::jwt::{JwtClaims, JwtLayer};
//! use a2a_tower::signing::VerifyingKey;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let jwks = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1",
//!   "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
//! let keys = VerifyingKey::parse_all(jwks, None)?;
//! let layer = JwtLayer::new(keys, "https://issuer.example", "https://agent.example");
//! let app = layer.layer(tower::service_fn(|req: http::Request<String>| async move {
//!     let who = req.extensions().get::<JwtClaims>().and_then(|c| c.subject().map(str::to_owned));
//!     Ok::<_, std::convert::Infallible>(http::Response::new(who.unwrap_or_default()))
//! }));
//! let res = app.oneshot(http::Request::post("/").body(String::new())?).await?;
//! assert_eq!(res.status(), 401);
//! assert_eq!(res.headers()["www-authenticate"], "Bearer");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod jwks;
mod layer;
mod service;
mod token;

pub use self::jwks::Jwks;
pub use self::layer::JwtLayer;
pub use self::service::JwtService;
pub use self::token::JwtClaims;

crate::plumbing::future::opaque_future! {
    /// Response future of [`JwtService`].
    pub type ResponseFuture<F> = crate::plumbing::future::EdgeFuture<F>;
}
