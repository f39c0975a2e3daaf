//! [`ResponseFuture`] of [`ExtensionsService`](super::ExtensionsService).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::{HeaderValue, Response};
use pin_project_lite::pin_project;

use super::A2A_EXTENSIONS;
use crate::{Body, BoxError};

pin_project! {
    /// Response future of [`ExtensionsService`](super::ExtensionsService): the inner
    /// service's response with the activated extensions in `A2A-Extensions`,
    /// or the ExtensionSupportRequired refusal.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Inner { #[pin] future: F, activated: Option<HeaderValue> },
        Refused { response: Option<Response<Body>> },
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn inner(future: F, activated: Option<HeaderValue>) -> Self {
        Self {
            kind: Kind::Inner { future, activated },
        }
    }

    pub(super) fn refused(response: Response<Body>) -> Self {
        Self {
            kind: Kind::Refused {
                response: Some(response),
            },
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
            KindProj::Inner { future, activated } => {
                let mut res = ready!(future.poll(cx))?;
                if let Some(value) = activated.take() {
                    res.headers_mut().insert(A2A_EXTENSIONS, value);
                }
                Poll::Ready(Ok(res.map(Body::new)))
            }
            KindProj::Refused { response } => {
                let response = response.take().expect("future polled after completion");
                Poll::Ready(Ok(response))
            }
        }
    }
}
