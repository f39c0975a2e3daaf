//! A webhook receiver on loopback for the push tests: it records every
//! request (path, headers, body, time) and every accepted TCP connection,
//! and answers from a script (200 once the script is empty). It outlives
//! the server that posts to it, so a test can kill and restart a server and
//! read everything the receiver got across both.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: Instant,
}

/// How the receiver answers a request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// This status, empty body.
    Status(u16),
    /// This status with one header (`Location`, `Retry-After`, …).
    With(u16, &'static str, String),
    /// This status with one header, closing the connection after it.
    Closing(u16, &'static str, String),
    /// Never answers (the connection stays open).
    Hang,
}

#[derive(Default)]
struct State {
    hits: Mutex<Vec<Hit>>,
    replies: Mutex<VecDeque<Reply>>,
    connections: AtomicUsize,
}

/// A receiver serving on a loopback port.
#[derive(Clone)]
pub(crate) struct Receiver {
    /// `http://127.0.0.1:<port>`.
    pub(crate) base: String,
    /// Its port.
    pub(crate) port: u16,
    state: Arc<State>,
}

impl Receiver {
    /// A receiver on `127.0.0.1:0`.
    pub(crate) async fn start() -> Self {
        Self::on(TcpListener::bind("127.0.0.1:0").await.unwrap())
    }

    /// A receiver on `listener`.
    pub(crate) fn on(listener: TcpListener) -> Self {
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let st = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                st.connections.fetch_add(1, Ordering::SeqCst);
                let st = st.clone();
                let svc = hyper::service::service_fn(move |req| answer(st.clone(), req));
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            port,
            state,
        }
    }

    /// The URL of `path` on this receiver.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Queues the answers to the next requests, in order.
    pub(crate) fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.replies.lock().unwrap().extend(replies);
    }

    /// Drops the answers still queued: from now on every request gets 200.
    pub(crate) fn clear_script(&self) {
        self.state.replies.lock().unwrap().clear();
    }

    /// Every request so far.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// The JSON bodies received, each distinct one once, in the order they
    /// first arrived: an event retried or delivered again counts once.
    pub(crate) fn events(&self) -> Vec<Value> {
        let mut events: Vec<Value> = Vec::new();
        for hit in self.hits() {
            let v: Value = serde_json::from_slice(&hit.body)
                .unwrap_or_else(|e| panic!("a body that is not JSON ({e}): {:?}", hit.body));
            if !events.contains(&v) {
                events.push(v);
            }
        }
        events
    }

    /// [`events`](Self::events) once the last one is a status update to
    /// COMPLETED; fails the test after 30 s.
    pub(crate) async fn events_until_completed(&self) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let events = self.events();
            if events
                .last()
                .is_some_and(|e| e["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
            {
                return events;
            }
            assert!(
                Instant::now() < deadline,
                "no COMPLETED status update within 30 s; got {events:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How many TCP connections it accepted.
    pub(crate) fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }
}

async fn answer(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    state.hits.lock().unwrap().push(Hit {
        path: parts.uri.path().to_owned(),
        headers: parts.headers,
        body,
        at: Instant::now(),
    });
    let reply = state.replies.lock().unwrap().pop_front();
    let mut res = Response::new(Full::default());
    match reply {
        None => {}
        Some(Reply::Status(s)) => *res.status_mut() = StatusCode::from_u16(s).unwrap(),
        Some(Reply::With(s, name, value)) => {
            *res.status_mut() = StatusCode::from_u16(s).unwrap();
            res.headers_mut().insert(name, value.parse().unwrap());
        }
        Some(Reply::Closing(s, name, value)) => {
            *res.status_mut() = StatusCode::from_u16(s).unwrap();
            res.headers_mut().insert(name, value.parse().unwrap());
            res.headers_mut()
                .insert("connection", "close".parse().unwrap());
        }
        Some(Reply::Hang) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    Ok(res)
}
