//! [`BodyLimitService`]: the body limit service.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Limited;
use tower_service::Service;

use super::ResponseFuture;
use crate::plumbing::future::EdgeFuture;
use crate::plumbing::routes::{Routes, error_response};
use crate::{A2aError, Body, BoxError, ErrorKind};

/// Bounds request bodies; built by [`BodyLimitLayer`](super::BodyLimitLayer).
#[derive(Debug, Clone)]
pub struct BodyLimitService<S> {
    inner: S,
    routes: Arc<Routes>,
    max: usize,
}

impl<S> BodyLimitService<S> {
    pub(super) fn new(inner: S, routes: Arc<Routes>, max: usize) -> Self {
        Self { inner, routes, max }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);

    /// The declared size of the body, from `Content-Length` or else an exact
    /// size hint, is over the limit.
    fn declared_too_large<B: http_body::Body>(&self, req: &Request<B>) -> bool {
        let max = u64::try_from(self.max).unwrap_or(u64::MAX);
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        match declared {
            Some(n) => n > max,
            None => req.body().size_hint().lower() > max,
        }
    }

    fn refusal<B>(&self, req: &Request<B>) -> Response<Body> {
        let kind = ErrorKind::PayloadTooLarge;
        tracing::debug!(%kind, limit = self.max, "request body refused");
        match self.routes.binding_of(req) {
            Some(binding) => error_response(binding, &A2aError::new(kind)),
            None => {
                let mut res = Response::new(Body::empty());
                *res.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
                res
            }
        }
    }
}

impl<S, B, ResBody> Service<Request<B>> for BodyLimitService<S>
where
    S: Service<Request<Limited<B>>, Response = Response<ResBody>>,
    B: http_body::Body,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if self.declared_too_large(&req) {
            return EdgeFuture::ready(self.refusal(&req)).into();
        }
        let max = self.max;
        EdgeFuture::inner(self.inner.call(req.map(|b| Limited::new(b, max)))).into()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http_body_util::{BodyExt, Full};
    use tower::{ServiceExt, service_fn};

    use super::*;
    use crate::BodyLimitLayer;
    use crate::types::{AgentCard, AgentInterface};
    use tower_layer::Layer;

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn service_and_future_are_send_and_sync() {
        type Svc = BodyLimitService<
            tower::util::BoxCloneSyncService<Request<Limited<Body>>, Response<Body>, Infallible>,
        >;
        assert_send::<Svc>();
        assert_sync::<Svc>();
        assert_send::<ResponseFuture<std::future::Ready<Result<Response<Body>, Infallible>>>>();
    }

    #[tokio::test]
    async fn exact_size_hint_over_the_limit_is_refused_without_a_header() {
        let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/"));
        let layer = BodyLimitLayer::new(&card).unwrap().max_bytes(3).unwrap();
        let svc = layer.layer(service_fn(|_: Request<Limited<Full<Bytes>>>| async {
            Ok::<_, Infallible>(Response::new(Body::empty()))
        }));
        let req = Request::post("/message:send")
            .body(Full::new(Bytes::from_static(b"four")))
            .unwrap();
        let res = svc.oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let v: serde_json::Value =
            serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    }

    #[tokio::test]
    async fn unparsable_content_length_is_left_to_the_body_limit() {
        let card = AgentCard::default();
        let layer = BodyLimitLayer::new(&card).unwrap().max_bytes(3).unwrap();
        let svc = layer.layer(service_fn(
            |req: Request<Limited<Full<Bytes>>>| async move {
                let read = req.into_body().collect().await.is_ok();
                Ok::<_, Infallible>(Response::new(Body::from(if read {
                    "read"
                } else {
                    "limited"
                })))
            },
        ));
        let req = Request::post("/x")
            .header(header::CONTENT_LENGTH, "lots")
            .body(Full::new(Bytes::from_static(b"ab")))
            .unwrap();
        let res = svc.oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(
            &res.into_body().collect().await.unwrap().to_bytes()[..],
            b"read"
        );
    }
}
