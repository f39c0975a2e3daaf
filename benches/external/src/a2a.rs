//! JSON-RPC calls to an A2A server over HTTP/1.1, one connection each
//! (`hyper::client::conn::http1`), as the subscriber tools make them:
//! SendMessage that returns at once with the task, SubscribeToTask whose SSE
//! events are read with their arrival times ([`read_events`], the crate's
//! own incremental [`SseParser`]), and a stalled subscription
//! ([`stalled_subscribe`]) that reads the response head and then never
//! reads again.
//!
//! ```
//! use a2a_tower_load::a2a::{Endpoint, rpc_body};
//! let ep = Endpoint::parse("http://127.0.0.1:8080/").unwrap();
//! assert_eq!((ep.authority(), ep.path()), ("127.0.0.1:8080", "/"));
//! let body: serde_json::Value =
//!     serde_json::from_slice(&rpc_body("SubscribeToTask", serde_json::json!({"id": "t-1"}))).unwrap();
//! assert_eq!(body["method"], "SubscribeToTask");
//! assert_eq!(body["params"]["id"], "t-1");
//! ```

use std::time::Instant;

use a2a_tower::client::sse::SseParser;
use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

use crate::events::{Event, decode};

/// The largest SSE event accepted (an echo task's snapshot holds its text).
const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Where the JSON-RPC binding is served: `http://HOST:PORT/PATH`.
#[derive(Debug, Clone)]
pub struct Endpoint {
    authority: String,
    path: String,
}

impl Endpoint {
    /// Parses a plain `http://` URL (the path defaults to `/`).
    pub fn parse(url: &str) -> Result<Self, String> {
        let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("{url}: only http:// is supported"));
        }
        let authority = uri
            .authority()
            .ok_or_else(|| format!("{url}: no host"))?
            .to_string();
        Ok(Self {
            authority,
            path: uri.path().to_owned(),
        })
    }

    /// `host:port`, also the `Host` header.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The path requests are POSTed to.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// A JSON-RPC 2.0 request body.
pub fn rpc_body(method: &str, params: Value) -> Bytes {
    Bytes::from(
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .expect("a JSON value encodes"),
    )
}

/// One HTTP/1.1 connection to the server; its driver runs as its own task
/// and ends when the connection closes.
pub async fn connect(ep: &Endpoint) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream = TcpStream::connect(ep.authority())
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

fn request(ep: &Endpoint, body: Bytes) -> Request<Full<Bytes>> {
    Request::post(ep.path())
        .header(header::HOST, ep.authority())
        .header("a2a-version", "1.0")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))
        .expect("a valid request")
}

/// Sends `method` and returns the response's `result`; a JSON-RPC error,
/// a status other than 200 or a transport error is the `Err` text.
pub async fn call(
    sender: &mut SendRequest<Full<Bytes>>,
    ep: &Endpoint,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    sender.ready().await.map_err(|e| format!("{method}: {e}"))?;
    let res = sender
        .send_request(request(ep, rpc_body(method, params)))
        .await
        .map_err(|e| format!("{method}: {e}"))?;
    let status = res.status();
    let body = res
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{method}: {e}"))?
        .to_bytes();
    if status != http::StatusCode::OK {
        return Err(format!("{method}: HTTP {status}"));
    }
    let mut v: Value = serde_json::from_slice(&body).map_err(|e| format!("{method}: {e}"))?;
    if let Some(e) = v.get("error") {
        return Err(format!("{method}: error {e}"));
    }
    Ok(v["result"].take())
}

/// SendMessage of `text` with `returnImmediately`; returns the task's id.
pub async fn create_task(
    sender: &mut SendRequest<Full<Bytes>>,
    ep: &Endpoint,
    text: &str,
) -> Result<String, String> {
    let params = json!({
        "message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        },
        "configuration": {"returnImmediately": true},
    });
    let result = call(sender, ep, "SendMessage", params).await?;
    result["task"]["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("SendMessage: no task in {result}"))
}

/// SubscribeToTask on a connection of its own; returns the response once
/// its head arrived (status 200 and `text/event-stream` checked).
pub async fn subscribe(ep: &Endpoint, task_id: &str) -> Result<Response<Incoming>, String> {
    let mut sender = connect(ep).await?;
    let body = rpc_body("SubscribeToTask", json!({ "id": task_id }));
    let res = sender
        .send_request(request(ep, body))
        .await
        .map_err(|e| format!("SubscribeToTask: {e}"))?;
    let sse = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if res.status() != http::StatusCode::OK || !sse {
        // A JSON-RPC error (say, the task already ended) is a JSON answer.
        let status = res.status();
        let body = res.into_body().collect().await.map(|b| b.to_bytes());
        let body = body.as_deref().unwrap_or_default();
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
        return Err(format!(
            "SubscribeToTask: HTTP {status}, not a stream: {text}"
        ));
    }
    Ok(res)
}

/// Reads a subscription's events to the end of its body, calling
/// `on_event` with each and the time its bytes arrived; `Err` if the body
/// failed or ended in the middle of an event.
pub async fn read_events(
    res: Response<Incoming>,
    mut on_event: impl FnMut(Instant, Event),
) -> Result<(), String> {
    let mut body = res.into_body();
    let mut parser = SseParser::new(MAX_EVENT_BYTES);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("stream: {e}"))?;
        let at = Instant::now();
        if let Ok(data) = frame.into_data() {
            let parsed = parser.push(&data, &mut out);
            for ev in out.drain(..) {
                on_event(at, decode(&ev.data));
            }
            parsed.map_err(|e| format!("stream: {e}"))?;
        }
    }
    parser.finish().map_err(|e| format!("stream: {e}"))
}

/// SubscribeToTask on a raw socket whose receive buffer is asked to be
/// `recv_buffer` bytes: writes the request, reads up to the end of the
/// response head (checking status 200), and returns the socket, which the
/// caller keeps open without reading, so the server's writes to it stall
/// once the socket buffers are full.
pub async fn stalled_subscribe(
    ep: &Endpoint,
    task_id: &str,
    recv_buffer: u32,
) -> Result<TcpStream, String> {
    let addr = tokio::net::lookup_host(ep.authority())
        .await
        .map_err(|e| format!("resolve: {e}"))?
        .next()
        .ok_or("resolve: no address")?;
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| e.to_string())?;
    // Before connecting, so the window the server sees is already small.
    socket
        .set_recv_buffer_size(recv_buffer)
        .map_err(|e| e.to_string())?;
    let mut stream = socket
        .connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let body = rpc_body("SubscribeToTask", json!({ "id": task_id }));
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: {}\r\na2a-version: 1.0\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        ep.path(),
        ep.authority(),
        body.len()
    );
    stream
        .write_all(&[head.as_bytes(), &body].concat())
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("closed before the response head".into());
        }
        got.extend_from_slice(&buf[..n]);
    }
    if !got.starts_with(b"HTTP/1.1 200") {
        let line = got.split(|&b| b == b'\r').next().unwrap_or_default();
        return Err(format!(
            "SubscribeToTask: {}",
            String::from_utf8_lossy(line)
        ));
    }
    Ok(stream)
}
