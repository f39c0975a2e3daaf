//! One JSON-RPC SendMessage over one HTTP/1.1 keep-alive connection: the
//! target parsed from its URL, the connection (TCP_NODELAY), a fresh
//! `messageId` per request, and the check of the reply (status 200 and a
//! JSON-RPC `result` for the request's own id).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use http::Request;
use http::header::{CONTENT_TYPE, HOST};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::net::TcpStream;

/// A client connection to a server under test.
pub type Conn = SendRequest<Full<Bytes>>;

/// Where requests go: `http://HOST:PORT/PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `HOST:PORT`, connected to and sent as the `host` header.
    pub authority: String,
    /// The request path (`/` for the echo example, `/a2a` for hyper).
    pub path: String,
    /// The `contextId` every message names (`None`: none, so each message
    /// opens a context of its own).
    pub context: Option<String>,
}

impl Target {
    /// Parses an `http://` URL; the port defaults to 80, the path to `/`.
    pub fn parse(url: &str) -> Result<Target, String> {
        let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("{url}: only http:// URLs are supported"));
        }
        let host = uri.host().ok_or_else(|| format!("{url}: no host"))?;
        let port = uri.port_u16().unwrap_or(80);
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        Ok(Target {
            authority: format!("{host}:{port}"),
            path: path.to_owned(),
            context: None,
        })
    }

    /// This target with every message sent into context `context` of the
    /// process (`<random prefix>-c<context>`: the same number names the same
    /// context for every connection of this process, and no other
    /// process's).
    pub fn in_context(mut self, context: usize) -> Target {
        self.context = Some(format!("{}-c{context}", prefix()));
        self
    }
}

/// Why a request did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// The connection failed: it cannot be used again.
    Transport(String),
    /// The server answered, but not with a result: the connection is fine.
    Reply(String),
}

/// Opens a keep-alive connection to `target`, its driver spawned.
pub async fn connect(target: &Target) -> Result<Conn, String> {
    let stream = TcpStream::connect(&target.authority)
        .await
        .map_err(|e| format!("connect {}: {e}", target.authority))?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

/// Sends one SendMessage with a fresh id and messageId and checks its reply.
pub async fn send(conn: &mut Conn, target: &Target) -> Result<(), Failure> {
    let (id, body) = next_body(target.context.as_deref());
    let req = Request::post(target.path.as_str())
        .header(HOST, target.authority.as_str())
        .header(CONTENT_TYPE, "application/json")
        .header("a2a-version", "1.0")
        .body(Full::new(body))
        .map_err(|e| Failure::Transport(format!("request: {e}")))?;
    let transport = |e: hyper::Error| Failure::Transport(format!("HTTP: {e}"));
    conn.ready().await.map_err(transport)?;
    let res = conn.send_request(req).await.map_err(transport)?;
    let status = res.status().as_u16();
    let bytes = res.into_body().collect().await.map_err(transport)?;
    check_reply(status, &bytes.to_bytes(), id).map_err(Failure::Reply)
}

/// Prints the first error of the process on stderr, once.
pub fn note_error(failure: &Failure) {
    static PRINTED: AtomicBool = AtomicBool::new(false);
    if !PRINTED.swap(true, Ordering::Relaxed) {
        let text = match failure {
            Failure::Transport(t) | Failure::Reply(t) => t,
        };
        eprintln!("loadgen: first error: {text}");
    }
}

/// This process's random prefix of message and context ids.
fn prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The next request id and its body (into `context`, if any); ids and
/// messageIds are unique within the process, messageIds across processes
/// too (a random prefix).
fn next_body(context: Option<&str>) -> (u64, Bytes) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    (id, body(id, &format!("{}-{id}", prefix()), context))
}

/// The SendMessage body of request `id` with message `message_id`, naming
/// `context` if given.
fn body(id: u64, message_id: &str, context: Option<&str>) -> Bytes {
    let context = context.map_or(String::new(), |c| format!(r#""contextId":"{c}","#));
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"SendMessage","params":{{"message":{{"messageId":"{message_id}",{context}"role":"ROLE_USER","parts":[{{"text":"hello world"}}]}}}}}}"#
    ))
}

/// The parts of a JSON-RPC response the check reads.
#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// Ok only for status 200 and a JSON-RPC `result` (no `error`) answering `id`.
fn check_reply(status: u16, body: &[u8], id: u64) -> Result<(), String> {
    let text = || {
        let t = String::from_utf8_lossy(body);
        t.chars().take(500).collect::<String>()
    };
    if status != 200 {
        return Err(format!("HTTP status {status}: {}", text()));
    }
    match serde_json::from_slice::<Reply>(body) {
        Ok(r) if r.error.is_some() => Err(format!("JSON-RPC error: {}", text())),
        Ok(r) if r.result.is_none() => Err(format!("no JSON-RPC result: {}", text())),
        Ok(r) if r.id != Some(id) => Err(format!("reply to another id than {id}: {}", text())),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("not a JSON-RPC response ({e}): {}", text())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let t = Target::parse("http://127.0.0.1:8080/a2a").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path.as_str()),
            ("127.0.0.1:8080", "/a2a")
        );
        let t = Target::parse("http://localhost").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path.as_str()),
            ("localhost:80", "/")
        );
        assert!(Target::parse("https://127.0.0.1/").is_err());
        assert!(Target::parse("127.0.0.1:8080").is_err());
    }

    #[test]
    fn body_is_a_send_message_with_its_ids() {
        let v: serde_json::Value = serde_json::from_slice(&body(7, "p-7", None)).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["method"], "SendMessage");
        assert_eq!(v["params"]["message"]["messageId"], "p-7");
        assert_eq!(v["params"]["message"]["parts"][0]["text"], "hello world");
        assert!(v["params"]["message"].get("contextId").is_none());
        let (a, _) = next_body(None);
        let (b, _) = next_body(None);
        assert_ne!(a, b);
        let v: serde_json::Value = serde_json::from_slice(&body(8, "p-8", Some("x-c3"))).unwrap();
        assert_eq!(v["params"]["message"]["contextId"], "x-c3");
        assert_eq!(v["params"]["message"]["messageId"], "p-8");
    }

    #[test]
    fn only_a_result_for_the_same_id_is_ok() {
        let ok = br#"{"jsonrpc":"2.0","id":3,"result":{"task":{"id":"t"}}}"#;
        assert_eq!(check_reply(200, ok, 3), Ok(()));
        assert!(check_reply(200, ok, 4).unwrap_err().contains("another id"));
        assert!(
            check_reply(500, ok, 3)
                .unwrap_err()
                .starts_with("HTTP status 500")
        );
        let err = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"x"}}"#;
        assert!(
            check_reply(200, err, 3)
                .unwrap_err()
                .starts_with("JSON-RPC error")
        );
        let null = br#"{"jsonrpc":"2.0","id":3,"result":null}"#;
        assert!(
            check_reply(200, null, 3)
                .unwrap_err()
                .starts_with("no JSON-RPC result")
        );
        assert!(
            check_reply(200, b"<html>", 3)
                .unwrap_err()
                .starts_with("not a JSON-RPC")
        );
    }
}
