//! The external-wait extension: the metadata keys with which a managed task
//! publishes the one wait it is blocked on, and with which an answer names
//! it. Shared by the server side (`managed`) and the client side (`tool`).
//!
//! ```
//! use a2a_tower::managed::{ANSWER_SCHEMA_KEY, EXTERNAL_WAIT_EXTENSION, WAIT_KEY};
//! assert_eq!(WAIT_KEY, "scope.wait");
//! assert_eq!(ANSWER_SCHEMA_KEY, "scope.answer_schema");
//! assert_eq!(EXTERNAL_WAIT_EXTENSION, "urn:scope:a2a:external-wait");
//! ```

/// Message metadata: the wait an answer is for, `{"process": .., "key": ..}`;
/// also on an input-required status message when exactly one wait is open.
pub const WAIT_KEY: &str = "scope.wait";
/// Status message metadata: the answer's schema, when exactly one wait is open.
pub const ANSWER_SCHEMA_KEY: &str = "scope.answer_schema";
/// The extension a managed task's card declares.
pub const EXTERNAL_WAIT_EXTENSION: &str = "urn:scope:a2a:external-wait";
