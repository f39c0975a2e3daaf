//! A small JSON-RPC client over real HTTP for the process tests.

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

pub(crate) type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub(crate) fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

pub(crate) fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

fn request(base: &str, method: &str, params: Value) -> Request<Full<Bytes>> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    Request::post(format!("{base}/"))
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(&body).unwrap())))
        .unwrap()
}

/// A JSON-RPC call: the `result`, or `Err` when the connection failed (the
/// server died). A JSON-RPC error answer fails the test.
pub(crate) async fn try_rpc(
    c: &HttpClient,
    base: &str,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let res = c
        .request(request(base, method, params))
        .await
        .map_err(|e| e.to_string())?;
    let status = res.status();
    let body = res
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(v.get("error").is_none(), "error answer: {v}");
    Ok(v["result"].clone())
}

/// A JSON-RPC call that must succeed.
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
    let res = c.request(request(base, method, params)).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    std::str::from_utf8(&body)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| {
            let v: Value = serde_json::from_str(d).unwrap();
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
