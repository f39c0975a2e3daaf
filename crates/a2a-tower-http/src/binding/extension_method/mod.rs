//! Extension methods: operations an extension adds to the protocol, served
//! by both bindings next to the core's eleven and handed to the core as
//! [`Operation::Extension`](crate::Operation::Extension).
//!
//! - [`ExtensionMethod`]: the registration (a name, optional HTTP+JSON routes),
//!   a2a-tower-core's, public at the crate root; the rules are in its docs;
//! - `template`: route paths with `{name}` captures;
//! - `table`: the registered methods of one binding, checked against the
//!   core's names and routes (the operation table) and against each other.

mod table;
mod template;

pub(crate) use table::ExtensionMethods;
#[cfg(feature = "rest")]
pub(crate) use {table::Found, template::MAX_SEGMENTS};

use crate::ExtensionMethod;
