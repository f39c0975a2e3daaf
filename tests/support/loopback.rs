//! Serving any HTTP `Service` on a loopback listener with an ephemeral
//! port, as a real server would (hyper-util's auto connection builder).

use bytes::Bytes;
use http::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use a2a_tower::BoxError;

/// Serves `svc` (any `Service<Request<Incoming>>`) on a bound listener.
pub(crate) fn serve<S, B>(listener: TcpListener, svc: S)
where
    S: tower::Service<Request<hyper::body::Incoming>, Response = Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let svc = TowerToHyperService::new(svc.clone());
            tokio::spawn(async move {
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
}

/// A listener on `127.0.0.1:0` and its base URL.
pub(crate) async fn listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    (l, base)
}
