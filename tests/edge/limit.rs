//! BodyLimitLayer over a trivial inner service: binding-shaped 413s, refusal
//! before the inner service is called, and a streamed body cut at the limit.

use crate::support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::types::{AgentCard, AgentInterface};
use a2a_tower::{Body, BodyLimitLayer};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream;
use http::{Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited, StreamBody};
use serde_json::{Value, json};
use support::http::Reply;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

fn card() -> AgentCard {
    AgentCard::default()
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/a2a"))
}

/// What the inner service saw while reading the body, frame by frame.
#[derive(Debug, Default, PartialEq, Eq)]
struct Read {
    bytes: usize,
    limit_error: bool,
}

/// An inner service that counts its calls and reads the whole body, keeping
/// on polling after an error to prove no byte past the limit is ever handed out.
fn app<B>(
    layer: BodyLimitLayer,
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<B>, Response = Response<Body>, Error = Infallible>
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<a2a_tower::BoxError>,
{
    ServiceBuilder::new()
        .layer(layer)
        .service(service_fn(move |req: Request<Limited<B>>| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                let mut body = req.into_body();
                let mut read = Read::default();
                while let Some(frame) = body.frame().await {
                    match frame {
                        Ok(f) => read.bytes += f.data_ref().map_or(0, |d| d.len()),
                        Err(e) => {
                            read.limit_error |= e.downcast_ref::<LengthLimitError>().is_some()
                        }
                    }
                }
                let text = format!("{} {}", read.bytes, read.limit_error);
                Ok::<_, Infallible>(Response::new(Body::from(text)))
            }
        }))
}

/// Status, content type and body.
async fn parts(res: Response<Body>) -> (StatusCode, Option<String>, Bytes) {
    let r = Reply::read(res).await;
    let ct = r.header(header::CONTENT_TYPE).map(str::to_owned);
    (r.status, ct, r.body)
}

fn oversized(path: &str, len: usize) -> Request<Full<Bytes>> {
    Request::post(path)
        .header(header::CONTENT_LENGTH, len.to_string())
        .body(Full::new(Bytes::from(vec![b'x'; len])))
        .unwrap()
}

#[tokio::test]
async fn jsonrpc_content_length_over_limit_is_a_jsonrpc_413_without_calling_inner() {
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = BodyLimitLayer::new(&card()).unwrap().max_bytes(8).unwrap();
    for path in ["/rpc", "/rpc/"] {
        let res = app(layer.clone(), calls.clone())
            .oneshot(oversized(path, 9))
            .await
            .unwrap();
        let (status, ct, body) = parts(res).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert_eq!(ct.as_deref(), Some("application/json"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["error"]["code"], -32600);
        assert_eq!(v["error"]["message"], "Request payload too large");
        assert_eq!(v["error"]["data"][0]["reason"], "PAYLOAD_TOO_LARGE");
        assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn rest_content_length_over_limit_is_a_rest_413_without_calling_inner() {
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = BodyLimitLayer::new(&card()).unwrap().max_bytes(8).unwrap();
    for path in ["/a2a/message:send", "/a2a/tenant-1/message:send", "/a2a"] {
        let res = app(layer.clone(), calls.clone())
            .oneshot(oversized(path, 9))
            .await
            .unwrap();
        let (status, ct, body) = parts(res).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert_eq!(ct.as_deref(), Some("application/json"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], 413);
        assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(v["error"]["details"][0]["reason"], "PAYLOAD_TOO_LARGE");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn other_paths_get_a_plain_413() {
    let calls = Arc::new(AtomicUsize::new(0));
    // REST at the root: the card path is still not an A2A path.
    let card =
        AgentCard::default().with_interface(AgentInterface::http_json("http://agent.example/"));
    let layer = BodyLimitLayer::new(&card).unwrap().max_bytes(8).unwrap();
    let res = app(layer.clone(), calls.clone())
        .oneshot(oversized("/.well-known/agent-card.json", 9))
        .await
        .unwrap();
    assert_eq!(
        parts(res).await,
        (StatusCode::PAYLOAD_TOO_LARGE, None, Bytes::new())
    );

    let layer = BodyLimitLayer::new(&self::card())
        .unwrap()
        .max_bytes(8)
        .unwrap();
    let res = app(layer, calls.clone())
        .oneshot(oversized("/health", 9))
        .await
        .unwrap();
    assert_eq!(
        parts(res).await,
        (StatusCode::PAYLOAD_TOO_LARGE, None, Bytes::new())
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_body_at_the_limit_passes() {
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = BodyLimitLayer::new(&card()).unwrap().max_bytes(8).unwrap();
    let res = app(layer, calls.clone())
        .oneshot(oversized("/rpc", 8))
        .await
        .unwrap();
    assert_eq!(
        parts(res).await,
        (StatusCode::OK, None, Bytes::from("8 false"))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn default_limit_is_four_mib() {
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = BodyLimitLayer::new(&card()).unwrap();
    let mib4 = 4 * 1024 * 1024;
    let res = app(layer.clone(), calls.clone())
        .oneshot(oversized("/rpc", mib4 + 1))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let res = app(layer, calls.clone())
        .oneshot(oversized("/rpc", mib4))
        .await
        .unwrap();
    let (status, _, body) = parts(res).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, Bytes::from(format!("{mib4} false")))
    );
}

#[tokio::test]
async fn streamed_body_stops_at_the_limit() {
    // Ten 4-byte chunks, no Content-Length, no size hint; limit 10 bytes.
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let chunks = stream::iter(0..10).map(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"abcd")))
    });
    let body = StreamBody::new(chunks);
    let req = Request::post("/a2a/message:stream").body(body).unwrap();

    let calls = Arc::new(AtomicUsize::new(0));
    let layer = BodyLimitLayer::new(&card()).unwrap().max_bytes(10).unwrap();
    let res = app(layer, calls.clone()).oneshot(req).await.unwrap();
    // The inner read 8 bytes (two chunks), then got the limit error for the third;
    // it kept polling to the end of the stream and never received another byte.
    assert_eq!(
        parts(res).await,
        (StatusCode::OK, None, Bytes::from("8 true"))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(pulled.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn streamed_body_reading_stops_when_the_reader_stops() {
    // A reader that stops at the first error pulls exactly the chunk that crossed.
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let chunks = stream::iter(0..10).map(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"abcd")))
    });
    let req = Request::post("/rpc").body(StreamBody::new(chunks)).unwrap();
    let layer = BodyLimitLayer::new(&card()).unwrap().max_bytes(10).unwrap();
    let svc = ServiceBuilder::new().layer(layer).service(service_fn(
        |req: Request<Limited<StreamBody<_>>>| async move {
            let err = req.into_body().collect().await.err();
            let limited = err.is_some_and(|e| e.downcast_ref::<LengthLimitError>().is_some());
            Ok::<_, Infallible>(Response::new(Body::from(json!(limited).to_string())))
        },
    ));
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(
        parts(res).await,
        (StatusCode::OK, None, Bytes::from("true"))
    );
    assert_eq!(pulled.load(Ordering::SeqCst), 3);
}
