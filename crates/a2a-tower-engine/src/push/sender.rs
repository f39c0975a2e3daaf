//! [`PushSender`]: delivers one `StreamResponse` to one push config, with a
//! per-attempt timeout and bounded retries.
//!
//! One delivery is: check the config (URL, headers), serialize the event
//! once (ProtoJSON, the bytes of a REST SSE event), then attempts until one
//! succeeds or the sender stops:
//!
//! | an attempt ends with | then |
//! |---|---|
//! | a 2xx answer | delivered |
//! | a redirect (301, 302, 307, 308) on the webhook's origin | followed, within the attempt, re-POSTing the body (at most `max_redirects`) |
//! | a redirect to another origin | [`Refused`](super::PushErrorKind::Refused): nothing is sent there |
//! | no allowed address ([`WebhookGuard`]) | [`Refused`](super::PushErrorKind::Refused), not retried |
//! | a timeout, a connection failure, 408, 429 or 5xx | retried after the [`Backoff`] (or the `Retry-After` asked, within the cap) |
//! | another status (303 and other 3xx included) | [`GaveUp`](super::PushErrorKind::GaveUp), not retried |
//!
//! `deliver` returns when the delivery is settled, so a caller that awaits
//! each delivery of a config before the next keeps that config's events in
//! order; deliveries to different configs share nothing but the connection
//! pool and run concurrently without waiting on each other.
//!
//! Each delivery runs in an `a2a.push.deliver` span with `task_id`,
//! `config_id`, `attempts`, `outcome` (`delivered`, `refused`, `gave_up`,
//! `invalid`) and the last `http.status`: never the URL, token or
//! credentials.
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::push::{Backoff, PushSender, WebhookGuard};
//! let sender = PushSender::builder()
//!     .guard(WebhookGuard::new().allow_networks(["10.20.0.0/16"])?)
//!     .timeout(Duration::from_secs(15))
//!     .retries(5)
//!     .backoff(Backoff::new(Duration::from_secs(1), Duration::from_secs(60)))
//!     .build()?;
//! assert_eq!(sender.timeout(), Duration::from_secs(15));
//! assert_eq!(sender.retries(), 5);
//! # Ok::<(), a2a_tower::ConfigError>(())
//! ```

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use tracing::Instrument;
use tracing::field::Empty;

use super::attempt::{Attempt, Outcome, PushClient};
use super::backoff::Backoff;
use super::builder::PushSenderBuilder;
use super::error::{PushError, PushErrorKind};
use super::guard::WebhookGuard;
use super::webhook::Webhook;
use crate::types::{StreamResponse, TaskPushNotificationConfig};

/// Delivers push notifications (see the module docs). Cloning is cheap: the
/// clones share one connection pool and the settings.
#[derive(Clone)]
pub struct PushSender {
    inner: Arc<Inner>,
}

/// The settings and the client, shared by clones.
pub(crate) struct Inner {
    pub(crate) client: PushClient,
    pub(crate) guard: WebhookGuard,
    pub(crate) timeout: Duration,
    pub(crate) retries: u32,
    pub(crate) backoff: Backoff,
    pub(crate) max_redirects: u32,
    pub(crate) user_agent: HeaderValue,
}

impl std::fmt::Debug for PushSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushSender")
            .field("guard", &self.inner.guard)
            .field("timeout", &self.inner.timeout)
            .field("retries", &self.inner.retries)
            .field("backoff", &self.inner.backoff)
            .field("max_redirects", &self.inner.max_redirects)
            .finish_non_exhaustive()
    }
}

impl Default for PushSender {
    /// [`PushSender::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl PushSender {
    /// A sender with the defaults: the guard on with an empty allow-list,
    /// 10 s per attempt, 3 retries, [`Backoff::default`], 3 redirects.
    pub fn new() -> Self {
        Self::builder()
            .build()
            .expect("the default settings are valid")
    }

    /// A builder, starting from the defaults of [`new`](Self::new).
    pub fn builder() -> PushSenderBuilder {
        PushSenderBuilder::default()
    }

    pub(crate) fn from_inner(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The SSRF guard.
    pub fn guard(&self) -> &WebhookGuard {
        &self.inner.guard
    }

    /// The timeout of one attempt (connection, redirects and answer).
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// How many times a failed attempt is retried (attempts = retries + 1).
    pub fn retries(&self) -> u32 {
        self.inner.retries
    }

    /// POSTs `event` to `config`'s webhook (see the module docs). `Ok` once
    /// the webhook answered 2xx.
    pub async fn deliver(
        &self,
        config: &TaskPushNotificationConfig,
        event: &StreamResponse,
    ) -> Result<(), PushError> {
        let span = tracing::info_span!(
            "a2a.push.deliver",
            task_id = %config.task_id,
            config_id = %config.id,
            attempts = Empty,
            outcome = Empty,
            http.status = Empty,
        );
        let (attempts, status, result) = self.settle(config, event).instrument(span.clone()).await;
        span.record("attempts", attempts);
        if let Some(s) = status {
            span.record("http.status", s.as_u16());
        }
        let outcome = match &result {
            Ok(()) => "delivered",
            Err(e) => match e.kind() {
                PushErrorKind::Refused => "refused",
                PushErrorKind::Invalid => "invalid",
                _ => "gave_up",
            },
        };
        span.record("outcome", outcome);
        a2a_tower_core::telemetry::count(
            a2a_tower_core::telemetry::names::PUSH_DELIVERIES,
            "outcome",
            outcome,
            1,
        );
        if attempts > 1 {
            a2a_tower_core::telemetry::count(
                a2a_tower_core::telemetry::names::PUSH_DELIVERIES,
                "outcome",
                "retry",
                u64::from(attempts - 1),
            );
        }
        result
    }

    /// The delivery: attempts made, the last status, the result.
    async fn settle(
        &self,
        config: &TaskPushNotificationConfig,
        event: &StreamResponse,
    ) -> (u32, Option<StatusCode>, Result<(), PushError>) {
        let hook = match Webhook::new(config) {
            Ok(hook) => hook,
            Err(e) => return (0, None, Err(e)),
        };
        let body = match crate::json::to_vec(event) {
            Ok(body) => Bytes::from(body),
            Err(_) => {
                let e = PushError::invalid("the event does not serialize");
                return (0, None, Err(e));
            }
        };
        let s = &self.inner;
        let attempt = Attempt {
            client: &s.client,
            hook: &hook,
            body: &body,
            user_agent: &s.user_agent,
            max_redirects: s.max_redirects,
        };
        let mut wait = None;
        let mut last = (None, "");
        for n in 0..=s.retries {
            if let Some(retry_after) = wait {
                tokio::time::sleep(s.backoff.delay_after(n - 1, retry_after)).await;
            }
            let outcome = tokio::time::timeout(s.timeout, attempt.run())
                .await
                .unwrap_or(Outcome::TIMED_OUT);
            match outcome {
                Outcome::Delivered(status) => return (n + 1, Some(status), Ok(())),
                Outcome::Stop(e) => return (n + 1, e.status(), Err(e.with_attempts(n + 1))),
                Outcome::Retry {
                    status,
                    retry_after,
                    detail,
                } => {
                    tracing::debug!(
                        attempt = n + 1,
                        status = status.map(|s| s.as_u16()),
                        detail,
                        "push attempt failed"
                    );
                    wait = Some(retry_after);
                    last = (status, detail);
                }
            }
        }
        let attempts = s.retries + 1;
        let err = PushError::new(PushErrorKind::GaveUp, last.1)
            .with_status(last.0)
            .with_attempts(attempts);
        (attempts, last.0, Err(err))
    }
}
