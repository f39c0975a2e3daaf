//! VersionLayer over a trivial inner service (a2a-spec.md §1.3): header and
//! query, patch ignored, missing = 0.3, lenient opt-in, binding-shaped refusals,
//! card endpoint exempt; and a missing version refused by the whole
//! `A2aServer` (`support::assembled`) on both bindings.

use crate::support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::types::{AgentCard, AgentInterface};
use a2a_tower::{Body, ProtocolVersion, VersionLayer};
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use serde_json::Value;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
use serde_json::json;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
use support::assembled;
use support::http::Reply;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

fn card() -> AgentCard {
    AgentCard::default()
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/a2a"))
}

/// Echoes the negotiated version it found in the request extensions
/// (`none` when there was none), counting its calls.
fn app(
    layer: VersionLayer,
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<Body>, Response = Response<Body>, Error = Infallible> {
    ServiceBuilder::new()
        .layer(layer)
        .service(service_fn(move |req: Request<Body>| {
            calls.fetch_add(1, Ordering::SeqCst);
            let seen = req
                .extensions()
                .get::<ProtocolVersion>()
                .map_or_else(|| "none".to_owned(), ToString::to_string);
            async move { Ok::<_, Infallible>(Response::new(Body::from(seen))) }
        }))
}

fn req(path: &str, version: Option<&str>) -> Request<Body> {
    let mut b = Request::post(path);
    if let Some(v) = version {
        b = b.header("A2A-Version", v);
    }
    b.body(Body::empty()).unwrap()
}

async fn call(layer: &VersionLayer, req: Request<Body>) -> (StatusCode, Option<String>, Bytes) {
    let res = app(layer.clone(), Arc::default())
        .oneshot(req)
        .await
        .unwrap();
    let r = Reply::read(res).await;
    let ct = r.header(header::CONTENT_TYPE).map(str::to_owned);
    (r.status, ct, r.body)
}

/// The request passed, and the inner service saw `version`.
async fn accepted(layer: &VersionLayer, req: Request<Body>, version: &str) {
    let (status, _, body) = call(layer, req).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, version.as_bytes()));
}

/// A JSON-RPC VersionNotSupported: HTTP 200 (§6.1 REC), code -32009, id null.
async fn jsonrpc_refused(layer: &VersionLayer, req: Request<Body>) -> Value {
    let (status, ct, body) = call(layer, req).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct.as_deref(), Some("application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], Value::Null);
    assert_eq!(v["error"]["code"], -32009);
    assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
    v["error"]["data"][0]["metadata"].clone()
}

/// A REST VersionNotSupported: HTTP 400, FAILED_PRECONDITION (§1.3).
async fn rest_refused(layer: &VersionLayer, req: Request<Body>) -> Value {
    let (status, ct, body) = call(layer, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(ct.as_deref(), Some("application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["error"]["code"], 400);
    assert_eq!(v["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(v["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
    v["error"]["details"][0]["metadata"].clone()
}

fn meta(requested: &str, supported: &str) -> Value {
    serde_json::json!({"requestedVersion": requested, "supportedVersions": supported})
}

#[tokio::test]
async fn supported_version_passes_and_reaches_the_binding() {
    let layer = VersionLayer::new(&card()).unwrap();
    accepted(&layer, req("/rpc", Some("1.0")), "1.0").await;
    accepted(&layer, req("/rpc/", Some("1.0")), "1.0").await;
    accepted(&layer, req("/a2a/tasks/t-1", Some("1.0")), "1.0").await;
}

#[tokio::test]
async fn patch_is_ignored() {
    // §1.1: patch numbers MUST NOT be considered when negotiating.
    let layer = VersionLayer::new(&card()).unwrap();
    accepted(&layer, req("/rpc", Some("1.0.9")), "1.0").await;
    accepted(&layer, req("/a2a/message:send", Some("1.0.0")), "1.0").await;
    let mut iface = AgentInterface::jsonrpc("http://agent.example/rpc");
    iface.protocol_version = "1.0.3".into();
    let layer = VersionLayer::new(&AgentCard::default().with_interface(iface)).unwrap();
    accepted(&layer, req("/rpc", Some("1.0")), "1.0").await;
}

#[tokio::test]
async fn query_parameter_is_the_fallback() {
    // §1.3: a client MAY put A2A-Version in the query string.
    let layer = VersionLayer::new(&card()).unwrap();
    accepted(&layer, req("/a2a/tasks?A2A-Version=1.0", None), "1.0").await;
    accepted(&layer, req("/rpc?A2A-Version=1.0", Some("")), "1.0").await;
}

#[tokio::test]
async fn header_wins_over_query() {
    let layer = VersionLayer::new(&card()).unwrap();
    accepted(&layer, req("/rpc?A2A-Version=0.3", Some("1.0")), "1.0").await;
    let m = jsonrpc_refused(&layer, req("/rpc?A2A-Version=1.0", Some("0.3"))).await;
    assert_eq!(m, meta("0.3", "1.0"));
}

#[tokio::test]
async fn missing_or_empty_means_0_3_and_is_refused() {
    // §1.3: the server MUST interpret an empty or missing value as 0.3.
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = VersionLayer::new(&card()).unwrap();
    for version in [None, Some(""), Some("  ")] {
        assert_eq!(
            jsonrpc_refused(&layer, req("/rpc", version)).await,
            meta("0.3", "1.0")
        );
        assert_eq!(
            rest_refused(&layer, req("/a2a/tasks/t", version)).await,
            meta("0.3", "1.0")
        );
    }
    assert_eq!(
        rest_refused(&layer, req("/a2a/tasks?A2A-Version=", None)).await,
        meta("0.3", "1.0")
    );
    let res = app(layer, calls.clone())
        .oneshot(req("/rpc", None))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a refused request never reaches the inner service"
    );
}

#[tokio::test]
async fn missing_is_served_as_0_3_when_the_card_declares_0_3() {
    let mut old = AgentInterface::jsonrpc("http://agent.example/rpc");
    old.protocol_version = "0.3.0".into();
    let card = card().with_interface(old);
    let layer = VersionLayer::new(&card).unwrap();
    accepted(&layer, req("/rpc", None), "0.3").await;
    // Only the JSON-RPC interface declares 0.3: the REST binding refuses it.
    assert_eq!(
        rest_refused(&layer, req("/a2a/tasks", None)).await,
        meta("0.3", "1.0")
    );
}

#[tokio::test]
async fn unsupported_and_malformed_versions_are_refused() {
    let layer = VersionLayer::new(&card()).unwrap();
    assert_eq!(
        jsonrpc_refused(&layer, req("/rpc", Some("2.0"))).await,
        meta("2.0", "1.0")
    );
    assert_eq!(
        rest_refused(&layer, req("/a2a/tasks", Some("1.1"))).await,
        meta("1.1", "1.0")
    );
    // Malformed: refused, and the client's text is never echoed.
    for bad in ["abc", "1", "1.0-rc1", "<script>"] {
        let m = rest_refused(&layer, req("/a2a/tasks", Some(bad))).await;
        assert_eq!(m, serde_json::json!({"supportedVersions": "1.0"}), "{bad}");
        let m = jsonrpc_refused(&layer, req("/rpc", Some(bad))).await;
        assert_eq!(m, serde_json::json!({"supportedVersions": "1.0"}), "{bad}");
    }
    for bad in ["abc", "1.0-rc1", "<script>"] {
        let (_, _, body) = call(&layer, req("/rpc", Some(bad))).await;
        assert!(!String::from_utf8_lossy(&body).contains(bad), "{bad}");
    }
}

#[tokio::test]
async fn lenient_treats_missing_as_1_0() {
    let layer = VersionLayer::new(&card()).unwrap().lenient(true);
    accepted(&layer, req("/rpc", None), "1.0").await;
    accepted(&layer, req("/a2a/tasks", Some("")), "1.0").await;
    // An explicit 0.3 is still refused.
    assert_eq!(
        jsonrpc_refused(&layer, req("/rpc", Some("0.3"))).await,
        meta("0.3", "1.0")
    );
    // And it is off by default.
    let strict = VersionLayer::new(&card()).unwrap();
    assert_eq!(
        jsonrpc_refused(&strict, req("/rpc", None)).await,
        meta("0.3", "1.0")
    );
}

#[tokio::test]
async fn card_endpoint_and_other_paths_pass_untouched() {
    // §1.3: the well-known card fetch needs no version header, even with REST at the root.
    let card =
        AgentCard::default().with_interface(AgentInterface::http_json("http://agent.example/"));
    let layer = VersionLayer::new(&card).unwrap();
    let get = Request::get("/.well-known/agent-card.json")
        .body(Body::empty())
        .unwrap();
    accepted(&layer, get, "none").await;
    assert_eq!(
        rest_refused(&layer, req("/tasks/t-1", None)).await,
        meta("0.3", "1.0")
    );

    let layer = VersionLayer::new(&self::card()).unwrap();
    accepted(&layer, req("/health", None), "none").await;
    accepted(&layer, req("/rpcx", Some("9.9")), "none").await;
    accepted(&layer, req("/a2ab", Some("abc")), "none").await;
}

// a2a-spec.md §1.3: a missing (or empty) A2A-Version MUST be read as 0.3; a
// 1.0-only server MUST answer VersionNotSupported on both bindings, through
// the assembled stack.
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
#[tokio::test]
async fn missing_version_header_is_0_3_and_refused_on_both_bindings() {
    let h = assembled::server();
    for version in [None, Some("")] {
        let mut req = assembled::rpc_req(assembled::ALICE, "v", "GetTask", json!({"id": "t"}));
        let mut rest = assembled::request("GET", "/rest/tasks/t", assembled::ALICE, None);
        for r in [&mut req, &mut rest] {
            r.headers_mut().remove("a2a-version");
            if let Some(v) = version {
                r.headers_mut().insert("a2a-version", v.parse().unwrap());
            }
        }
        let (status, ct, text) = assembled::raw(assembled::call(&h, req).await).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ct, "application/json");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], -32009, "{v}");
        assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
        assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
        assembled::rest_err(
            &h,
            rest,
            400,
            "FAILED_PRECONDITION",
            "VERSION_NOT_SUPPORTED",
        )
        .await;
    }
}
