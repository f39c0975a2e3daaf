//! [`ConfigError`]: a layer or builder was given a configuration it cannot serve.

use std::fmt;

/// A configuration the stack cannot serve (an invalid card, a bad limit, …).
/// Returned when a layer is built, never at request time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    /// A configuration error with the given description.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a2a configuration error: {}", self.message)
    }
}

impl std::error::Error for ConfigError {}
