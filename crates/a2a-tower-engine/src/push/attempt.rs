//! One delivery attempt: the POST, the same-origin redirects it follows, and
//! what the answer means for the retry loop.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::header::RETRY_AFTER;
use http::{HeaderValue, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;

use super::backoff::retry_after;
use super::connect::{ConnectError, GuardedConnector};
use super::error::{PushError, PushErrorKind};
use super::webhook::{self, Redirect, Webhook};

/// The sender's HTTP client: hyper-util's pooled client over the guarded
/// connector, with TLS.
pub(crate) type PushClient = Client<HttpsConnector<GuardedConnector>, Full<Bytes>>;

/// At most this much of an answer's body is read (and discarded), so that
/// the connection can be reused.
const MAX_DRAIN: usize = 64 * 1024;

/// What one attempt came to.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The webhook answered 2xx, with this status.
    Delivered(StatusCode),
    /// A failure worth retrying.
    Retry {
        status: Option<StatusCode>,
        retry_after: Option<Duration>,
        detail: &'static str,
    },
    /// A failure not to retry; the caller adds the attempt count.
    Stop(PushError),
}

impl Outcome {
    /// The attempt did not finish within the per-attempt timeout.
    pub(crate) const TIMED_OUT: Self = Self::Retry {
        status: None,
        retry_after: None,
        detail: "the webhook did not answer in time",
    };
}

/// The settings an attempt needs.
pub(crate) struct Attempt<'a> {
    pub(crate) client: &'a PushClient,
    pub(crate) hook: &'a Webhook,
    pub(crate) body: &'a Bytes,
    pub(crate) user_agent: &'a HeaderValue,
    pub(crate) max_redirects: u32,
}

impl Attempt<'_> {
    /// POSTs the body, following redirects on the webhook's origin.
    pub(crate) async fn run(&self) -> Outcome {
        let mut uri = self.hook.uri.clone();
        let mut redirects = 0;
        loop {
            let req = self
                .hook
                .request(uri.clone(), self.body.clone(), self.user_agent);
            let res = match self.client.request(req).await {
                Ok(res) => res,
                Err(e) => return failed(&e),
            };
            let status = res.status();
            let stop = |kind, detail| {
                Outcome::Stop(PushError::new(kind, detail).with_status(Some(status)))
            };
            if matches!(status.as_u16(), 301 | 302 | 307 | 308) {
                let next = webhook::redirect(&uri, webhook::location(res.headers()));
                drain(res.into_body()).await;
                uri = match next {
                    Ok(next) if redirects < self.max_redirects => next,
                    Ok(_) => {
                        return stop(
                            PushErrorKind::GaveUp,
                            "the webhook redirected too many times",
                        );
                    }
                    Err(Redirect::CrossOrigin) => {
                        return stop(
                            PushErrorKind::Refused,
                            "the webhook redirected to another origin",
                        );
                    }
                    Err(Redirect::Malformed) => {
                        return stop(
                            PushErrorKind::GaveUp,
                            "the webhook redirected without a valid Location",
                        );
                    }
                };
                redirects += 1;
                continue;
            }
            let wait = res
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| retry_after(v, SystemTime::now()));
            drain(res.into_body()).await;
            return if status.is_success() {
                Outcome::Delivered(status)
            } else if retryable(status) {
                Outcome::Retry {
                    status: Some(status),
                    retry_after: wait,
                    detail: "the webhook answered with an error",
                }
            } else {
                stop(
                    PushErrorKind::GaveUp,
                    "the webhook refused the notification",
                )
            };
        }
    }
}

/// Statuses a retry may fix: 408, 429 and every 5xx.
fn retryable(status: StatusCode) -> bool {
    status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
}

/// A request that got no answer: a guard refusal stops, anything else
/// (resolution, connection, a connection lost mid-request) is retried.
fn failed(err: &hyper_util::client::legacy::Error) -> Outcome {
    if let Some(class) = ConnectError::refusal_in(err) {
        let detail = if class.is_some() {
            "the webhook has no public address"
        } else {
            "the webhook host has no address"
        };
        return Outcome::Stop(PushError::new(PushErrorKind::Refused, detail).with_class(class));
    }
    Outcome::Retry {
        status: None,
        retry_after: None,
        detail: if err.is_connect() {
            "the webhook could not be reached"
        } else {
            "the connection to the webhook failed"
        },
    }
}

/// Reads and discards up to [`MAX_DRAIN`] bytes of a body.
async fn drain<B>(body: B)
where
    B: http_body::Body,
    B::Error: Into<crate::BoxError>,
{
    let _ = Limited::new(body, MAX_DRAIN).collect().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        for s in [408, 429, 500, 501, 502, 503, 504, 599] {
            assert!(retryable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [200, 304, 400, 401, 403, 404, 409, 410, 413, 422] {
            assert!(!retryable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }
}
