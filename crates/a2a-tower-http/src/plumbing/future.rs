//! The response futures of the HTTP middleware.
//!
//! Each middleware exports a `ResponseFuture` of its own, an opaque wrapper
//! made by [`opaque_future!`] (as tower-http does), over one of two private
//! futures:
//!
//! - [`EdgeFuture`] for the edge layers (card, body limit, version): an answer
//!   ready at once (a card hit, a refusal) or the wrapped service's response;
//! - [`BindingFuture`] for the bindings: the same two, or a boxed call to the
//!   core (body read, decode, core call, encode).
//!
//! In both, the inner service's body is boxed into [`Body`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use crate::{Body, BoxError};

pin_project! {
    /// The future of an edge layer: an answer ready at once, or the wrapped
    /// service's response.
    #[project = EdgeProj]
    pub(crate) enum EdgeFuture<F> {
        Ready { response: Option<Response<Body>> },
        Inner { #[pin] future: F },
    }
}

impl<F> EdgeFuture<F> {
    /// Answers with `response` without calling anything.
    pub(crate) fn ready(response: Response<Body>) -> Self {
        Self::Ready {
            response: Some(response),
        }
    }

    /// Answers with the wrapped service's response.
    pub(crate) fn inner(future: F) -> Self {
        Self::Inner { future }
    }
}

impl<F, B, E> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response<Body>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            EdgeProj::Ready { response } => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            EdgeProj::Inner { future } => future.poll(cx).map_ok(|r| r.map(Body::new)),
        }
    }
}

#[cfg(any(feature = "jsonrpc", feature = "rest", feature = "grpc"))]
pub(crate) use binding::BindingFuture;

#[cfg(any(feature = "jsonrpc", feature = "rest", feature = "grpc"))]
mod binding {
    use super::*;

    /// A boxed call of a binding: body read, decode, core call, encode.
    pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

    pin_project! {
        /// The future of a binding: an answer ready at once, the fallback's
        /// response, or a call to the core.
        #[project = BindingProj]
        pub(crate) enum BindingFuture<F> {
            Edge { #[pin] future: EdgeFuture<F> },
            Call { future: CallFuture, span: tracing::Span },
        }
    }

    impl<F> BindingFuture<F> {
        /// Answers with `response` without calling anything.
        #[cfg(any(feature = "jsonrpc", feature = "rest"))]
        pub(crate) fn ready(response: Response<Body>) -> Self {
            Self::Edge {
                future: EdgeFuture::ready(response),
            }
        }

        /// Answers with the fallback's response.
        pub(crate) fn inner(future: F) -> Self {
            Self::Edge {
                future: EdgeFuture::inner(future),
            }
        }

        /// Answers with a call to the core, and records the answer's
        /// status as `http.response.status_code` on `span` (here rather
        /// than in an `async` wrapper around the call: such a wrapper
        /// doubled the boxed future, and the freed blocks stayed resident,
        /// ≈ 2 KiB per open stream).
        pub(crate) fn call(future: CallFuture, span: tracing::Span) -> Self {
            Self::Call { future, span }
        }
    }

    impl<F, B, E> Future for BindingFuture<F>
    where
        F: Future<Output = Result<Response<B>, E>>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        type Output = Result<Response<Body>, E>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            match self.project() {
                BindingProj::Edge { future } => future.poll(cx),
                BindingProj::Call { future, span } => {
                    let res = std::task::ready!(future.as_mut().poll(cx));
                    span.record("http.response.status_code", res.status().as_u16());
                    Poll::Ready(Ok(res))
                }
            }
        }
    }
}

/// A public `ResponseFuture` of one middleware, opaque over a private future
/// (tower-http's `opaque_future!`): its variants and constructors stay
/// private, and each middleware's future is a type of its own.
///
/// The wrapped future is built with `.into()`.
macro_rules! opaque_future {
    ($(#[$m:meta])* pub type $name:ident<$param:ident> = $actual:ty;) => {
        pin_project_lite::pin_project! {
            $(#[$m])*
            #[must_use = "futures do nothing unless polled"]
            pub struct $name<$param> {
                #[pin]
                inner: $actual,
            }
        }

        impl<$param> From<$actual> for $name<$param> {
            fn from(inner: $actual) -> Self {
                Self { inner }
            }
        }

        impl<$param> std::fmt::Debug for $name<$param> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), "(..)"))
            }
        }

        impl<$param, B, E> std::future::Future for $name<$param>
        where
            $param: std::future::Future<Output = Result<http::Response<B>, E>>,
            B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
            B::Error: Into<$crate::BoxError>,
        {
            type Output = Result<http::Response<$crate::Body>, E>;

            fn poll(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Self::Output> {
                self.project().inner.poll(cx)
            }
        }
    };
}

pub(crate) use opaque_future;
