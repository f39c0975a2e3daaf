//! [`HttpService`]: the HTTP services a client can run over, as one bound
//! (any `Service<http::Request<Full<Bytes>>>` answering with a body of
//! `Bytes`, cloneable and `Send`); every such service is one.
//!
//! ```
//! use a2a_tower::client::{HttpClient, HttpService};
//! fn usable<S: HttpService>() {}
//! usable::<HttpClient>();
//! ```

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use tower_service::Service;

use crate::BoxError;

/// An HTTP service a client can run over; implemented for every service that
/// fits (see the module docs).
pub trait HttpService:
    Service<
        Request<Full<Bytes>>,
        Response = http::Response<Self::ResBody>,
        Error: Into<BoxError>,
        Future: Send,
    > + Clone
    + Send
    + 'static
{
    /// The response body.
    type ResBody: http_body::Body<Data = Bytes, Error: Into<BoxError>> + Send + Unpin + 'static;
}

impl<S, B> HttpService for S
where
    S: Service<Request<Full<Bytes>>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    type ResBody = B;
}
