//! [`ResponseFuture`]: the future of [`TaskService`](super::TaskService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::{A2aError, A2aResponse};

type BoxFuture = Pin<Box<dyn Future<Output = Result<A2aResponse, A2aError>> + Send>>;

/// The response future of [`TaskService`](super::TaskService).
pub struct ResponseFuture {
    inner: BoxFuture,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture(..)")
    }
}

impl ResponseFuture {
    pub(crate) fn new(inner: BoxFuture) -> Self {
        Self { inner }
    }
}

impl Future for ResponseFuture {
    type Output = Result<A2aResponse, A2aError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}
