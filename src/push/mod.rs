//! Push notifications (a2a-spec.md §9): every event of a task is POSTed to
//! each of its push configs.
//!
//! - [`outbox`]: the durable delivery driver over the task log — in order
//!   per config, after the task's commit, resumed after a crash, and
//!   delivered by exactly one host at a time on a shared PostgreSQL log.
//!
//! ```
//! use a2a_tower::push::outbox::{Deliver, Delivery};
//! use a2a_tower::types::{StreamResponse, TaskPushNotificationConfig};
//!
//! /// A sender that drops every event (a real one POSTs it).
//! struct Drop;
//! impl Deliver for Drop {
//!     async fn deliver(&self, _: &TaskPushNotificationConfig, _: &StreamResponse) -> Delivery {
//!         Delivery::GaveUp
//!     }
//! }
//! ```

pub mod outbox;
