//! [`JwtService`]: checks the bearer token, inserts its claims.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, header};
use tower_service::Service;

use super::ResponseFuture;
use super::layer::JwtConfig;
use super::token::{now, validate};
use crate::plumbing::future::EdgeFuture;
use crate::{Body, BoxError};

/// Checks bearer JWTs; built by [`JwtLayer`](super::JwtLayer).
#[derive(Debug, Clone)]
pub struct JwtService<S> {
    inner: S,
    config: Arc<JwtConfig>,
}

impl<S> JwtService<S> {
    pub(super) fn new(inner: S, config: Arc<JwtConfig>) -> Self {
        Self { inner, config }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

/// The token of an `Authorization: Bearer` header (scheme case-insensitive).
fn bearer<B>(req: &Request<B>) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

impl<S, B, ResBody> Service<Request<B>> for JwtService<S>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let refusals = &self.config.refusals;
        let Some(token) = bearer(&req) else {
            return EdgeFuture::ready(refusals.refuse(&req, "Bearer")).into();
        };
        match validate(&self.config, token, now()) {
            Ok(claims) => {
                req.extensions_mut().insert(claims);
                EdgeFuture::inner(self.inner.call(req)).into()
            }
            Err(invalid) => {
                tracing::debug!(why = invalid.description(), "bearer token refused");
                let challenge = format!(
                    r#"Bearer error="invalid_token", error_description="{}""#,
                    invalid.description()
                );
                EdgeFuture::ready(refusals.refuse(&req, &challenge)).into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::jwt::JwtLayer;
    use std::convert::Infallible;
    use tower::ServiceExt;
    use tower_layer::Layer;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}

    #[test]
    fn service_and_future_are_send_and_sync() {
        type Inner = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;
        assert_send_sync::<JwtService<Inner>>();
        assert_send_sync::<JwtLayer>();
        assert_send::<
            super::super::ResponseFuture<std::future::Ready<Result<Response<Body>, Infallible>>>,
        >();
    }

    #[tokio::test]
    async fn an_unsigned_token_is_refused_as_invalid() {
        let layer = JwtLayer::new([], "i", "a");
        let svc = layer.layer(tower::service_fn(|_: Request<()>| async {
            Ok::<_, Infallible>(Response::new(Body::empty()))
        }));
        // {"alg":"none"}.{"iss":"i","aud":"a","exp":9999999999}.
        let token = "eyJhbGciOiJub25lIn0.eyJpc3MiOiJpIiwiYXVkIjoiYSIsImV4cCI6OTk5OTk5OTk5OX0.";
        let req = Request::get("/")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap();
        let res = svc.oneshot(req).await.unwrap();
        assert_eq!(res.status(), 401);
        let challenge = res.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{challenge}"
        );
        assert!(challenge.contains("algorithm"), "{challenge}");
    }
}
