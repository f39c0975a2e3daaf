//! HTTP plumbing shared by every HTTP layer of the crate: the response
//! [`Body`], the [`NotFound`] fallback, which binding a path belongs to and the
//! binding-shaped error responses ([`routes`]), and the response futures.
//!
//! It uses the wire model, the errors and `http`, and nothing of the bindings,
//! the engine or the task logs.
//!
//! ```
//! use a2a_tower::{Body, NotFound};
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let res = NotFound.oneshot(http::Request::new(Body::empty())).await.unwrap();
//! assert_eq!(res.status(), 404);
//! # });
//! ```

pub(crate) mod body;
pub(crate) mod future;
pub(crate) mod not_found;
pub(crate) mod routes;

pub use body::Body;
pub use not_found::NotFound;
