//! [`Body`]: the response body of every layer in this crate.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;

use crate::BoxError;

/// A boxed HTTP body of `Bytes` frames; the response body of this crate's layers.
///
/// ```
/// use a2a_tower::Body;
/// use http_body_util::BodyExt;
/// # tokio_test_block_on(async {
/// let bytes = Body::from("hi").collect().await.unwrap().to_bytes();
/// assert_eq!(&bytes[..], b"hi");
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub struct Body(UnsyncBoxBody<Bytes, BoxError>);

impl Body {
    /// Boxes any body (an existing [`Body`] is passed through unboxed).
    pub fn new<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let mut slot = Some(body);
        if let Some(b) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<Body>>() {
            return b.take().expect("body present");
        }
        let body = slot.take().expect("body present");
        Self(body.map_err(Into::into).boxed_unsync())
    }

    /// An empty body.
    pub fn empty() -> Self {
        Self::new(http_body_util::Empty::<Bytes>::new())
    }

    /// A body of one chunk.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self::new(http_body_util::Full::new(bytes.into()))
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Body(..)")
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Self::full(b)
    }
}

impl From<Vec<u8>> for Body {
    fn from(b: Vec<u8>) -> Self {
        Self::full(b)
    }
}

impl From<String> for Body {
    fn from(s: String) -> Self {
        Self::full(s)
    }
}

impl From<&'static str> for Body {
    fn from(s: &'static str) -> Self {
        Self::full(Bytes::from_static(s.as_bytes()))
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}
