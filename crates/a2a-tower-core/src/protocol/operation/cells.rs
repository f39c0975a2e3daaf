//! The types of the operation table's cells: [`HttpVerb`] and [`HttpRoute`]
//! (the HTTP+JSON column), [`Capability`] and [`ResponseKind`].
//!
//! ```
//! use a2a_tower::{Capability, ErrorKind, HttpVerb};
//! assert_eq!(HttpVerb::Post.as_str(), "POST");
//! assert!(HttpVerb::Post.has_body() && !HttpVerb::Get.has_body());
//! assert_eq!(Capability::PushNotifications.field(), "pushNotifications");
//! assert_eq!(Capability::PushNotifications.missing_error(), ErrorKind::PushNotificationNotSupported);
//! ```

use std::fmt;

use crate::ErrorKind;
use crate::types::AgentCapabilities;

/// The HTTP method of a core HTTP+JSON route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpVerb {
    /// `GET`: parameters in the path and the query.
    Get,
    /// `POST`: parameters in the path and the JSON body.
    Post,
    /// `DELETE`: parameters in the path and the query.
    Delete,
}

impl HttpVerb {
    /// The method's name, as on the wire (`"GET"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Delete => "DELETE",
        }
    }

    /// The `http` method.
    ///
    /// ```
    /// assert_eq!(a2a_tower::HttpVerb::Delete.method(), http::Method::DELETE);
    /// ```
    pub const fn method(self) -> http::Method {
        match self {
            Self::Get => http::Method::GET,
            Self::Post => http::Method::POST,
            Self::Delete => http::Method::DELETE,
        }
    }

    /// The request carries a JSON body (POST); otherwise the parameters
    /// that are not in the path go in the query.
    pub const fn has_body(self) -> bool {
        matches!(self, Self::Post)
    }
}

impl fmt::Display for HttpVerb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One HTTP+JSON route of an operation (a2a-spec.md §7.1), relative to the
/// interface URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HttpRoute {
    /// The HTTP method.
    pub verb: HttpVerb,
    /// The path template, `{…}` for a path value (`/tasks/{id}:cancel`).
    pub path: &'static str,
    /// The same route under a tenant segment (`/{tenant}/tasks/{id}:cancel`).
    pub tenant_path: &'static str,
}

/// A card capability (`capabilities.*`) an operation needs (a2a-spec.md §4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// `streaming`.
    Streaming,
    /// `pushNotifications`.
    PushNotifications,
    /// `extendedAgentCard`.
    ExtendedAgentCard,
}

impl Capability {
    /// The member of the card's `capabilities` object.
    pub const fn field(self) -> &'static str {
        match self {
            Self::Streaming => "streaming",
            Self::PushNotifications => "pushNotifications",
            Self::ExtendedAgentCard => "extendedAgentCard",
        }
    }

    /// The error of an operation that needs the capability when the card
    /// does not declare it.
    pub const fn missing_error(self) -> ErrorKind {
        match self {
            Self::PushNotifications => ErrorKind::PushNotificationNotSupported,
            Self::Streaming | Self::ExtendedAgentCard => ErrorKind::UnsupportedOperation,
        }
    }

    /// The capabilities declare it (`true`; absent is not declared).
    ///
    /// ```
    /// use a2a_tower::Capability;
    /// use a2a_tower::types::AgentCapabilities;
    /// let caps = AgentCapabilities { streaming: Some(true), ..Default::default() };
    /// assert!(Capability::Streaming.declared(&caps));
    /// assert!(!Capability::PushNotifications.declared(&caps));
    /// ```
    pub fn declared(self, caps: &AgentCapabilities) -> bool {
        match self {
            Self::Streaming => caps.streaming(),
            Self::PushNotifications => caps.push_notifications(),
            Self::ExtendedAgentCard => caps.extended_agent_card(),
        }
    }
}

/// The [`A2aResponse`](crate::A2aResponse) variant that answers an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseKind {
    /// [`A2aResponse::SendMessage`](crate::A2aResponse::SendMessage): a task or a message.
    SendMessage,
    /// [`A2aResponse::Task`](crate::A2aResponse::Task).
    Task,
    /// [`A2aResponse::Tasks`](crate::A2aResponse::Tasks).
    Tasks,
    /// [`A2aResponse::PushConfig`](crate::A2aResponse::PushConfig).
    PushConfig,
    /// [`A2aResponse::PushConfigs`](crate::A2aResponse::PushConfigs).
    PushConfigs,
    /// [`A2aResponse::Empty`](crate::A2aResponse::Empty): `{}` on the wire.
    Empty,
    /// [`A2aResponse::AgentCard`](crate::A2aResponse::AgentCard).
    AgentCard,
    /// [`A2aResponse::Stream`](crate::A2aResponse::Stream): events (SSE, a
    /// server-streaming RPC).
    Stream,
}
