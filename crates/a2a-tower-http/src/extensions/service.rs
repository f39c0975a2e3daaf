//! [`ExtensionsService`]: extension activation.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use tower_service::Service;

use super::A2A_EXTENSIONS;
use super::ResponseFuture;
use super::layer::Config;
use crate::plumbing::routes::error_response;
use crate::{A2aError, ActivatedExtensions, Body, BoxError, ErrorKind};

/// Activates extensions; built by [`ExtensionsLayer`](super::ExtensionsLayer).
#[derive(Debug, Clone)]
pub struct ExtensionsService<S> {
    inner: S,
    config: Arc<Config>,
}

/// The requested URIs across every `A2A-Extensions` line: trimmed, non-empty,
/// first occurrence kept. Lines that are not visible ASCII are ignored.
fn requested(headers: &HeaderMap) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let uris = headers
        .get_all(A2A_EXTENSIONS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|u| !u.is_empty());
    for uri in uris {
        if !out.contains(&uri) {
            out.push(uri);
        }
    }
    out
}

impl Config {
    /// The activated URIs (requested and declared, in request order), or
    /// ExtensionSupportRequired naming the required ones not requested.
    fn activate(&self, headers: &HeaderMap) -> Result<Vec<String>, A2aError> {
        let activated: Vec<String> = requested(headers)
            .into_iter()
            .filter(|u| self.declared.iter().any(|d| d == u))
            .map(str::to_owned)
            .collect();
        let missing: Vec<&str> = self
            .required
            .iter()
            .filter(|r| !activated.contains(r))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            Ok(activated)
        } else {
            Err(A2aError::new(ErrorKind::ExtensionSupportRequired)
                .with_metadata("requiredExtensions", missing.join(", ")))
        }
    }
}

impl<S> ExtensionsService<S> {
    pub(super) fn new(inner: S, config: Arc<Config>) -> Self {
        Self { inner, config }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

impl<S, B, ResBody> Service<Request<B>> for ExtensionsService<S>
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
        let Some(binding) = self.config.routes.binding_of(&req) else {
            return ResponseFuture::inner(self.inner.call(req), None);
        };
        match self.config.activate(req.headers()) {
            Ok(activated) => {
                // Declared URIs were checked to be visible ASCII when the layer
                // was built, so the joined value is valid header text.
                let header = (!activated.is_empty())
                    .then(|| HeaderValue::from_str(&activated.join(", ")).ok())
                    .flatten();
                req.extensions_mut().insert(ActivatedExtensions(activated));
                ResponseFuture::inner(self.inner.call(req), header)
            }
            Err(err) => {
                tracing::debug!(kind = %err.kind(), "required extension not activated");
                ResponseFuture::refused(error_response(binding, &err))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    #[test]
    fn requested_is_split_trimmed_and_deduplicated() {
        let mut h = HeaderMap::new();
        h.append(A2A_EXTENSIONS, HeaderValue::from_static(" urn:b ,urn:a,, "));
        h.append(A2A_EXTENSIONS, HeaderValue::from_static("urn:c, urn:b"));
        h.append(
            A2A_EXTENSIONS,
            HeaderValue::from_bytes(b"urn:\xff").unwrap(),
        );
        assert_eq!(requested(&h), ["urn:b", "urn:a", "urn:c"]);
        assert!(requested(&HeaderMap::new()).is_empty());
    }

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn service_and_future_are_send_and_sync() {
        type Inner = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;
        type Fut = ResponseFuture<std::future::Ready<Result<Response<Body>, Infallible>>>;
        assert_send::<ExtensionsService<Inner>>();
        assert_sync::<ExtensionsService<Inner>>();
        assert_send::<Fut>();
    }
}
