//! ExtensionsLayer over a trivial inner service (a2a-spec.md §1.5): parsing
//! `A2A-Extensions`, activation, required extensions, the response header;
//! and a required extension enforced, with no fallback to another version of
//! it, by the whole `A2aServer` (`support::assembled`) on both bindings.

use crate::support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::types::{AgentCard, AgentExtension, AgentInterface};
use a2a_tower::{ActivatedExtensions, Body, ExtensionsLayer};
use http::{HeaderMap, Request, Response, StatusCode, header};
use serde_json::{Value, json};
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
use support::assembled;
use support::http::Reply;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

const TRACE: &str = "https://ext.example/trace/v1";
const COST: &str = "https://ext.example/cost/v1";
const SIGNED: &str = "https://ext.example/signed/v2";

fn ext(uri: &str, required: bool) -> AgentExtension {
    AgentExtension {
        uri: uri.into(),
        required,
        ..AgentExtension::default()
    }
}

fn card(extensions: Vec<AgentExtension>) -> AgentCard {
    let mut card = AgentCard::default()
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/a2a"));
    card.capabilities.extensions = extensions;
    card
}

/// Echoes the activated extensions it found (`null` when none were inserted).
fn app(
    layer: ExtensionsLayer,
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<Body>, Response = Response<Body>, Error = Infallible> {
    ServiceBuilder::new()
        .layer(layer)
        .service(service_fn(move |req: Request<Body>| {
            calls.fetch_add(1, Ordering::SeqCst);
            let seen = json!(req.extensions().get::<ActivatedExtensions>().map(|a| &a.0));
            async move { Ok::<_, Infallible>(Response::new(Body::from(seen.to_string()))) }
        }))
}

fn req(path: &str, lines: &[&str]) -> Request<Body> {
    let mut b = Request::post(path);
    for line in lines {
        b = b.header("A2A-Extensions", *line);
    }
    b.body(Body::empty()).unwrap()
}

async fn call(layer: &ExtensionsLayer, req: Request<Body>) -> (StatusCode, HeaderMap, Value) {
    let res = app(layer.clone(), Arc::default())
        .oneshot(req)
        .await
        .unwrap();
    let r = Reply::read(res).await;
    let json = r.json();
    (r.status, r.headers, json)
}

fn echoed(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all("A2A-Extensions")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect()
}

#[tokio::test]
async fn declared_requested_extensions_are_activated_and_echoed() {
    let layer = ExtensionsLayer::new(&card(vec![ext(TRACE, false), ext(COST, false)])).unwrap();
    // Two header lines, spaces, an empty entry, a duplicate and an unknown URI (ignored, §1.5).
    let lines = [
        " https://ext.example/cost/v1 ,https://unknown.example/x,,",
        "https://ext.example/trace/v1, https://ext.example/cost/v1",
    ];
    for path in ["/rpc", "/a2a/message:send"] {
        let (status, headers, seen) = call(&layer, req(path, &lines)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(seen, json!([COST, TRACE]), "{path}");
        // One comma-joined response header (§1.2).
        assert_eq!(echoed(&headers), [format!("{COST}, {TRACE}")]);
    }
}

#[tokio::test]
async fn nothing_activated_means_no_response_header() {
    let layer = ExtensionsLayer::new(&card(vec![ext(TRACE, false)])).unwrap();
    for lines in [&[][..], &["https://unknown.example/x"][..], &[""][..]] {
        let (status, headers, seen) = call(&layer, req("/rpc", lines)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(seen, json!([]));
        assert!(echoed(&headers).is_empty());
    }
}

#[tokio::test]
async fn missing_required_extension_is_refused_per_binding() {
    // §1.5: a required extension the client did not request MUST give ExtensionSupportRequired.
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = ExtensionsLayer::new(&card(vec![ext(TRACE, false), ext(SIGNED, true)])).unwrap();
    let expected_meta = json!({"requiredExtensions": SIGNED});

    let (status, headers, v) = call(&layer, req("/rpc", &[TRACE])).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert!(echoed(&headers).is_empty());
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], Value::Null);
    assert_eq!(v["error"]["code"], -32008);
    assert_eq!(
        v["error"]["data"][0]["reason"],
        "EXTENSION_SUPPORT_REQUIRED"
    );
    assert_eq!(v["error"]["data"][0]["metadata"], expected_meta);

    let (status, headers, v) = call(&layer, req("/a2a/tasks/t-1", &[])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert_eq!(v["error"]["code"], 400);
    assert_eq!(v["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(
        v["error"]["details"][0]["reason"],
        "EXTENSION_SUPPORT_REQUIRED"
    );
    assert_eq!(v["error"]["details"][0]["metadata"], expected_meta);

    let res = app(layer, calls.clone())
        .oneshot(req("/rpc", &[]))
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
async fn required_extension_requested_passes() {
    let layer = ExtensionsLayer::new(&card(vec![ext(TRACE, true), ext(SIGNED, true)])).unwrap();
    let (status, headers, seen) = call(&layer, req("/rpc", &[SIGNED, TRACE])).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(seen, json!([SIGNED, TRACE]));
    assert_eq!(echoed(&headers), [format!("{SIGNED}, {TRACE}")]);

    // Both required ones missing: both named.
    let (_, _, v) = call(&layer, req("/a2a/tasks", &[])).await;
    assert_eq!(
        v["error"]["details"][0]["metadata"]["requiredExtensions"],
        format!("{TRACE}, {SIGNED}")
    );
}

#[tokio::test]
async fn card_endpoint_and_other_paths_pass_untouched() {
    let mut c = card(vec![ext(SIGNED, true)]);
    c.supported_interfaces = vec![AgentInterface::http_json("http://agent.example/")];
    let layer = ExtensionsLayer::new(&c).unwrap();
    let get = Request::get("/.well-known/agent-card.json")
        .body(Body::empty())
        .unwrap();
    let (status, headers, seen) = call(&layer, get).await;
    assert_eq!((status, seen), (StatusCode::OK, Value::Null));
    assert!(echoed(&headers).is_empty());

    let layer = ExtensionsLayer::new(&card(vec![ext(SIGNED, true)])).unwrap();
    let (status, headers, seen) = call(&layer, req("/health", &[SIGNED])).await;
    assert_eq!((status, seen), (StatusCode::OK, Value::Null));
    assert!(echoed(&headers).is_empty());
}

// a2a-spec.md §1.5: a required extension the client did not request MUST give
// ExtensionSupportRequired (−32008 / 400), and a server MUST NOT silently fall
// back to another version of an extension (a request for `/v1` does not
// activate the required `/v2`).
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
#[tokio::test]
async fn required_extension_not_requested_is_refused_without_version_fallback() {
    const V2: &str = "https://ext.example/signed/v2";
    const V1: &str = "https://ext.example/signed/v1";
    let mut card = assembled::card();
    card.capabilities.extensions.push(AgentExtension {
        uri: V2.into(),
        required: true,
        ..AgentExtension::default()
    });
    let h = assembled::server_with(card);
    for requested in [None, Some(V1)] {
        let mut req = assembled::rpc_req(
            assembled::ALICE,
            "x",
            "SendMessage",
            json!({"message": assembled::message("echo")}),
        );
        let mut rest = assembled::request(
            "POST",
            "/rest/message:send",
            assembled::ALICE,
            Some(json!({"message": assembled::message("echo")})),
        );
        if let Some(uri) = requested {
            req.headers_mut()
                .insert("a2a-extensions", uri.parse().unwrap());
            rest.headers_mut()
                .insert("a2a-extensions", uri.parse().unwrap());
        }
        let (status, _, text) = assembled::raw(assembled::call(&h, req).await).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], -32008, "{v}");
        assert_eq!(
            v["error"]["data"][0]["reason"],
            "EXTENSION_SUPPORT_REQUIRED"
        );
        assembled::rest_err(
            &h,
            rest,
            400,
            "FAILED_PRECONDITION",
            "EXTENSION_SUPPORT_REQUIRED",
        )
        .await;
    }
    // Requested: served, and echoed as activated.
    let mut req = assembled::request(
        "POST",
        "/rest/message:send",
        assembled::ALICE,
        Some(json!({"message": assembled::message("echo")})),
    );
    req.headers_mut()
        .insert("a2a-extensions", V2.parse().unwrap());
    let res = assembled::call(&h, req).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["a2a-extensions"], V2);
}
