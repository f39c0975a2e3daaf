//! Bounds the request body before anything decodes it, answering an oversized
//! request with a 413 shaped for its binding.
//!
//! [`BodyLimitLayer`] (default [`DEFAULT_MAX_BODY_BYTES`], 4 MiB):
//!
//! - refuses a request whose `Content-Length` (or exact size hint) is over the
//!   limit **before** the inner service is called or a byte is read;
//! - wraps every other body in [`http_body_util::Limited`], so a streamed
//!   (chunked) body stops being read at the limit: the inner service sees a
//!   body error ([`http_body_util::LengthLimitError`]) instead of the byte that
//!   would cross it, and never more than the limit.
//!
//! The refusal has the shape of the binding the path belongs to (from the
//! card's interfaces): on the JSON-RPC path, HTTP 413 with a JSON-RPC error
//! object (`id: null`); under the HTTP+JSON prefix, HTTP 413 with the REST
//! `google.rpc.Status` body (`RESOURCE_EXHAUSTED`, reason `PAYLOAD_TOO_LARGE`).
//! Other paths (the card, the host's own routes) get a plain, empty 413 and
//! are otherwise untouched: their bodies are bounded by the same limit.
//!
//! # Why not tower-http's `RequestBodyLimitLayer`
//!
//! It does the same two things (refuse by `Content-Length`, wrap the body in
//! `Limited`), but its 413 is a fixed `text/plain` body that no A2A client can
//! read as a protocol error, and it cannot tell one binding from another. This
//! layer keeps its mechanism (`http_body_util::Limited`) and shapes the answer.
//! A streamed body that crosses the limit surfaces as a body read error in the
//! binding, which recognises it with `is_length_limit` and answers the same
//! binding-shaped 413.
//!
//! # Example
//!
//! ```
//! use a2a_tower::BodyLimitLayer;
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use http::{Request, Response, StatusCode, header};
//! use http_body_util::BodyExt;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), a2a_tower::BoxError> {
//! let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("https://agent.example/rpc"));
//! let svc = ServiceBuilder::new()
//!     .layer(BodyLimitLayer::new(&card)?.max_bytes(16)?)
//!     .service(service_fn(|_req: Request<_>| async {
//!         Ok::<_, std::convert::Infallible>(Response::new(String::from("ok")))
//!     }));
//!
//! let req = Request::post("/rpc")
//!     .header(header::CONTENT_LENGTH, "17")
//!     .body(String::from("x").repeat(17))?;
//! let res = svc.oneshot(req).await?;
//! assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["error"]["code"], -32600);
//! assert_eq!(body["error"]["data"][0]["reason"], "PAYLOAD_TOO_LARGE");
//! # Ok(())
//! # }
//! ```

mod layer;
mod service;

pub use self::layer::{BodyLimitLayer, DEFAULT_MAX_BODY_BYTES};
pub use self::service::BodyLimitService;

/// The former name of [`BodyLimitLayer`].
#[deprecated(note = "renamed to `BodyLimitLayer`")]
pub type A2aBodyLimitLayer = BodyLimitLayer;

/// The former name of [`BodyLimitService`].
#[deprecated(note = "renamed to `BodyLimitService`")]
pub type A2aBodyLimitService<S> = BodyLimitService<S>;

#[cfg(any(feature = "jsonrpc", feature = "rest", feature = "grpc"))]
use crate::BoxError;

/// The error (or one of its `source()`s) is the body limit being crossed
/// ([`http_body_util::LengthLimitError`]), as produced by the `Limited` body
/// this layer hands to the inner service.
///
/// The bindings call this on a failed body read and answer
/// `A2aError::new(ErrorKind::PayloadTooLarge)` through
/// `plumbing::routes::error_response`: the same 413 this layer sends for an oversized
/// `Content-Length`.
#[cfg(any(feature = "jsonrpc", feature = "rest", feature = "grpc"))]
pub(crate) fn is_length_limit(err: &BoxError) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err.as_ref());
    while let Some(e) = cur {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cur = e.source();
    }
    false
}

#[cfg(all(test, any(feature = "jsonrpc", feature = "rest")))]
mod tests {
    use super::*;

    #[test]
    #[allow(deprecated)]
    fn the_former_names_still_build() {
        use crate::types::{AgentCard, AgentInterface};
        let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/"));
        let _: crate::A2aBodyLimitLayer = crate::A2aBodyLimitLayer::new(&card).unwrap();
        let _: crate::A2aVersionLayer = crate::A2aVersionLayer::new(&card).unwrap();
        let _: crate::A2aExtensionsLayer = crate::A2aExtensionsLayer::new(&card).unwrap();
    }
    use std::fmt;

    #[derive(Debug)]
    struct Wrapper(BoxError);
    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("reading the body failed")
        }
    }
    impl std::error::Error for Wrapper {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(self.0.as_ref())
        }
    }

    async fn limit_error() -> BoxError {
        use http_body_util::{BodyExt, Full, Limited};
        let body = Limited::new(Full::new(bytes::Bytes::from_static(b"ab")), 1);
        match body.collect().await {
            Err(e) => e,
            Ok(_) => panic!("a 2-byte body passed a 1-byte limit"),
        }
    }

    #[tokio::test]
    async fn finds_the_limit_error_directly_and_through_sources() {
        let direct = limit_error().await;
        assert!(is_length_limit(&direct));
        let wrapped: BoxError = Box::new(Wrapper(direct));
        assert!(is_length_limit(&wrapped));
        let twice: BoxError = Box::new(Wrapper(wrapped));
        assert!(is_length_limit(&twice));
    }

    #[test]
    fn other_errors_are_not_the_limit() {
        let other: BoxError = "connection reset".into();
        assert!(!is_length_limit(&other));
        let wrapped: BoxError = Box::new(Wrapper(other));
        assert!(!is_length_limit(&wrapped));
    }
}

crate::plumbing::future::opaque_future! {
    /// Response future of [`BodyLimitService`].
    pub type ResponseFuture<F> = crate::plumbing::future::EdgeFuture<F>;
}
