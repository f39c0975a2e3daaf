//! [`NotFound`]: the default fallback of the binding layers, for requests on
//! paths that belong to no binding.

use std::convert::Infallible;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode};
use tower_service::Service;

use crate::Body;

/// The default fallback: `404 Not Found` with an empty body.
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
        let mut res = Response::new(Body::empty());
        *res.status_mut() = StatusCode::NOT_FOUND;
        std::future::ready(Ok(res))
    }
}
