//! [`VersionService`]: the version check.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, Request, Response};
use tower_service::Service;

use super::ResponseFuture;
use super::layer::Config;
use crate::plumbing::future::EdgeFuture;
use crate::plumbing::routes::{Binding, error_response};
use crate::{A2aError, Body, BoxError, ErrorKind, ProtocolVersion};

/// The query parameter carrying the requested version.
const A2A_VERSION: &str = "A2A-Version";
/// The header carrying it, as a name (a lookup by `&str` parses the name
/// on every request).
const A2A_VERSION_HEADER: HeaderName = HeaderName::from_static("a2a-version");

/// Checks `A2A-Version`; built by [`VersionLayer`](super::VersionLayer).
#[derive(Debug, Clone)]
pub struct VersionService<S> {
    inner: S,
    config: Arc<Config>,
}

/// What the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requested {
    /// No header and no query parameter, or only empty ones.
    Missing,
    /// A `Major.Minor[.Patch]` value.
    Version(ProtocolVersion),
    /// Anything else.
    Malformed,
}

fn parse(text: &str) -> Requested {
    text.parse()
        .map_or(Requested::Malformed, Requested::Version)
}

/// The first `A2A-Version` query parameter (name matched case-insensitively,
/// as service parameter names are). The value is not percent-decoded: a
/// version needs no escaping, and an escaped one is refused as malformed.
fn query_param(query: &str) -> Option<&str> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        name.eq_ignore_ascii_case(A2A_VERSION).then_some(value)
    })
}

/// The requested version: header first, then the query parameter.
fn requested(headers: &HeaderMap, query: Option<&str>) -> Requested {
    if let Some(value) = headers.get(A2A_VERSION_HEADER) {
        match value.to_str() {
            Ok(text) if !text.trim().is_empty() => return parse(text),
            Ok(_) => {}
            Err(_) => return Requested::Malformed,
        }
    }
    match query.and_then(query_param) {
        Some(text) if !text.trim().is_empty() => parse(text),
        _ => Requested::Missing,
    }
}

fn joined(versions: &[ProtocolVersion]) -> String {
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Config {
    fn supported(&self, binding: Binding) -> &[ProtocolVersion] {
        match binding {
            Binding::JsonRpc => &self.jsonrpc,
            Binding::Rest => &self.rest,
            #[cfg(feature = "grpc")]
            Binding::Grpc => &self.grpc,
        }
    }

    /// The negotiated version, or VersionNotSupported naming what was asked
    /// for and what is served (crate-generated text only).
    fn negotiate(
        &self,
        binding: Binding,
        requested: Requested,
    ) -> Result<ProtocolVersion, A2aError> {
        let supported = self.supported(binding);
        // The list is only for the error's text: not built for a request
        // that is served (every one of them, nearly).
        let version = match requested {
            Requested::Version(v) => v,
            Requested::Missing if self.lenient => ProtocolVersion::V1_0,
            Requested::Missing => ProtocolVersion::V0_3,
            Requested::Malformed => {
                let list = joined(supported);
                return Err(A2aError::new(ErrorKind::VersionNotSupported)
                    .with_message(format!(
                        "A2A-Version is not a Major.Minor version; supported: {list}"
                    ))
                    .with_metadata("supportedVersions", list));
            }
        };
        if supported.contains(&version) {
            return Ok(version);
        }
        let list = joined(supported);
        let message = if requested == Requested::Missing {
            format!("A2A-Version is missing, which means {version}; supported: {list}")
        } else {
            format!("Protocol version {version} is not supported; supported: {list}")
        };
        Err(A2aError::new(ErrorKind::VersionNotSupported)
            .with_message(message)
            .with_metadata("requestedVersion", version.to_string())
            .with_metadata("supportedVersions", list))
    }
}

impl<S> VersionService<S> {
    pub(super) fn new(inner: S, config: Arc<Config>) -> Self {
        Self { inner, config }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

impl<S, B, ResBody> Service<Request<B>> for VersionService<S>
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
            return EdgeFuture::inner(self.inner.call(req)).into();
        };
        let asked = requested(req.headers(), req.uri().query());
        match self.config.negotiate(binding, asked) {
            Ok(version) => {
                req.extensions_mut().insert(version);
                EdgeFuture::inner(self.inner.call(req)).into()
            }
            Err(err) => {
                tracing::debug!(kind = %err.kind(), "A2A-Version refused");
                EdgeFuture::ready(error_response(binding, &err)).into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(A2A_VERSION, HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    #[test]
    fn header_first_then_query() {
        let v1 = Requested::Version(ProtocolVersion::V1_0);
        let v03 = Requested::Version(ProtocolVersion::V0_3);
        assert_eq!(requested(&headers(&[b"1.0"]), Some("A2A-Version=0.3")), v1);
        assert_eq!(requested(&headers(&[]), Some("x=1&A2A-Version=0.3")), v03);
        assert_eq!(requested(&headers(&[b" "]), Some("a2a-version=1.0")), v1);
        assert_eq!(
            requested(&headers(&[]), Some("A2A-Version=")),
            Requested::Missing
        );
        assert_eq!(
            requested(&headers(&[]), Some("A2A-Version")),
            Requested::Missing
        );
        assert_eq!(requested(&headers(&[]), None), Requested::Missing);
        assert_eq!(requested(&headers(&[b"1.0.7"]), None), v1);
        assert_eq!(requested(&headers(&[b"abc"]), None), Requested::Malformed);
        assert_eq!(
            requested(&headers(&[b"\xff1.0"]), None),
            Requested::Malformed
        );
        assert_eq!(
            requested(&headers(&[]), Some("A2A-Version=1%2E0")),
            Requested::Malformed
        );
    }

    #[test]
    fn query_param_takes_the_first_match() {
        assert_eq!(query_param("A2A-Version=1.0&A2A-Version=0.3"), Some("1.0"));
        assert_eq!(query_param("a=b"), None);
        assert_eq!(query_param(""), None);
    }

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn service_and_future_are_send_and_sync() {
        type Inner = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;
        type Fut = ResponseFuture<std::future::Ready<Result<Response<Body>, Infallible>>>;
        assert_send::<VersionService<Inner>>();
        assert_sync::<VersionService<Inner>>();
        assert_send::<Fut>();
    }
}
