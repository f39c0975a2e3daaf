//! [`ResponseFuture`] of [`Rest`](super::Rest).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use crate::{Body, BoxError};

/// The boxed future of one HTTP+JSON call (body read, decode, core call, encode).
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

pin_project! {
    /// Response future of [`Rest`](super::Rest): an immediate answer (unknown
    /// route, wrong verb or content type), the fallback's future, or a call
    /// to the core.
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Ready { response: Option<Response<Body>> },
        Fallback { #[pin] future: F },
        Call { future: CallFuture },
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn ready(response: Response<Body>) -> Self {
        Self {
            kind: Kind::Ready {
                response: Some(response),
            },
        }
    }

    pub(crate) fn fallback(future: F) -> Self {
        Self {
            kind: Kind::Fallback { future },
        }
    }

    pub(crate) fn call(future: CallFuture) -> Self {
        Self {
            kind: Kind::Call { future },
        }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture(..)")
    }
}

impl<F, FB, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<FB>, E>>,
    FB: http_body::Body<Data = Bytes> + Send + 'static,
    FB::Error: Into<BoxError>,
{
    type Output = Result<Response<Body>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Ready { response } => {
                Poll::Ready(Ok(response.take().expect("polled after completion")))
            }
            KindProj::Fallback { future } => future.poll(cx).map_ok(|r| r.map(Body::new)),
            KindProj::Call { future } => future.as_mut().poll(cx).map(Ok),
        }
    }
}
