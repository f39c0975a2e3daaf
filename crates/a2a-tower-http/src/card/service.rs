//! [`AgentCardService`]: answers the card path, forwards everything else.

use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use tower_service::Service;

use super::ResponseFuture;
use super::layer::{AgentCardLayer, Frozen};
use crate::plumbing::future::EdgeFuture;
use crate::plumbing::routes::rest_error_response;
use crate::{A2aError, Body, BoxError, ErrorKind};

const ALLOW: HeaderValue = HeaderValue::from_static("GET, HEAD, OPTIONS");
const ALLOW_HEADERS: HeaderValue =
    HeaderValue::from_static("A2A-Version, A2A-Extensions, If-None-Match, If-Modified-Since");
const EXPOSE_HEADERS: HeaderValue = HeaderValue::from_static("ETag");
const ANY_ORIGIN: HeaderValue = HeaderValue::from_static("*");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// Serves the agent card; created by [`AgentCardLayer`].
#[derive(Debug, Clone)]
pub struct AgentCardService<S> {
    inner: S,
    card: AgentCardLayer,
}

impl<S> AgentCardService<S> {
    pub(crate) fn new(inner: S, card: AgentCardLayer) -> Self {
        Self { inner, card }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for AgentCardService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        if req.uri().path() == &*self.card.path {
            EdgeFuture::ready(respond(&self.card, req.method(), req.headers())).into()
        } else {
            EdgeFuture::inner(self.inner.call(req)).into()
        }
    }
}

/// The response for a request to the card path.
fn respond(card: &AgentCardLayer, method: &Method, headers: &HeaderMap) -> Response<Body> {
    let frozen = &card.frozen;
    let mut res = match *method {
        Method::GET | Method::HEAD => {
            let mut res = if not_modified(frozen, headers) {
                status(StatusCode::NOT_MODIFIED, Body::empty())
            } else {
                let len = frozen.bytes.len();
                let body = if method == Method::GET {
                    Body::full(frozen.bytes.clone())
                } else {
                    Body::empty()
                };
                let mut res = status(StatusCode::OK, body);
                let h = res.headers_mut();
                h.insert(header::CONTENT_TYPE, JSON);
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
                res
            };
            let h = res.headers_mut();
            h.insert(header::ETAG, frozen.etag.clone());
            h.insert(header::LAST_MODIFIED, frozen.last_modified.clone());
            h.insert(header::CACHE_CONTROL, card.cache_control.clone());
            if card.cors {
                h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSE_HEADERS);
            }
            res
        }
        Method::OPTIONS => {
            let mut res = status(StatusCode::NO_CONTENT, Body::empty());
            if card.cors {
                let h = res.headers_mut();
                h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW);
                h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS);
            }
            res
        }
        _ => rest_error_response(&A2aError::new(ErrorKind::MethodNotAllowed)),
    };
    let h = res.headers_mut();
    if *method != Method::GET && *method != Method::HEAD {
        h.insert(header::ALLOW, ALLOW);
    }
    if card.cors {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
    }
    res
}

fn status(status: StatusCode, body: Body) -> Response<Body> {
    let mut res = Response::new(body);
    *res.status_mut() = status;
    res
}

/// RFC 9110 §13.1.2 / §13.2.2: `If-None-Match` (weak comparison, lists, `*`)
/// decides when present; otherwise `If-Modified-Since`.
fn not_modified(frozen: &Frozen, headers: &HeaderMap) -> bool {
    let mut if_none_match = headers.get_all(header::IF_NONE_MATCH).iter().peekable();
    if if_none_match.peek().is_some() {
        let etag = frozen.etag.as_bytes();
        return if_none_match.any(|v| {
            v.to_str().is_ok_and(|list| {
                list.split(',').map(str::trim).any(|tag| {
                    tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == etag
                })
            })
        });
    }
    headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| httpdate::parse_http_date(s).ok())
        .is_some_and(|since| frozen.modified_at <= since)
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::{Duration, SystemTime};

    use http_body_util::{BodyExt, Full};
    use tower::{ServiceExt, service_fn};
    use tower_layer::Layer;

    use super::*;
    use crate::card::WELL_KNOWN_PATH;
    use crate::types::{AgentCard, AgentInterface, AgentSkill};

    fn card() -> AgentCard {
        AgentCard::new("Echo", "Repeats", "1.0.0")
            .with_interface(AgentInterface::jsonrpc("https://h.example/a2a"))
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
    }

    fn layer() -> AgentCardLayer {
        AgentCardLayer::new(&card()).unwrap()
    }

    /// Echoes the request's method, path and body with status 418.
    async fn echo(req: Request<Full<Bytes>>) -> Result<Response<Full<Bytes>>, Infallible> {
        let head = format!("{} {} ", req.method(), req.uri());
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let mut res = Response::new(Full::new(Bytes::from([head.as_bytes(), &body].concat())));
        *res.status_mut() = StatusCode::IM_A_TEAPOT;
        Ok(res)
    }

    async fn call(layer: &AgentCardLayer, req: Request<Full<Bytes>>) -> (Response<()>, Bytes) {
        let res = layer.layer(service_fn(echo)).oneshot(req).await.unwrap();
        let (parts, body) = res.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (Response::from_parts(parts, ()), bytes)
    }

    fn req(method: Method, path: &str) -> http::request::Builder {
        Request::builder().method(method).uri(path)
    }

    fn get() -> Request<Full<Bytes>> {
        req(Method::GET, WELL_KNOWN_PATH)
            .body(Full::default())
            .unwrap()
    }

    #[tokio::test]
    async fn get_serves_the_frozen_bytes_with_cache_headers() {
        let l = layer();
        let (res, body) = call(&l, get()).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(body, l.card_bytes());
        let h = res.headers();
        assert_eq!(h[header::CONTENT_TYPE], "application/json");
        assert_eq!(h[header::CONTENT_LENGTH], l.card_bytes().len().to_string());
        assert_eq!(h[header::ETAG], l.etag());
        assert_eq!(h[header::CACHE_CONTROL], "public, max-age=300");
        let lm = httpdate::parse_http_date(h[header::LAST_MODIFIED].to_str().unwrap()).unwrap();
        assert!(lm <= SystemTime::now());
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        assert!(h.get(header::ALLOW).is_none());
    }

    #[tokio::test]
    async fn a_query_string_still_gets_the_card() {
        let r = req(Method::GET, "/.well-known/agent-card.json?A2A-Version=1.0");
        let (res, body) = call(&layer(), r.body(Full::default()).unwrap()).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(body, layer().card_bytes());
    }

    #[tokio::test]
    async fn head_has_the_headers_but_no_body() {
        let l = layer().max_age(Duration::from_secs(60));
        let r = req(Method::HEAD, WELL_KNOWN_PATH)
            .body(Full::default())
            .unwrap();
        let (res, body) = call(&l, r).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert!(body.is_empty());
        let h = res.headers();
        assert_eq!(h[header::CONTENT_LENGTH], l.card_bytes().len().to_string());
        assert_eq!(h[header::CONTENT_TYPE], "application/json");
        assert_eq!(h[header::ETAG], l.etag());
        assert_eq!(h[header::CACHE_CONTROL], "public, max-age=60");
    }

    #[tokio::test]
    async fn if_none_match() {
        let l = layer();
        let etag = l.etag().to_owned();
        for (value, hit) in [
            (etag.clone(), true),
            (format!("W/{etag}"), true),
            (format!("\"other\", {etag}"), true),
            ("*".to_owned(), true),
            ("\"other\"".to_owned(), false),
            (etag.trim_matches('"').to_owned(), false),
        ] {
            let r = req(Method::GET, WELL_KNOWN_PATH)
                .header(header::IF_NONE_MATCH, &value)
                .body(Full::default())
                .unwrap();
            let (res, body) = call(&l, r).await;
            if hit {
                assert_eq!(res.status(), StatusCode::NOT_MODIFIED, "{value}");
                assert!(body.is_empty());
                assert_eq!(res.headers()[header::ETAG], etag.as_str());
                assert_eq!(res.headers()[header::CACHE_CONTROL], "public, max-age=300");
                assert!(res.headers().get(header::CONTENT_TYPE).is_none());
            } else {
                assert_eq!(res.status(), StatusCode::OK, "{value}");
                assert_eq!(body, l.card_bytes());
            }
        }
        // A second header line counts too; a non-ASCII value never matches.
        let r = req(Method::HEAD, WELL_KNOWN_PATH)
            .header(
                header::IF_NONE_MATCH,
                HeaderValue::from_bytes(b"\"\xff\"").unwrap(),
            )
            .header(header::IF_NONE_MATCH, &etag)
            .body(Full::default())
            .unwrap();
        assert_eq!(call(&l, r).await.0.status(), StatusCode::NOT_MODIFIED);
    }

    #[tokio::test]
    async fn if_modified_since_only_without_if_none_match() {
        let l = layer();
        let lm = httpdate::fmt_http_date(l.frozen.modified_at);
        let earlier = httpdate::fmt_http_date(l.frozen.modified_at - Duration::from_secs(10));
        let ims = |v: &str| req(Method::GET, WELL_KNOWN_PATH).header(header::IF_MODIFIED_SINCE, v);
        let r = ims(&lm).body(Full::default()).unwrap();
        assert_eq!(call(&l, r).await.0.status(), StatusCode::NOT_MODIFIED);
        let r = ims(&earlier).body(Full::default()).unwrap();
        assert_eq!(call(&l, r).await.0.status(), StatusCode::OK);
        let r = ims("yesterday").body(Full::default()).unwrap();
        assert_eq!(call(&l, r).await.0.status(), StatusCode::OK);
        // RFC 9110 §13.2.2: If-None-Match wins over If-Modified-Since.
        let r = ims(&lm)
            .header(header::IF_NONE_MATCH, "\"other\"")
            .body(Full::default())
            .unwrap();
        assert_eq!(call(&l, r).await.0.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn options_and_other_methods() {
        let r = req(Method::OPTIONS, WELL_KNOWN_PATH)
            .body(Full::default())
            .unwrap();
        let (res, body) = call(&layer(), r).await;
        assert_eq!(res.status(), StatusCode::NO_CONTENT);
        assert!(body.is_empty());
        assert_eq!(res.headers()[header::ALLOW], "GET, HEAD, OPTIONS");
        assert!(
            res.headers()
                .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
                .is_none()
        );
        assert!(
            res.headers()
                .get(header::ACCESS_CONTROL_ALLOW_METHODS)
                .is_none()
        );

        for m in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            let r = req(m.clone(), WELL_KNOWN_PATH)
                .body(Full::from("x"))
                .unwrap();
            let (res, body) = call(&layer(), r).await;
            assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{m}");
            assert_eq!(res.headers()[header::ALLOW], "GET, HEAD, OPTIONS");
            assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(v["error"]["code"], 405);
            assert_eq!(v["error"]["details"][0]["reason"], "METHOD_NOT_ALLOWED");
        }
    }

    #[tokio::test]
    async fn cors_when_enabled() {
        let l = layer().cors(true);
        let (res, _) = call(&l, get()).await;
        assert_eq!(res.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(res.headers()[header::ACCESS_CONTROL_EXPOSE_HEADERS], "ETag");

        let r = req(Method::OPTIONS, WELL_KNOWN_PATH)
            .header(header::ORIGIN, "https://app.example")
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
            .body(Full::default())
            .unwrap();
        let (res, _) = call(&l, r).await;
        assert_eq!(res.status(), StatusCode::NO_CONTENT);
        let h = res.headers();
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_METHODS],
            "GET, HEAD, OPTIONS"
        );
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_HEADERS],
            "A2A-Version, A2A-Extensions, If-None-Match, If-Modified-Since"
        );
        assert_eq!(h[header::ALLOW], "GET, HEAD, OPTIONS");

        let r = req(Method::GET, WELL_KNOWN_PATH)
            .header(header::IF_NONE_MATCH, l.etag())
            .body(Full::default())
            .unwrap();
        let (res, _) = call(&l, r).await;
        assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(res.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    }

    #[tokio::test]
    async fn other_paths_pass_through_untouched() {
        for (m, path) in [
            (Method::POST, "/a2a"),
            (Method::GET, "/.well-known/agent-card.json/"),
            (Method::GET, "/.well-known/agent.json"),
            (Method::OPTIONS, "/a2a?x=1"),
        ] {
            let r = req(m.clone(), path).body(Full::from("payload")).unwrap();
            let (res, body) = call(&layer().cors(true), r).await;
            assert_eq!(res.status(), StatusCode::IM_A_TEAPOT);
            assert_eq!(body, format!("{m} {path} payload"));
            assert!(res.headers().is_empty(), "{:?}", res.headers());
        }
    }

    #[tokio::test]
    async fn path_override_moves_the_card() {
        let l = layer().path("/agents/echo.json").unwrap();
        let r = req(Method::GET, "/agents/echo.json")
            .body(Full::default())
            .unwrap();
        let (res, body) = call(&l, r).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(body, l.card_bytes());
        let (res, _) = call(&l, get()).await;
        assert_eq!(res.status(), StatusCode::IM_A_TEAPOT);
    }

    #[test]
    fn send_and_sync() {
        fn assert_send<T: Send>() {}
        fn assert_sync<T: Sync>() {}
        assert_send::<AgentCardLayer>();
        assert_sync::<AgentCardLayer>();
        assert_send::<AgentCardService<()>>();
        assert_sync::<AgentCardService<()>>();
        assert_send::<ResponseFuture<std::future::Ready<()>>>();
    }
}
