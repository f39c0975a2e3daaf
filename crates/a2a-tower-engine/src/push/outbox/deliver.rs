//! [`Deliver`]: how an event reaches a push config (the HTTP sender
//! implements it), and its outcome.

use std::future::Future;
use std::pin::Pin;

use crate::types::{StreamResponse, TaskPushNotificationConfig};

/// The outcome of one event's delivery to one config. Either way the
/// config's cursor moves past the event: retrying is the sender's job
/// (bounded, with backoff), and an event it gave up on is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The receiver accepted the event.
    Delivered,
    /// The sender gave up on the event (after its retries, or because the
    /// config cannot be delivered to).
    GaveUp,
}

/// Delivers one event to one push config (a POST of the event, see
/// a2a-spec.md §9). Called for one config's events one at a time, in order;
/// for different configs concurrently. It should bound its own time (a
/// per-attempt timeout, bounded retries): a config's next event waits for
/// its outcome, while the lease is renewed meanwhile.
pub trait Deliver: Send + Sync + 'static {
    /// Delivers `event` to `config`.
    fn deliver(
        &self,
        config: &TaskPushNotificationConfig,
        event: &StreamResponse,
    ) -> impl Future<Output = Delivery> + Send;
}

/// A boxed [`Deliver`].
pub(super) type DeliveryFuture<'a> = Pin<Box<dyn Future<Output = Delivery> + Send + 'a>>;

/// [`Deliver`] as a trait object.
pub(super) trait DynDeliver: Send + Sync + 'static {
    fn deliver_boxed<'a>(
        &'a self,
        config: &'a TaskPushNotificationConfig,
        event: &'a StreamResponse,
    ) -> DeliveryFuture<'a>;
}

impl<D: Deliver> DynDeliver for D {
    fn deliver_boxed<'a>(
        &'a self,
        config: &'a TaskPushNotificationConfig,
        event: &'a StreamResponse,
    ) -> DeliveryFuture<'a> {
        Box::pin(self.deliver(config, event))
    }
}

/// The HTTP sender: delivered on a 2xx answer, given up on anything else
/// (its retries and their bounds are the sender's).
impl Deliver for super::super::PushSender {
    async fn deliver(
        &self,
        config: &TaskPushNotificationConfig,
        event: &StreamResponse,
    ) -> Delivery {
        match super::super::PushSender::deliver(self, config, event).await {
            Ok(()) => Delivery::Delivered,
            Err(_) => Delivery::GaveUp,
        }
    }
}
