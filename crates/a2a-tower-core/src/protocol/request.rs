//! [`A2aRequest`]: one A2A operation plus its call context, as the core
//! `Service<A2aRequest>` sees it.

use std::fmt;
use std::str::FromStr;

use http::{Extensions, HeaderMap};

use super::extension::ExtensionRequest;
use crate::types::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
};

/// A protocol version, `Major.Minor` (a patch component is ignored).
///
/// ```
/// use a2a_tower::ProtocolVersion;
/// let v: ProtocolVersion = "1.0.3".parse().unwrap();
/// assert_eq!(v, ProtocolVersion::V1_0);
/// assert_eq!(v.to_string(), "1.0");
/// assert!("one".parse::<ProtocolVersion>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl ProtocolVersion {
    /// A2A 1.0, the version this crate serves.
    pub const V1_0: Self = Self { major: 1, minor: 0 };
    /// A2A 0.3, what a missing or empty `A2A-Version` means.
    pub const V0_3: Self = Self { major: 0, minor: 3 };
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The text was not a `Major.Minor[.Patch]` version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidVersion;

impl fmt::Display for InvalidVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a Major.Minor protocol version")
    }
}

impl std::error::Error for InvalidVersion {}

impl FromStr for ProtocolVersion {
    type Err = InvalidVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut it = s.trim().split('.');
        let num = |p: Option<&str>| -> Result<u32, InvalidVersion> {
            let p = p.ok_or(InvalidVersion)?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(InvalidVersion);
            }
            p.parse().map_err(|_| InvalidVersion)
        };
        let major = num(it.next())?;
        let minor = num(it.next())?;
        if let Some(patch) = it.next() {
            num(Some(patch))?;
        }
        if it.next().is_some() {
            return Err(InvalidVersion);
        }
        Ok(Self { major, minor })
    }
}

/// One of the eleven A2A operations, or a method an extension adds, with its
/// decoded parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Operation {
    /// SendMessage.
    SendMessage(SendMessageRequest),
    /// SendStreamingMessage.
    SendStreamingMessage(SendMessageRequest),
    /// GetTask.
    GetTask(GetTaskRequest),
    /// ListTasks.
    ListTasks(ListTasksRequest),
    /// CancelTask.
    CancelTask(CancelTaskRequest),
    /// SubscribeToTask.
    SubscribeToTask(SubscribeToTaskRequest),
    /// CreateTaskPushNotificationConfig.
    CreateTaskPushNotificationConfig(TaskPushNotificationConfig),
    /// GetTaskPushNotificationConfig.
    GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest),
    /// ListTaskPushNotificationConfigs.
    ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest),
    /// DeleteTaskPushNotificationConfig.
    DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest),
    /// GetExtendedAgentCard.
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
    /// A method an extension adds (registered on the bindings with an
    /// [`ExtensionMethod`](crate::ExtensionMethod)). A core that does not
    /// serve it answers MethodNotFound.
    Extension(ExtensionRequest),
}

impl Operation {
    /// The JSON-RPC method name (an extension's registered name).
    pub const fn method(&self) -> &'static str {
        match (self, self.kind()) {
            (Self::Extension(r), _) => r.method,
            (_, Some(kind)) => kind.jsonrpc_method(),
            (_, None) => "",
        }
    }

    /// The operation answers with a stream of events.
    pub const fn is_streaming(&self) -> bool {
        match self.kind() {
            Some(kind) => kind.is_streaming(),
            None => false,
        }
    }

    /// The parameters as the JSON object a client sends: JSON-RPC's `params`,
    /// and the body and query of HTTP+JSON. An extension's are its own.
    ///
    /// ```
    /// use a2a_tower::Operation;
    /// use a2a_tower::types::GetTaskRequest;
    /// let op = Operation::GetTask(GetTaskRequest { id: "t-1".into(), ..Default::default() });
    /// assert_eq!(op.to_params().unwrap()["id"], "t-1");
    /// ```
    pub fn to_params(
        &self,
    ) -> Result<serde_json::Map<String, serde_json::Value>, serde_json::Error> {
        let v = match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => serde_json::to_value(r),
            Self::GetTask(r) => serde_json::to_value(r),
            Self::ListTasks(r) => serde_json::to_value(r),
            Self::CancelTask(r) => serde_json::to_value(r),
            Self::SubscribeToTask(r) => serde_json::to_value(r),
            Self::CreateTaskPushNotificationConfig(r) => serde_json::to_value(r),
            Self::GetTaskPushNotificationConfig(r) | Self::DeleteTaskPushNotificationConfig(r) => {
                serde_json::to_value(r)
            }
            Self::ListTaskPushNotificationConfigs(r) => serde_json::to_value(r),
            Self::GetExtendedAgentCard(r) => serde_json::to_value(r),
            Self::Extension(r) => return Ok(r.params.clone()),
        };
        Ok(match v? {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        })
    }

    /// The `tenant` field of the parameters (empty when unset; for an
    /// extension, its `tenant` member when that is a string).
    pub fn tenant(&self) -> &str {
        match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => &r.tenant,
            Self::GetTask(r) => &r.tenant,
            Self::ListTasks(r) => &r.tenant,
            Self::CancelTask(r) => &r.tenant,
            Self::SubscribeToTask(r) => &r.tenant,
            Self::CreateTaskPushNotificationConfig(r) => &r.tenant,
            Self::GetTaskPushNotificationConfig(r) | Self::DeleteTaskPushNotificationConfig(r) => {
                &r.tenant
            }
            Self::ListTaskPushNotificationConfigs(r) => &r.tenant,
            Self::GetExtendedAgentCard(r) => &r.tenant,
            Self::Extension(r) => r.tenant(),
        }
    }
}

/// Everything about a call that is not its parameters.
///
/// `extensions` are the HTTP request's `Extensions`: a principal inserted by a
/// host auth layer above the binding is found there.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The negotiated protocol version.
    pub version: Option<ProtocolVersion>,
    /// Extension URIs the client asked for and the agent declares (activated).
    pub activated_extensions: Vec<String>,
    /// Tenant: the REST path prefix, else the `tenant` parameter; empty when unset.
    pub tenant: String,
    /// The request headers (service parameters).
    pub headers: HeaderMap,
    /// The HTTP request's extensions.
    pub extensions: Extensions,
}

/// The extension URIs activated for a request: those the client listed in
/// `A2A-Extensions` that the agent's card declares. Inserted into the HTTP
/// request's extensions by the extensions layer; read into
/// [`CallContext::activated_extensions`] by the bindings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivatedExtensions(pub Vec<String>);

impl CallContext {
    /// The context of an HTTP request: the negotiated [`ProtocolVersion`] and
    /// [`ActivatedExtensions`] that the version and extensions layers put in
    /// the request's extensions, its headers, and all its extensions (so a
    /// principal inserted by a host layer reaches the core). `tenant` is left
    /// empty for the binding to fill.
    pub fn from_http_parts(parts: http::request::Parts) -> Self {
        let version = parts.extensions.get::<ProtocolVersion>().copied();
        let activated_extensions = parts
            .extensions
            .get::<ActivatedExtensions>()
            .map(|a| a.0.clone())
            .unwrap_or_default();
        Self {
            version,
            activated_extensions,
            tenant: String::new(),
            headers: parts.headers,
            extensions: parts.extensions,
        }
    }
}

/// Marks a call that came over the gRPC binding: the binding inserts it into
/// [`CallContext::extensions`]. Numbers in its `Struct` and `Value` fields
/// (data parts, metadata) arrived as protobuf doubles, so their exact text
/// is lost; the JSON bindings carry numbers exactly and never insert it.
///
/// ```
/// use a2a_tower::{CallContext, GrpcCall};
/// let mut context = CallContext::default();
/// assert!(context.extensions.get::<GrpcCall>().is_none());
/// context.extensions.insert(GrpcCall);
/// assert!(context.extensions.get::<GrpcCall>().is_some());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrpcCall;

/// One A2A call: the operation and its context.
///
/// ```
/// use a2a_tower::{A2aRequest, Operation};
/// use a2a_tower::types::GetTaskRequest;
/// let req = A2aRequest::new(Operation::GetTask(GetTaskRequest { id: "t-1".into(), ..Default::default() }));
/// assert_eq!(req.operation.method(), "GetTask");
/// ```
#[derive(Debug, Clone)]
pub struct A2aRequest {
    /// The operation.
    pub operation: Operation,
    /// The call context.
    pub context: CallContext,
}

impl A2aRequest {
    /// A request with an empty context (version unset, no tenant, no headers).
    pub fn new(operation: Operation) -> Self {
        let tenant = operation.tenant().to_owned();
        Self {
            operation,
            context: CallContext {
                tenant,
                ..CallContext::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!("0.3".parse(), Ok(ProtocolVersion::V0_3));
        assert_eq!(" 1.0 ".parse(), Ok(ProtocolVersion::V1_0));
        for bad in ["", "1", "1.", ".0", "1.0.0.0", "1.x", "+1.0", "1.0-rc"] {
            assert!(bad.parse::<ProtocolVersion>().is_err(), "{bad:?}");
        }
    }
}
