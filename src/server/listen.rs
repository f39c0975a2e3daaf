//! [`serve`]: an HTTP application (an assembled A2A server, or any
//! `Service<http::Request<Incoming>>`) on a Tokio TCP listener through
//! hyper-util, for hosts without a web framework.
//!
//! ```
//! use a2a_tower::engine::agent_fn;
//! use a2a_tower::server::{A2aServer, serve};
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc(format!("http://{addr}/")))
//!     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"));
//! let app = A2aServer::builder(card).agent(agent_fn(|i| async move { Ok(i.text) })).await?;
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(serve(listener, app).with_graceful_shutdown(async {
//!     let _ = stopped.await;
//! }).into_future());
//!
//! let mut conn = tokio::net::TcpStream::connect(addr).await?;
//! conn.write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n").await?;
//! let mut answer = String::new();
//! conn.read_to_string(&mut answer).await?;
//! assert!(answer.starts_with("HTTP/1.1 200 OK"));
//! assert!(answer.contains(r#""name":"Echo""#));
//!
//! stop.send(()).unwrap();
//! server.await??; // stopped accepting; every connection closed
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::future::{Future, IntoFuture};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tower_service::Service;

use crate::BoxError;

/// How long accepting pauses after an error that retrying at once would
/// repeat (out of file descriptors, of memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `app` on `listener`: every accepted connection is served by
/// hyper-util (HTTP/1.1, or HTTP/2 with prior knowledge, upgrades allowed),
/// with a clone of `app`.
///
/// Await the result to serve until the process ends, or call
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown) to stop on a
/// signal. A failed accept never ends serving: a connection reset before it
/// was accepted is skipped, and any other error (out of file descriptors,
/// say) is logged with `tracing` and retried after 100 ms.
///
/// A listener from `TcpListener::bind` queues 128 connections not yet
/// accepted (the operating system's limit may be lower); for bursts of
/// clients connecting at once, bind a `tokio::net::TcpSocket` and `listen`
/// with a larger backlog.
pub fn serve<S, B>(listener: TcpListener, app: S) -> Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Serve { listener, app }
}

/// Serving without a shutdown signal (see [`serve`]); await it.
#[must_use = "serving starts when the future is awaited"]
pub struct Serve<S> {
    listener: TcpListener,
    app: S,
}

impl<S> Serve<S> {
    /// Stops serving when `signal` completes: the listener is closed at
    /// once, every open connection finishes the requests it is serving (an
    /// idle one closes now), and the future completes when all have closed.
    /// An open event stream (SSE) holds its connection until it ends, so
    /// bound the wait where that matters (`tokio::time::timeout` after the
    /// signal).
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<S, F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        WithGracefulShutdown {
            listener: self.listener,
            app: self.app,
            signal,
        }
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl<S> fmt::Debug for Serve<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

/// Serving until a shutdown signal (see [`Serve::with_graceful_shutdown`]);
/// await it.
#[must_use = "serving starts when the future is awaited"]
pub struct WithGracefulShutdown<S, F> {
    listener: TcpListener,
    app: S,
    signal: F,
}

impl<S, F> WithGracefulShutdown<S, F> {
    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl<S, F> fmt::Debug for WithGracefulShutdown<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

/// The future of [`Serve`] and [`WithGracefulShutdown`]: completes (`Ok`)
/// once the shutdown signal fired and every connection closed; without a
/// signal, never.
#[must_use = "futures do nothing unless polled"]
pub struct ServeFuture(Pin<Box<dyn Future<Output = io::Result<()>> + Send>>);

impl Future for ServeFuture {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for ServeFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServeFuture(..)")
    }
}

impl<S, B> IntoFuture for Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        ServeFuture(Box::pin(run(
            self.listener,
            self.app,
            std::future::pending(),
        )))
    }
}

impl<S, B, F> IntoFuture for WithGracefulShutdown<S, F>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        ServeFuture(Box::pin(run(self.listener, self.app, self.signal)))
    }
}

/// The accept loop: each connection in a task of its own, watched for the
/// graceful shutdown that `signal` starts.
async fn run<S, B>(
    listener: TcpListener,
    app: S,
    signal: impl Future<Output = ()> + Send,
) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let http = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let mut signal = std::pin::pin!(signal);
    loop {
        let stream = tokio::select! {
            accepted = accept(&listener) => accepted,
            () = &mut signal => break,
        };
        let svc = TowerToHyperService::new(app.clone());
        let conn = http
            .serve_connection_with_upgrades(TokioIo::new(stream), svc)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The next accepted connection; errors are skipped (a connection reset
/// before it was accepted) or backed off (anything else).
async fn accept(listener: &TcpListener) -> TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return stream,
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                tracing::error!(error = %e, "accept failed; retrying");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// An error of one connection, not of the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt as _, Empty, Full};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::sync::{Notify, oneshot};

    use super::*;

    /// Answers `hello, PATH`.
    async fn hello(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
        let text = format!("hello, {}", req.uri().path());
        Ok(Response::new(Full::new(Bytes::from(text))))
    }

    async fn bound() -> (TcpListener, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    /// One HTTP/1.1 request on a new connection, the whole answer as text.
    async fn get(addr: SocketAddr, path: &str) -> io::Result<String> {
        let mut conn = TcpStream::connect(addr).await?;
        let head = format!("GET {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n");
        conn.write_all(head.as_bytes()).await?;
        let mut answer = String::new();
        conn.read_to_string(&mut answer).await?;
        Ok(answer)
    }

    #[tokio::test]
    async fn answers_http1_and_http2_on_one_listener() {
        let (listener, addr) = bound().await;
        let server = serve(listener, tower::service_fn(hello));
        assert_eq!(server.local_addr().unwrap(), addr);
        let server = tokio::spawn(server.into_future());

        let answer = get(addr, "/one").await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("hello, /one"), "{answer}");

        // HTTP/2 with prior knowledge, on the same port.
        let io = TokioIo::new(TcpStream::connect(addr).await.unwrap());
        let (mut h2, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .unwrap();
        tokio::spawn(conn);
        let req = Request::get(format!("http://{addr}/two"))
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = h2.send_request(req).await.unwrap();
        assert_eq!(res.version(), http::Version::HTTP_2);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "hello, /two");

        assert!(!server.is_finished(), "without a signal it serves on");
        server.abort();
    }

    #[tokio::test]
    async fn graceful_shutdown_waits_for_the_request_in_flight() {
        let (listener, addr) = bound().await;
        let started = Arc::new(Notify::new());
        let (release, released) = oneshot::channel::<()>();
        let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
        let app = {
            let started = started.clone();
            tower::service_fn(move |_: Request<Incoming>| {
                let (started, released) = (started.clone(), released.clone());
                async move {
                    started.notify_one();
                    let gate = released.lock().await.take();
                    if let Some(gate) = gate {
                        let _ = gate.await;
                    }
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("done"))))
                }
            })
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let server = serve(listener, app).with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        let server = tokio::spawn(server.into_future());

        let client = tokio::spawn(get(addr, "/slow"));
        started.notified().await;
        stop.send(()).unwrap();
        // The listener closes; the request in flight keeps the server up.
        let refused = loop {
            match TcpStream::connect(addr).await {
                Err(e) => break e,
                Ok(_) => tokio::task::yield_now().await,
            }
        };
        // Refused, or reset when the attempt raced the close.
        assert!(is_connection_error(&refused), "{refused}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!server.is_finished(), "waits for the request in flight");

        release.send(()).unwrap();
        let answer = client.await.unwrap().unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("done"), "{answer}");
        server.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn graceful_shutdown_closes_idle_connections_and_completes() {
        let (listener, addr) = bound().await;
        let (stop, stopped) = oneshot::channel::<()>();
        let server = serve(listener, tower::service_fn(hello)).with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        let server = tokio::spawn(server.into_future());
        // A keep-alive connection that has been answered and sits idle.
        let mut idle = TcpStream::connect(addr).await.unwrap();
        idle.write_all(b"GET /idle HTTP/1.1\r\nhost: test\r\n\r\n")
            .await
            .unwrap();
        let mut buf = vec![0; 1024];
        let n = idle.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK\r\n"));

        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
        assert_eq!(
            idle.read(&mut buf).await.unwrap(),
            0,
            "closed by the server"
        );
    }

    #[test]
    fn connection_errors_are_not_listener_errors() {
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert!(is_connection_error(&reset));
        assert!(!is_connection_error(&io::Error::from_raw_os_error(24))); // EMFILE
    }
}
