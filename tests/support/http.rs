//! HTTP helpers: building A2A requests (`request`, `rpc_body`, `message`),
//! reading an answer whole (`Reply`), and a JSON-RPC client over real HTTP
//! for the tests that run the examples as processes (`client`, `rpc`,
//! `try_rpc`, `rpc_stream`, `list_all`).

use a2a_tower::ErrorKind;
use bytes::Bytes;
use http::header::{self, AsHeaderName};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::sse;

/// The id of every JSON-RPC request the client sends.
pub(crate) const RPC_ID: i64 = 7;

/// A user message with one text part.
pub(crate) fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A JSON-RPC 2.0 request.
pub(crate) fn rpc_body(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// An A2A request with `A2A-Version: 1.0`; a body goes as `application/json`.
pub(crate) fn request<M>(method: M, uri: &str, body: Option<&Value>) -> Request<Full<Bytes>>
where
    Method: TryFrom<M>,
    <Method as TryFrom<M>>::Error: Into<http::Error>,
{
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header("a2a-version", "1.0");
    let bytes = match body {
        Some(v) => {
            b = b.header("content-type", "application/json");
            Bytes::from(v.to_string())
        }
        None => Bytes::new(),
    };
    b.body(Full::new(bytes)).unwrap()
}

/// Adds `Authorization: Bearer <token>` when there is a token.
pub(crate) fn with_bearer<B>(mut req: Request<B>, token: Option<&str>) -> Request<B> {
    if let Some(t) = token {
        let value = format!("Bearer {t}").parse().unwrap();
        req.headers_mut().insert(header::AUTHORIZATION, value);
    }
    req
}

/// An answer read whole: status, headers and body.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Reply {
    pub(crate) async fn read<B>(res: Response<B>) -> Self
    where
        B: http_body::Body,
        B::Error: std::fmt::Debug,
    {
        let (parts, body) = res.into_parts();
        let body = body.collect().await.expect("the body").to_bytes();
        Self {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    pub(crate) fn header(&self, name: impl AsHeaderName) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    /// The content type, `""` when there is none.
    pub(crate) fn content_type(&self) -> &str {
        self.header(header::CONTENT_TYPE).unwrap_or_default()
    }

    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("UTF-8 body")
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| panic!("not JSON: {:?}", self.body))
    }

    /// Asserts the REST error shape of `kind` (a2a-spec.md §7.4: status,
    /// `application/json`, google.rpc.Status with an ErrorInfo first) and
    /// returns the body.
    pub(crate) fn rest_error(&self, kind: ErrorKind) -> Value {
        assert_eq!(self.status.as_u16(), kind.http_status(), "{:?}", self.body);
        assert_eq!(self.content_type(), "application/json");
        let v = self.json();
        assert_eq!(v["error"]["code"], kind.http_status());
        assert_eq!(v["error"]["status"], kind.grpc_status());
        assert_eq!(
            v["error"]["details"][0]["@type"],
            "type.googleapis.com/google.rpc.ErrorInfo"
        );
        assert_eq!(v["error"]["details"][0]["reason"], kind.reason());
        assert_eq!(v["error"]["details"][0]["domain"], "a2a-protocol.org");
        v
    }
}

/// A client of real HTTP/1 connections.
pub(crate) type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub(crate) fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// Sends `req` and reads the answer whole.
pub(crate) async fn fetch(c: &HttpClient, req: Request<Full<Bytes>>) -> Reply {
    Reply::read(c.request(req).await.expect("HTTP call")).await
}

/// A JSON-RPC call at `{base}/`: the `result`, or `Err` when the connection
/// failed (the server died). The answer must be HTTP 200 `application/json`
/// with the JSON-RPC envelope echoing [`RPC_ID`]; a JSON-RPC error answer
/// fails the test.
pub(crate) async fn try_rpc(
    c: &HttpClient,
    base: &str,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let body = rpc_body(RPC_ID, method, params);
    let res = c
        .request(request(Method::POST, &format!("{base}/"), Some(&body)))
        .await
        .map_err(|e| e.to_string())?;
    let status = res.status();
    let content_type = res.headers().get(header::CONTENT_TYPE).cloned();
    let body = res
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        content_type.as_ref().map(|v| v.to_str().unwrap()),
        Some("application/json")
    );
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], RPC_ID);
    assert!(v.get("error").is_none(), "error answer: {v}");
    Ok(v["result"].clone())
}

/// A JSON-RPC call that must succeed: its `result`.
pub(crate) async fn rpc(c: &HttpClient, base: &str, method: &str, params: Value) -> Value {
    try_rpc(c, base, method, params)
        .await
        .unwrap_or_else(|e| panic!("{method} failed: {e}"))
}

/// A streaming JSON-RPC call: the `result` of each SSE event until the
/// stream ends.
pub(crate) async fn rpc_stream(
    c: &HttpClient,
    base: &str,
    method: &str,
    params: Value,
) -> Vec<Value> {
    let body = rpc_body(RPC_ID, method, params);
    let r = fetch(c, request(Method::POST, &format!("{base}/"), Some(&body))).await;
    assert_eq!(r.status, StatusCode::OK);
    sse::events(&r.body)
        .into_iter()
        .map(|v| {
            assert!(v.get("error").is_none(), "error event: {v}");
            v["result"].clone()
        })
        .collect()
}

/// Every task ListTasks returns, over all pages.
pub(crate) async fn list_all(c: &HttpClient, base: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = rpc(
            c,
            base,
            "ListTasks",
            json!({"pageSize": 100, "pageToken": token}),
        )
        .await;
        out.extend(page["tasks"].as_array().cloned().unwrap_or_default());
        token = page["nextPageToken"].as_str().unwrap_or("").to_owned();
        if token.is_empty() {
            return out;
        }
    }
}
