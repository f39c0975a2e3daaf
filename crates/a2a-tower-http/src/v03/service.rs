//! [`V03Service`]: a 0.3 request in, the 1.0 request to the stack inside,
//! its 1.0 answer back out as 0.3.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Limited, StreamBody};
use serde_json::{Value, json};
use tower_service::Service;

use super::sse::SseMap;
use crate::plumbing::routes::{Binding, Routes, WELL_KNOWN_CARD_PATH};
use crate::v03::codec::{card, rest, rpc};
use crate::{A2aError, Body, BoxError, ErrorKind, OperationKind};

/// What the layer was built with.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) routes: Routes,
    pub(super) max_body: usize,
}

/// Serves A2A 0.3 beside 1.0; built by [`V03Layer`](super::V03Layer).
#[derive(Debug, Clone)]
pub struct V03Service<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> V03Service<S> {
    pub(super) fn new(inner: S, config: Arc<Config>) -> Self {
        Self { inner, config }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

/// The future of [`V03Service`].
pub type ResponseFuture<E> = Pin<Box<dyn Future<Output = Result<Response<Body>, E>> + Send>>;

const VERSION: &str = "a2a-version";
const V10: HeaderValue = HeaderValue::from_static("1.0");

/// A request without `A2A-Version` (header or query), or asking for 0.3.
fn is_v03(headers: &HeaderMap, query: Option<&str>) -> bool {
    let asked = headers
        .get(VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            query?.split('&').find_map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (name.eq_ignore_ascii_case(VERSION) && !value.is_empty()).then(|| value.to_owned())
            })
        });
    asked.is_none_or(|v| v == "0.3" || v.starts_with("0.3."))
}

impl<S, B, RB> Service<Request<B>> for V03Service<S>
where
    S: Service<Request<Body>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let config = self.config.clone();
        let req = req.map(Body::new);
        Box::pin(handle(inner, config, req))
    }
}

async fn handle<S, RB>(
    mut inner: S,
    config: Arc<Config>,
    req: Request<Body>,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<RB>>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    let path = req.uri().path().to_owned();
    if req.method() == Method::GET && path.ends_with(WELL_KNOWN_CARD_PATH) {
        let res = inner.call(req).await?.map(Body::new);
        return Ok(card_response(res).await);
    }
    let grpc = req
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    if grpc || !is_v03(req.headers(), req.uri().query()) {
        return Ok(inner.call(req).await?.map(Body::new));
    }
    match config.routes.resolve(&path) {
        Some((Binding::JsonRpc, _)) if req.method() == Method::POST => {
            jsonrpc(inner, &config, req).await
        }
        Some((Binding::Rest, suffix)) => match rest::route_to_v10(req.method(), suffix) {
            Some((kind, v10)) => {
                let new_path = format!("{}{v10}", &path[..path.len() - suffix.len()]);
                http_json(inner, &config, req, kind, new_path).await
            }
            None => Ok(inner.call(req).await?.map(Body::new)),
        },
        _ => Ok(inner.call(req).await?.map(Body::new)),
    }
}

/// The request's body, at most `max` bytes.
async fn read(body: Body, max: usize) -> Result<Bytes, A2aError> {
    match Limited::new(body, max).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(A2aError::new(ErrorKind::PayloadTooLarge))
        }
        Err(_) => Err(A2aError::new(ErrorKind::InvalidRequest)),
    }
}

/// The 1.0 request's head: `A2A-Version: 1.0`, the 0.3
/// `X-A2A-Extensions` as `A2A-Extensions`, no stale length.
fn to_v10_head(headers: &mut HeaderMap) {
    headers.insert(VERSION, V10);
    headers.remove(header::CONTENT_LENGTH);
    let legacy: Vec<HeaderValue> = headers
        .get_all("x-a2a-extensions")
        .iter()
        .cloned()
        .collect();
    if !headers.contains_key("a2a-extensions") {
        for v in legacy {
            headers.append("a2a-extensions", v);
        }
    }
}

/// The 0.3 answer's head: `X-A2A-Extensions` beside `A2A-Extensions`.
fn to_v03_head(headers: &mut HeaderMap) {
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::ETAG);
    let activated: Vec<HeaderValue> = headers.get_all("a2a-extensions").iter().cloned().collect();
    for v in activated {
        headers.append("x-a2a-extensions", v);
    }
}

fn is_sse<B>(res: &Response<B>) -> bool {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// A JSON answer rewritten by `f` (a body that is not JSON passes as it is).
async fn rewrite_json(res: Response<Body>, f: impl FnOnce(Value) -> Value) -> Response<Body> {
    let (mut parts, body) = res.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => {
            let err = A2aError::new(ErrorKind::Internal);
            return crate::plumbing::routes::rest_error_response(&err);
        }
    };
    to_v03_head(&mut parts.headers);
    let out = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => Bytes::from(serde_json::to_vec(&f(v)).unwrap_or_default()),
        Err(_) => bytes,
    };
    Response::from_parts(parts, Body::full(out))
}

fn rewrite_sse(
    res: Response<Body>,
    f: impl Fn(Option<&str>, Value) -> Value + Send + Sync + 'static,
) -> Response<Body> {
    let (mut parts, body) = res.into_parts();
    to_v03_head(&mut parts.headers);
    let stream = SseMap::new(body, Box::new(f));
    Response::from_parts(parts, Body::new(StreamBody::new(stream)))
}

async fn card_response(res: Response<Body>) -> Response<Body> {
    if res.status() != StatusCode::OK {
        return res;
    }
    rewrite_json(res, |c| card::card_from_v10(&c)).await
}

async fn jsonrpc<S, RB>(
    mut inner: S,
    config: &Config,
    req: Request<Body>,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<RB>>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    let bytes = match read(body, config.max_body).await {
        Ok(b) => b,
        Err(e) => {
            return Ok(crate::plumbing::routes::jsonrpc_error_response(
                &Value::Null,
                &e,
            ));
        }
    };
    to_v10_head(&mut parts.headers);
    let envelope = serde_json::from_slice::<Value>(&bytes).ok();
    let call = envelope.as_ref().and_then(|v| {
        let method = v.get("method")?.as_str()?;
        Some((method.to_owned(), rpc::method_to_v10(method)?, v))
    });
    // Not a 0.3 method (or not JSON): the 1.0 stack answers it as it is.
    let Some((method, v10, env)) = call else {
        let res = inner
            .call(Request::from_parts(parts, Body::full(bytes)))
            .await?;
        return Ok(res.map(Body::new));
    };
    let id = env.get("id").cloned();
    let params = rpc::params_to_v10(&method, env.get("params").unwrap_or(&Value::Null));
    let mut out = json!({"jsonrpc": "2.0", "method": v10, "params": params});
    if let Some(id) = &id {
        out["id"] = id.clone();
    }
    let body = Body::full(serde_json::to_vec(&out).unwrap_or_default());
    let res = inner
        .call(Request::from_parts(parts, body))
        .await?
        .map(Body::new);
    let answer = move |mut v: Value| {
        if let Some(r) = v.get("result") {
            v["result"] = rpc::result_from_v10(&method, r);
        }
        if let (Some(id), Some(o)) = (&id, v.as_object_mut()) {
            o.insert("id".into(), id.clone());
        }
        v
    };
    if is_sse(&res) {
        Ok(rewrite_sse(res, move |_, v| answer(v)))
    } else {
        Ok(rewrite_json(res, answer).await)
    }
}

/// A 1.0 HTTP+JSON error body as the 0.3 one (`code`, `message`).
fn rest_error(v: &Value) -> Value {
    match A2aError::from_wire(v) {
        Some(e) => json!({"code": e.kind().jsonrpc_code(), "message": e.message()}),
        None => v.clone(),
    }
}

async fn http_json<S, RB>(
    mut inner: S,
    config: &Config,
    req: Request<Body>,
    kind: OperationKind,
    path: String,
) -> Result<Response<Body>, S::Error>
where
    S: Service<Request<Body>, Response = Response<RB>>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    let bytes = match read(body, config.max_body).await {
        Ok(b) => b,
        Err(e) => {
            let res = crate::plumbing::routes::rest_error_response(&e);
            return Ok(rewrite_json(res, |v| rest_error(&v)).await);
        }
    };
    to_v10_head(&mut parts.headers);
    let uri = match parts.uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.clone(),
    };
    if let Ok(uri) = uri.parse::<Uri>() {
        parts.uri = uri;
    }
    let body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) if !bytes.is_empty() => {
            let v10 = rest::request_to_v10(kind, &path, &v);
            Bytes::from(serde_json::to_vec(&v10).unwrap_or_default())
        }
        _ => bytes,
    };
    let res = inner
        .call(Request::from_parts(parts, Body::full(body)))
        .await?
        .map(Body::new);
    if is_sse(&res) {
        return Ok(rewrite_sse(res, move |name, v| match name {
            Some("error") => rest_error(&v),
            _ => rest::response_from_v10(kind, &v),
        }));
    }
    if res.status().is_success() {
        Ok(rewrite_json(res, |v| rest::response_from_v10(kind, &v)).await)
    } else {
        Ok(rewrite_json(res, |v| rest_error(&v)).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_requests_are_v03() {
        let mut h = HeaderMap::new();
        assert!(is_v03(&h, None));
        assert!(is_v03(&h, Some("x=1")));
        assert!(!is_v03(&h, Some("A2A-Version=1.0")));
        h.insert(VERSION, HeaderValue::from_static("0.3"));
        assert!(is_v03(&h, None));
        h.insert(VERSION, HeaderValue::from_static("1.0"));
        assert!(!is_v03(&h, None));
        h.insert(VERSION, HeaderValue::from_static(" "));
        assert!(is_v03(&h, None));
    }

    #[test]
    fn rest_errors_carry_the_code() {
        let e = A2aError::task_not_found("t");
        let v = rest_error(&e.to_rest_error());
        assert_eq!(v["code"], -32001);
        assert!(v["message"].is_string());
    }
}
