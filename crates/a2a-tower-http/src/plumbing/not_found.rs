//! [`NotFound`]: the default fallback of the binding layers, for requests on
//! paths that belong to no binding.

use std::convert::Infallible;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use tower_service::Service;

use crate::Body;

/// The default fallback: `404 Not Found` for a path that is no A2A
/// endpoint of the stack, with a `google.rpc.Status` JSON body that says so
/// ([`NotFound::BODY`]). It carries no A2A `ErrorInfo`: the request reached
/// no binding, so no operation failed, and a client must not read it as
/// `TaskNotFound` or any other A2A error.
///
/// ```
/// use a2a_tower::NotFound;
/// use http_body_util::BodyExt;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), a2a_tower::BoxError> {
/// let res = NotFound.oneshot(http::Request::new(String::new())).await?;
/// assert_eq!(res.status(), http::StatusCode::NOT_FOUND);
/// assert_eq!(res.headers()["content-type"], "application/json");
/// let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
/// assert_eq!(body["error"]["status"], "NOT_FOUND");
/// assert!(body["error"].get("details").is_none());
/// # Ok(())
/// # }
/// ```
///
/// Replace it with the binding layers' `fallback` method, for example to
/// chain the JSON-RPC and HTTP+JSON bindings over one core.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotFound;

impl<B> Service<Request<B>> for NotFound {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<B>) -> Self::Future {
        let mut res = Response::new(Body::full(Bytes::from_static(Self::BODY.as_bytes())));
        *res.status_mut() = StatusCode::NOT_FOUND;
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        std::future::ready(Ok(res))
    }
}

impl NotFound {
    /// The body of every answer: a `google.rpc.Status` without details.
    pub const BODY: &'static str = r#"{"error":{"code":404,"status":"NOT_FOUND","message":"No A2A endpoint at this path; the agent card lists the interface URLs"}}"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_a_status_without_an_a2a_reason() {
        let v: serde_json::Value = serde_json::from_str(NotFound::BODY).unwrap();
        assert_eq!(v["error"]["code"], 404);
        assert_eq!(v["error"]["status"], "NOT_FOUND");
        assert!(v["error"].get("details").is_none());
    }
}
