//! [`ResponseFuture`]: the card response, ready at once, or the inner service's.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use crate::{Body, BoxError};

pin_project! {
    /// Response future of [`AgentCardService`](super::AgentCardService).
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Card { response: Option<Response<Body>> },
        Inner { #[pin] future: F },
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn card(response: Response<Body>) -> Self {
        Self {
            kind: Kind::Card {
                response: Some(response),
            },
        }
    }

    pub(crate) fn inner(future: F) -> Self {
        Self {
            kind: Kind::Inner { future },
        }
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
            KindProj::Card { response } => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            KindProj::Inner { future } => future.poll(cx).map_ok(|res| res.map(Body::new)),
        }
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
