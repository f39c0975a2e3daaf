//! [`A2aService`]: a readable name for the core `Service<A2aRequest>`; and the
//! inner-service accessors every middleware of the crate has.

use tower_service::Service;

use crate::{A2aError, A2aRequest, A2aResponse};

/// A `Service<A2aRequest>` that answers with [`A2aResponse`] or [`A2aError`],
/// is `Clone + Send + 'static`, and has a `Send` future. Implemented for every
/// such service, so signatures can say `S: A2aService`.
///
/// ```
/// use a2a_tower::{A2aError, A2aRequest, A2aResponse, A2aService, ErrorKind};
/// fn assert_core<S: A2aService>(_: &S) {}
/// let core = tower::service_fn(|_req: A2aRequest| async {
///     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
/// });
/// assert_core(&core);
/// ```
pub trait A2aService:
    Service<A2aRequest, Response = A2aResponse, Error = A2aError, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S> A2aService for S where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError, Future: Send + 'static>
        + Clone
        + Send
        + 'static
{
}

/// `get_ref`, `get_mut` and `into_inner` for a middleware whose wrapped
/// service is the field `$field` (tower-http's `define_inner_service_accessors`).
#[doc(hidden)]
#[macro_export]
macro_rules! define_inner_service_accessors {
    ($field:ident) => {
        /// The inner service.
        pub fn get_ref(&self) -> &S {
            &self.$field
        }

        /// The inner service, mutably.
        pub fn get_mut(&mut self) -> &mut S {
            &mut self.$field
        }

        /// Consumes `self`, returning the inner service.
        pub fn into_inner(self) -> S {
            self.$field
        }
    };
}

#[doc(hidden)]
pub use crate::define_inner_service_accessors;
