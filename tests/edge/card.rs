//! The assembled `AgentCardLayer` over a trivial inner service (a2a-spec.md
//! §2), and the card served by the whole `A2aServer` (`support::assembled`).

use crate::support;

use std::time::Duration;

use a2a_tower::card::{AgentCardService, ResponseFuture, StackCapabilities, WELL_KNOWN_PATH};
use a2a_tower::types::{AgentCard, AgentInterface};
use a2a_tower::{AgentCardLayer, Body};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
use serde_json::Value;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
use support::assembled;
use support::http::Reply;
use tower::util::BoxCloneService;
use tower::{ServiceBuilder, ServiceExt, service_fn};

/// The composed card of a2a-spec.md §2.3.
const SPEC_CARD: &str = r#"{
  "name": "Invoice Agent",
  "description": "Extracts and validates invoice data.",
  "version": "0.4.0",
  "supportedInterfaces": [
    {"url": "https://agents.example.net/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": "https://agents.example.net/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
  ],
  "provider": {"organization": "Example Ltd", "url": "https://example.net"},
  "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
  "securitySchemes": {
    "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}
  },
  "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
  "defaultInputModes": ["text/plain", "application/pdf"],
  "defaultOutputModes": ["application/json"],
  "skills": [{"id": "extract", "name": "Extract invoice", "description": "Returns line items as JSON.",
              "tags": ["invoice", "ocr"], "examples": ["Extract the totals from this PDF"]}]
}"#;

fn spec_card() -> AgentCard {
    serde_json::from_str(SPEC_CARD).unwrap()
}

type Svc = BoxCloneService<Request<Full<Bytes>>, Response<Body>, &'static str>;

/// The layer over an inner service that echoes the method, URI, the
/// `x-probe` header and the body, with status 202; `/fail` is an error.
fn stack(layer: AgentCardLayer) -> Svc {
    let inner = service_fn(|req: Request<Full<Bytes>>| async move {
        if req.uri().path() == "/fail" {
            return Err("inner failed");
        }
        let probe = req.headers().get("x-probe").cloned();
        let head = format!("{} {}|", req.method(), req.uri());
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let mut res = Response::new(Full::new(Bytes::from([head.as_bytes(), &body].concat())));
        *res.status_mut() = StatusCode::ACCEPTED;
        if let Some(p) = probe {
            res.headers_mut().insert("x-probe", p);
        }
        Ok(res)
    });
    BoxCloneService::new(ServiceBuilder::new().layer(layer).service(inner))
}

async fn send(svc: &Svc, req: Request<Full<Bytes>>) -> (StatusCode, HeaderMap, Bytes) {
    let r = Reply::read(svc.clone().oneshot(req).await.unwrap()).await;
    (r.status, r.headers, r.body)
}

fn card_req(method: Method) -> http::request::Builder {
    Request::builder().method(method).uri(WELL_KNOWN_PATH)
}

// a2a-spec.md §2.1: the card MUST be available at the well-known path; the
// fetch needs no A2A-Version header.
#[tokio::test]
async fn serves_the_spec_example_card() {
    let layer = AgentCardLayer::new(&spec_card()).unwrap();
    let svc = stack(layer.clone());
    let (status, headers, body) =
        send(&svc, card_req(Method::GET).body(Full::default()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert_eq!(headers[header::CONTENT_LENGTH], body.len().to_string());
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=300");
    assert_eq!(headers[header::ETAG], layer.etag());
    assert!(headers.contains_key(header::LAST_MODIFIED));
    let served: AgentCard = serde_json::from_slice(&body).unwrap();
    assert_eq!(served, spec_card());
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        json["supportedInterfaces"][1]["protocolBinding"],
        "HTTP+JSON"
    );
    assert_eq!(
        json["securityRequirements"][0]["schemes"]["bearer"]["list"],
        serde_json::json!([])
    );
}

// a2a-spec.md §2.1: Cache-Control and ETag; clients revalidate with If-None-Match.
#[tokio::test]
async fn revalidation_and_head() {
    let layer = AgentCardLayer::new(&spec_card())
        .unwrap()
        .max_age(Duration::from_secs(3600));
    let svc = stack(layer.clone());

    let req = card_req(Method::GET)
        .header(
            header::IF_NONE_MATCH,
            format!("W/\"nope\", {}", layer.etag()),
        )
        .body(Full::default())
        .unwrap();
    let (status, headers, body) = send(&svc, req).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    assert_eq!(headers[header::ETAG], layer.etag());
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=3600");

    let last_modified = {
        let (_, h, _) = send(&svc, card_req(Method::GET).body(Full::default()).unwrap()).await;
        h[header::LAST_MODIFIED].clone()
    };
    let req = card_req(Method::GET)
        .header(header::IF_MODIFIED_SINCE, last_modified)
        .body(Full::default())
        .unwrap();
    assert_eq!(send(&svc, req).await.0, StatusCode::NOT_MODIFIED);

    let (status, headers, body) =
        send(&svc, card_req(Method::HEAD).body(Full::default()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.is_empty());
    assert_eq!(
        headers[header::CONTENT_LENGTH],
        layer.card_bytes().len().to_string()
    );
    assert_eq!(headers[header::ETAG], layer.etag());
}

// a2a-spec.md §2.1 / §13 item 6: CORS for browser clients, answered OPTIONS.
#[tokio::test]
async fn options_and_cors() {
    let plain = stack(AgentCardLayer::new(&spec_card()).unwrap());
    let (status, headers, _) = send(
        &plain,
        card_req(Method::OPTIONS).body(Full::default()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(headers[header::ALLOW], "GET, HEAD, OPTIONS");
    assert!(!headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));

    let cors = stack(AgentCardLayer::new(&spec_card()).unwrap().cors(true));
    let preflight = card_req(Method::OPTIONS)
        .header(header::ORIGIN, "https://ui.example")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "a2a-version")
        .body(Full::default())
        .unwrap();
    let (status, headers, _) = send(&cors, preflight).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    assert_eq!(
        headers[header::ACCESS_CONTROL_ALLOW_METHODS],
        "GET, HEAD, OPTIONS"
    );
    assert!(
        headers[header::ACCESS_CONTROL_ALLOW_HEADERS]
            .to_str()
            .unwrap()
            .contains("A2A-Version")
    );
    let (_, headers, _) = send(&cors, card_req(Method::GET).body(Full::default()).unwrap()).await;
    assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");

    let (status, headers, body) = send(
        &cors,
        card_req(Method::POST).body(Full::from("{}")).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers[header::ALLOW], "GET, HEAD, OPTIONS");
    let err: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["error"]["status"], "UNIMPLEMENTED");
}

#[tokio::test]
async fn every_other_request_passes_through_untouched() {
    let svc = stack(AgentCardLayer::new(&spec_card()).unwrap().cors(true));
    for (method, uri) in [
        (Method::POST, "/a2a/jsonrpc"),
        (Method::GET, "/a2a/rest/tasks/t-1?historyLength=2"),
        (Method::GET, "/.well-known/agent-card.json/extra"),
        (Method::OPTIONS, "/a2a/jsonrpc"),
    ] {
        let req = Request::builder()
            .method(method.clone())
            .uri(uri)
            .header("x-probe", "kept")
            .body(Full::from(r#"{"jsonrpc":"2.0"}"#))
            .unwrap();
        let (status, headers, body) = send(&svc, req).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{method} {uri}");
        assert_eq!(body, format!(r#"{method} {uri}|{{"jsonrpc":"2.0"}}"#));
        assert_eq!(headers.len(), 1, "{headers:?}");
        assert_eq!(headers["x-probe"], "kept");
    }
    // An inner error stays the inner error.
    let req = Request::post("/fail").body(Full::default()).unwrap();
    assert_eq!(svc.clone().oneshot(req).await.unwrap_err(), "inner failed");
}

#[tokio::test]
async fn mutating_the_card_after_building_changes_nothing() {
    let mut card = spec_card();
    let layer = AgentCardLayer::new(&card).unwrap();
    let svc = stack(layer.clone());
    let (_, _, before) = send(&svc, card_req(Method::GET).body(Full::default()).unwrap()).await;
    card.name = "Evil".into();
    card.supported_interfaces.clear();
    card.capabilities.push_notifications = Some(true);
    let (_, headers, after) =
        send(&svc, card_req(Method::GET).body(Full::default()).unwrap()).await;
    assert_eq!(before, after);
    assert_eq!(headers[header::ETAG], layer.etag());
    assert_eq!(layer.card().name, "Invoice Agent");
}

#[test]
fn building_rejects_what_the_stack_cannot_serve() {
    type Edit = fn(&mut AgentCard);
    let cases: [(Edit, &str); 7] = [
        (
            |c| c.skills.clear(),
            "skills must have at least one element",
        ),
        (
            |c| c.supported_interfaces[0].url = "https://u:p@agents.example.net/a2a".into(),
            "user-info",
        ),
        (
            |c| c.supported_interfaces[0].url = "https://agents.example.net/a2a?x=1".into(),
            "query",
        ),
        (
            |c| {
                c.supported_interfaces[0].url =
                    format!("https://agents.example.net{WELL_KNOWN_PATH}")
            },
            "well-known card path",
        ),
        (
            |c| c.supported_interfaces[1].protocol_version = "0.3".into(),
            "serves \"1.0\"",
        ),
        (
            |c| c.capabilities.push_notifications = Some(true),
            "pushNotifications",
        ),
        (
            |c| {
                c.supported_interfaces
                    .push(AgentInterface::new("agents.example.net:443", "GRPC"))
            },
            "GRPC is not served",
        ),
    ];
    for (edit, needle) in cases {
        let mut card = spec_card();
        edit(&mut card);
        let err = AgentCardLayer::new(&card).unwrap_err();
        assert!(err.to_string().contains(needle), "{needle}: {err}");
    }
    let mut card = spec_card();
    card.capabilities.push_notifications = Some(true);
    card.capabilities.extended_agent_card = Some(true);
    let stack = StackCapabilities::default()
        .push_notifications(true)
        .extended_agent_card(true);
    assert!(AgentCardLayer::with_capabilities(&card, stack).is_ok());
}

#[test]
fn public_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<AgentCardLayer>();
    assert_send_sync::<AgentCardService<()>>();
    assert_send::<AgentCardService<Svc>>();
    assert_send::<ResponseFuture<<Svc as tower::Service<Request<Full<Bytes>>>>::Future>>();
}

// a2a-spec.md §2.1: the assembled server MUST make its card available at the
// well-known path, without a version header or credentials.
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
#[tokio::test]
async fn agent_card_is_served_at_the_well_known_path() {
    let h = assembled::server();
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (status, ct, text) = assembled::raw(assembled::call(&h, req).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct, "application/json");
    let served: AgentCard = serde_json::from_str(&text).unwrap();
    assert_eq!(served, assembled::card());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(v["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(v["supportedInterfaces"][1]["protocolBinding"], "HTTP+JSON");
}

// a2a-spec.md §8.4: `A2aServerBuilder::sign_card` serves the card signed
// once when built: the same bytes and ETag on every request, a signature
// that verifies with the key's public half and fails once the card changes.
#[cfg(all(
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "signing"
))]
#[tokio::test]
async fn the_builder_signs_the_card_once() {
    use a2a_tower::server::A2aServer;
    use a2a_tower::signing::{SigningKey, verify_card};
    use futures_util::FutureExt as _;

    let jwk = r#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
    let key = SigningKey::from_text(jwk, "server-key").unwrap();
    let public = key.verifying_key();
    let (exec, _, _) = assembled::executor();
    let app = A2aServer::builder(assembled::card())
        .sign_card(key)
        .recovery(false)
        .executor(exec)
        .now_or_never()
        .expect("builds without waiting")
        .unwrap();
    let get = || {
        app.clone().oneshot(
            Request::get("/.well-known/agent-card.json")
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
    };
    let (a, b) = (
        Reply::read(get().await.unwrap()).await,
        Reply::read(get().await.unwrap()).await,
    );
    assert_eq!(a.body, b.body);
    assert_eq!(a.headers[header::ETAG], b.headers[header::ETAG]);
    let mut served: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(
        verify_card(&served, std::slice::from_ref(&public)).unwrap(),
        "server-key"
    );
    served["description"] = "changed".into();
    assert!(verify_card(&served, &[public]).is_err());
}
