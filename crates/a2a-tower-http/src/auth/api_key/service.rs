//! [`ApiKeyService`]: reads the key where the layer says, looks it up in
//! constant time, inserts its principal.

use std::borrow::Cow;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, header};
use tower_service::Service;

use super::ResponseFuture;
use super::layer::{ApiKeyConfig, Location};
use crate::plumbing::future::EdgeFuture;
use crate::{Body, BoxError};

/// Checks API keys; built by [`ApiKeyLayer`](super::ApiKeyLayer).
pub struct ApiKeyService<S, P> {
    inner: S,
    config: Arc<ApiKeyConfig<P>>,
}

impl<S: Clone, P> Clone for ApiKeyService<S, P> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            config: self.config.clone(),
        }
    }
}

impl<S: std::fmt::Debug, P> std::fmt::Debug for ApiKeyService<S, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyService")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, P> ApiKeyService<S, P> {
    pub(super) fn new(inner: S, config: Arc<ApiKeyConfig<P>>) -> Self {
        Self { inner, config }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

/// `%XX` sequences decoded (nothing else: `+` stays `+`).
fn percent_decode(s: &str) -> Cow<'_, [u8]> {
    if !s.contains('%') {
        return Cow::Borrowed(s.as_bytes());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

/// The key the request presents where `config` says, if any.
fn presented<'r, B, P>(req: &'r Request<B>, config: &ApiKeyConfig<P>) -> Option<Cow<'r, [u8]>> {
    let name = config.name.as_str();
    match config.location {
        Location::Header => req.headers().get(name).map(|v| Cow::Borrowed(v.as_bytes())),
        Location::Query => req.uri().query()?.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k).as_ref() == name.as_bytes()).then(|| percent_decode(v))
        }),
        Location::Cookie => req
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|c| {
                let (k, v) = c.trim().split_once('=')?;
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                (k == name).then_some(Cow::Borrowed(v.as_bytes()))
            }),
    }
    .filter(|k| !k.is_empty())
}

/// Equal bytes, compared without an early exit (lengths may show).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// The principal of `key`: every key of the table is compared.
fn lookup<'c, P>(config: &'c ApiKeyConfig<P>, key: &[u8]) -> Option<&'c P> {
    let mut found = None;
    for (k, p) in &config.keys {
        if ct_eq(k, key) && found.is_none() {
            found = Some(p);
        }
    }
    found
}

impl<S, P, B, ResBody> Service<Request<B>> for ApiKeyService<S, P>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
    P: Clone + Send + Sync + 'static,
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
        let config = &*self.config;
        let challenge = format!(
            r#"ApiKey in="{}", name="{}""#,
            config.location.name(),
            config.name
        );
        let Some(key) = presented(&req, config) else {
            return EdgeFuture::ready(config.refusals.refuse(&req, &challenge)).into();
        };
        match lookup(config, &key).cloned() {
            Some(principal) => {
                req.extensions_mut().insert(principal);
                EdgeFuture::inner(self.inner.call(req)).into()
            }
            None => {
                tracing::debug!("api key refused");
                let challenge = format!(r#"{challenge}, error="invalid_key""#);
                EdgeFuture::ready(config.refusals.refuse(&req, &challenge)).into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::convert::Infallible;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}

    #[test]
    fn service_and_future_are_send_and_sync() {
        type Inner = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;
        assert_send_sync::<ApiKeyService<Inner, String>>();
        assert_send_sync::<super::super::ApiKeyLayer<String>>();
        assert_send::<
            super::super::ResponseFuture<std::future::Ready<Result<Response<Body>, Infallible>>>,
        >();
    }

    #[test]
    fn percent_decoding_and_constant_time_equality() {
        assert_eq!(&*percent_decode("a%2Bb+c%zz"), b"a+b+c%zz");
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"abcd"));
    }
}
