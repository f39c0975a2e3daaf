//! [`ResponseFuture`]: the response future shared by the HTTP layers and the
//! bindings. A layer either answers at once (a card hit, a refusal), passes
//! the request to the service it wraps, or (the bindings) runs a boxed call
//! to the core; the inner service's body is boxed into [`Body`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use crate::{Body, BoxError};

/// A boxed call of a binding: body read, decode, core call, encode.
#[cfg_attr(not(any(feature = "jsonrpc", feature = "rest")), allow(dead_code))]
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

pin_project! {
    /// Response future of this crate's HTTP services: an answer ready at once,
    /// the wrapped service's response, or a binding's call to the core.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Ready { response: Option<Response<Body>> },
        Inner { #[pin] future: F },
        Call { future: CallFuture },
    }
}

impl<F> ResponseFuture<F> {
    /// Answers with `response` without calling anything.
    pub(crate) fn ready(response: Response<Body>) -> Self {
        Self {
            kind: Kind::Ready {
                response: Some(response),
            },
        }
    }

    /// Answers with the wrapped service's response.
    pub(crate) fn inner(future: F) -> Self {
        Self {
            kind: Kind::Inner { future },
        }
    }

    /// Answers with a binding's call.
    #[cfg_attr(not(any(feature = "jsonrpc", feature = "rest")), allow(dead_code))]
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

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response<Body>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Ready { response } => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            KindProj::Inner { future } => future.poll(cx).map_ok(|r| r.map(Body::new)),
            KindProj::Call { future } => future.as_mut().poll(cx).map(Ok),
        }
    }
}
