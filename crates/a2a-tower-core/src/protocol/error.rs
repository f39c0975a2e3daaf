//! [`A2aError`]: the one protocol error type, and the one table that maps each
//! kind to its JSON-RPC code, HTTP status, `google.rpc` status and ErrorInfo
//! reason (a2a-spec.md §5).
//!
//! Both wire forms, the JSON-RPC error object and the REST `google.rpc.Status`
//! body, are produced here and nowhere else. Messages are fixed per kind unless
//! crate code supplies a safe one; the `source` of an error never reaches the
//! wire or a trace span.
//!
//! ```
//! use a2a_tower::{A2aError, ErrorKind};
//! let err = A2aError::task_not_found("t-404");
//! assert_eq!(err.kind().jsonrpc_code(), -32001);
//! assert_eq!(err.kind().http_status(), 404);
//! let obj = err.to_jsonrpc_error();
//! assert_eq!(obj["data"][0]["reason"], "TASK_NOT_FOUND");
//! assert_eq!(obj["data"][0]["metadata"]["taskId"], "t-404");
//! let rest = err.to_rest_error();
//! assert_eq!(rest["error"]["status"], "NOT_FOUND");
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

/// The ErrorInfo `domain` of every A2A error.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// `@type` of the ErrorInfo detail.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of the BadRequest detail.
const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// A boxed error, as used for internal causes.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

macro_rules! error_table {
    ($(
        $(#[$m:meta])*
        $kind:ident => ($code:literal, $http:literal, $grpc:literal, $reason:literal, $msg:literal)
    ),+ $(,)?) => {
        /// What went wrong, as one row of the error table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind { $( $(#[$m])* $kind ),+ }

        impl ErrorKind {
            /// Every kind, in table order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind),+];

            /// The JSON-RPC error code.
            pub const fn jsonrpc_code(self) -> i64 { match self { $(Self::$kind => $code),+ } }
            /// The HTTP status of the REST binding.
            pub const fn http_status(self) -> u16 { match self { $(Self::$kind => $http),+ } }
            /// The `google.rpc.Code` name.
            pub const fn grpc_status(self) -> &'static str { match self { $(Self::$kind => $grpc),+ } }
            /// The ErrorInfo reason.
            pub const fn reason(self) -> &'static str { match self { $(Self::$kind => $reason),+ } }
            /// The fixed, safe message of the kind.
            pub const fn default_message(self) -> &'static str { match self { $(Self::$kind => $msg),+ } }

            /// The kind with this ErrorInfo reason.
            pub fn from_reason(reason: &str) -> Option<Self> {
                match reason { $($reason => Some(Self::$kind),)+ _ => None }
            }
        }
    };
}

error_table! {
    /// TaskNotFoundError: unknown task, or one the caller cannot see.
    TaskNotFound => (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"),
    /// TaskNotCancelableError: the task is already terminal.
    TaskNotCancelable => (-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", "Task cannot be canceled"),
    /// PushNotificationNotSupportedError.
    PushNotificationNotSupported => (-32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported"),
    /// UnsupportedOperationError.
    UnsupportedOperation => (-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "This operation is not supported"),
    /// ContentTypeNotSupportedError: a media type in the parts or output modes.
    ContentTypeNotSupported => (-32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types"),
    /// InvalidAgentResponseError.
    InvalidAgentResponse => (-32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", "Invalid agent response"),
    /// ExtendedAgentCardNotConfiguredError.
    ExtendedAgentCardNotConfigured => (-32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended agent card is not configured"),
    /// ExtensionSupportRequiredError: a required extension was not activated.
    ExtensionSupportRequired => (-32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED", "A required extension was not requested"),
    /// VersionNotSupportedError.
    VersionNotSupported => (-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "Protocol version is not supported"),
    /// JSON-RPC parse error: the body is not well-formed JSON.
    ParseError => (-32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR", "Invalid JSON payload"),
    /// JSON-RPC invalid request: not a valid request object.
    InvalidRequest => (-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", "Request payload validation error"),
    /// Unknown method or route.
    MethodNotFound => (-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND", "Method not found"),
    /// Parameters that do not decode or validate.
    InvalidParams => (-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS", "Invalid parameters"),
    /// An internal failure; the cause stays internal.
    Internal => (-32603, 500, "INTERNAL", "INTERNAL_ERROR", "Internal error"),
    /// The request body is larger than the configured limit.
    PayloadTooLarge => (-32600, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE", "Request payload too large"),
    /// The request's `Content-Type` is not JSON.
    UnsupportedMediaType => (-32005, 415, "INVALID_ARGUMENT", "UNSUPPORTED_MEDIA_TYPE", "Unsupported Content-Type; use application/json or application/a2a+json"),
    /// The HTTP method is not allowed on this path.
    MethodNotAllowed => (-32600, 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED", "HTTP method not allowed"),
    /// No or invalid credentials (host auth layers).
    Unauthenticated => (-31401, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", "Authentication required"),
    /// Valid credentials without permission (host auth layers).
    PermissionDenied => (-31403, 403, "PERMISSION_DENIED", "PERMISSION_DENIED", "Permission denied"),
    /// The service is shutting down or overloaded.
    Unavailable => (-32603, 503, "UNAVAILABLE", "UNAVAILABLE", "Service unavailable"),
}

/// The `a2a-protocol.org` ErrorInfo among the details of an error object
/// (JSON-RPC `data`, REST `details`).
fn a2a_error_info(obj: &Value) -> Option<&Value> {
    let details = obj.get("data").or_else(|| obj.get("details"))?;
    details.as_array()?.iter().find(|x| {
        x.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE)
            && x.get("domain").and_then(Value::as_str) == Some(ERROR_DOMAIN)
    })
}

/// `value` (an error object, or a body with one under `error`) is an A2A
/// error: it has a JSON-RPC code (negative, as every A2A and JSON-RPC code
/// is) or the A2A ErrorInfo. A `google.rpc.Status` without that ErrorInfo
/// (a host's 404, [`NotFound`](https://docs.rs/a2a-tower/latest/a2a_tower/struct.NotFound.html)'s) is not.
pub fn is_a2a_error(value: &Value) -> bool {
    let obj = value.get("error").unwrap_or(value);
    let rpc_code = obj
        .get("code")
        .and_then(Value::as_i64)
        .is_some_and(|c| c < 0);
    rpc_code || a2a_error_info(obj).is_some()
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The A2A protocol error.
///
/// Cheap to move (one box). Built from a kind, with an optional safe message,
/// ErrorInfo metadata (such as the task id) and field violations; an internal
/// cause may be attached with [`A2aError::with_source`] for logs and never
/// reaches the wire.
pub struct A2aError(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: Option<Cow<'static, str>>,
    metadata: BTreeMap<String, String>,
    violations: Vec<(String, String)>,
    extra: Vec<Value>,
    source: Option<BoxError>,
    /// A JSON-RPC code outside the table, read from a remote agent.
    code: Option<i64>,
}

impl A2aError {
    /// An error of the given kind with its fixed message.
    pub fn new(kind: ErrorKind) -> Self {
        Self(Box::new(Inner {
            kind,
            message: None,
            metadata: BTreeMap::new(),
            violations: Vec::new(),
            extra: Vec::new(),
            source: None,
            code: None,
        }))
    }

    /// The JSON-RPC code: the kind's, or the remote agent's own code when
    /// it is outside the table (see [`with_code`](Self::with_code)).
    ///
    /// ```
    /// use a2a_tower::{A2aError, ErrorKind};
    /// use serde_json::json;
    ///
    /// let err = A2aError::from_wire(&json!({"code": -32099, "message": "Quota exhausted"})).unwrap();
    /// assert_eq!(err.kind(), ErrorKind::Internal);
    /// assert_eq!(err.code(), -32099);
    /// assert_eq!(err.message(), "Quota exhausted");
    /// assert_eq!(A2aError::new(ErrorKind::TaskNotFound).code(), -32001);
    /// ```
    pub fn code(&self) -> i64 {
        self.0.code.unwrap_or(self.0.kind.jsonrpc_code())
    }

    /// Keeps a remote JSON-RPC `code` that the table does not have (the
    /// kind stays as given, usually Internal); a JSON-RPC answer carries it.
    pub fn with_code(mut self, code: i64) -> Self {
        self.0.code = Some(code);
        self
    }

    /// TaskNotFound, naming the task in the ErrorInfo metadata.
    pub fn task_not_found(task_id: impl Into<String>) -> Self {
        Self::new(ErrorKind::TaskNotFound).with_metadata("taskId", task_id)
    }

    /// InvalidParams with one field violation.
    pub fn invalid_params(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams).with_violation(field, description)
    }

    /// Internal, keeping `source` for logs only.
    pub fn internal(source: impl Into<BoxError>) -> Self {
        Self::new(ErrorKind::Internal).with_source(source)
    }

    /// Replaces the message. Only pass text you wrote, never text from an
    /// error of user code or a dependency.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.0.message = Some(message.into());
        self
    }

    /// Adds an ErrorInfo metadata entry.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.0.metadata.insert(key.into(), value.into());
        self
    }

    /// Adds a BadRequest field violation.
    #[must_use]
    pub fn with_violation(
        mut self,
        field: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.0.violations.push((field.into(), description.into()));
        self
    }

    /// Adds a `details` object of another type (written after the ErrorInfo
    /// and BadRequest). The client keeps such details of a remote error, so
    /// a proxy passes them on; only pass objects that are safe on the wire.
    #[must_use]
    pub fn with_detail(mut self, detail: Value) -> Self {
        self.0.extra.push(detail);
        self
    }

    /// The `details` objects besides the A2A ErrorInfo and the BadRequest.
    pub fn extra_details(&self) -> &[Value] {
        &self.0.extra
    }

    /// Attaches an internal cause (for logs; never on the wire).
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.0.source = Some(source.into());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The message sent on the wire.
    pub fn message(&self) -> &str {
        self.0
            .message
            .as_deref()
            .unwrap_or(self.0.kind.default_message())
    }

    /// ErrorInfo metadata.
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.0.metadata
    }

    /// BadRequest field violations `(field, description)`.
    pub fn violations(&self) -> &[(String, String)] {
        &self.0.violations
    }

    /// The `details` array shared by both wire forms: the ErrorInfo first,
    /// then a BadRequest if there are field violations.
    pub fn details(&self) -> Value {
        let mut info = serde_json::Map::new();
        info.insert("@type".into(), ERROR_INFO_TYPE.into());
        info.insert("reason".into(), self.0.kind.reason().into());
        info.insert("domain".into(), ERROR_DOMAIN.into());
        if !self.0.metadata.is_empty() {
            info.insert("metadata".into(), json!(self.0.metadata));
        }
        let mut details = vec![Value::Object(info)];
        if !self.0.violations.is_empty() {
            let v: Vec<Value> = self
                .0
                .violations
                .iter()
                .map(|(f, d)| json!({"field": f, "description": d}))
                .collect();
            details.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": v}));
        }
        details.extend(self.0.extra.iter().cloned());
        Value::Array(details)
    }

    /// The JSON-RPC error object `{code, message, data}`.
    pub fn to_jsonrpc_error(&self) -> Value {
        json!({
            "code": self.code(),
            "message": self.message(),
            "data": self.details(),
        })
    }

    /// The REST error body `{"error": {code, status, message, details}}`.
    pub fn to_rest_error(&self) -> Value {
        json!({"error": {
            "code": self.0.kind.http_status(),
            "status": self.0.kind.grpc_status(),
            "message": self.message(),
            "details": self.details(),
        }})
    }

    /// Reads an error back from a JSON-RPC error object or a REST error body
    /// (the client side). The kind comes from an `a2a-protocol.org` ErrorInfo
    /// reason when present, else from the JSON-RPC code or HTTP status.
    pub fn from_wire(value: &Value) -> Option<Self> {
        let obj = value.get("error").unwrap_or(value);
        let details = obj.get("data").or_else(|| obj.get("details"));
        let info = a2a_error_info(obj);
        let code = obj.get("code").and_then(Value::as_i64)?;
        let kind = info
            .and_then(|i| i.get("reason")?.as_str())
            .and_then(ErrorKind::from_reason)
            .or_else(|| {
                ErrorKind::ALL
                    .iter()
                    .copied()
                    .find(|k| k.jsonrpc_code() == code)
            })
            .or_else(|| {
                ErrorKind::ALL
                    .iter()
                    .copied()
                    .find(|k| i64::from(k.http_status()) == code)
            })
            .unwrap_or(ErrorKind::Internal);
        let mut err = Self::new(kind);
        // A JSON-RPC code (negative) outside the table keeps its number.
        if code < 0 && !ErrorKind::ALL.iter().any(|k| k.jsonrpc_code() == code) {
            err = err.with_code(code);
        }
        if let Some(m) = obj.get("message").and_then(Value::as_str)
            && m != kind.default_message()
        {
            err = err.with_message(m.to_owned());
        }
        if let Some(md) = info
            .and_then(|i| i.get("metadata"))
            .and_then(Value::as_object)
        {
            for (k, v) in md {
                if let Some(v) = v.as_str() {
                    err = err.with_metadata(k.clone(), v);
                }
            }
        }
        let all = details.and_then(Value::as_array).into_iter().flatten();
        for d in all {
            let ty = d.get("@type").and_then(Value::as_str);
            if info.is_some_and(|i| std::ptr::eq(i, d)) {
                continue;
            }
            let Some(violations) = d.get("fieldViolations").and_then(Value::as_array) else {
                err = err.with_detail(d.clone());
                continue;
            };
            if ty != Some(BAD_REQUEST_TYPE) {
                err = err.with_detail(d.clone());
                continue;
            }
            for v in violations {
                let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
                err = err.with_violation(text("field"), text("description"));
            }
        }
        Some(err)
    }
}

impl From<ErrorKind> for A2aError {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Debug for A2aError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("A2aError");
        d.field("kind", &self.0.kind)
            .field("message", &self.message());
        if let Some(code) = self.0.code {
            d.field("code", &code);
        }
        if !self.0.metadata.is_empty() {
            d.field("metadata", &self.0.metadata);
        }
        if !self.0.violations.is_empty() {
            d.field("violations", &self.0.violations);
        }
        if !self.0.extra.is_empty() {
            d.field("extra_details", &self.0.extra);
        }
        if let Some(s) = &self.0.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for A2aError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.kind.reason(), self.message())
    }
}

impl std::error::Error for A2aError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_spec_section_5() {
        use ErrorKind::*;
        let rows = [
            (TaskNotFound, -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
            (
                TaskNotCancelable,
                -32002,
                400,
                "FAILED_PRECONDITION",
                "TASK_NOT_CANCELABLE",
            ),
            (
                PushNotificationNotSupported,
                -32003,
                400,
                "FAILED_PRECONDITION",
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ),
            (
                UnsupportedOperation,
                -32004,
                400,
                "FAILED_PRECONDITION",
                "UNSUPPORTED_OPERATION",
            ),
            (
                ContentTypeNotSupported,
                -32005,
                400,
                "INVALID_ARGUMENT",
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            (
                InvalidAgentResponse,
                -32006,
                500,
                "INTERNAL",
                "INVALID_AGENT_RESPONSE",
            ),
            (
                ExtendedAgentCardNotConfigured,
                -32007,
                400,
                "FAILED_PRECONDITION",
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ),
            (
                ExtensionSupportRequired,
                -32008,
                400,
                "FAILED_PRECONDITION",
                "EXTENSION_SUPPORT_REQUIRED",
            ),
            (
                VersionNotSupported,
                -32009,
                400,
                "FAILED_PRECONDITION",
                "VERSION_NOT_SUPPORTED",
            ),
            (ParseError, -32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR"),
            (
                InvalidRequest,
                -32600,
                400,
                "INVALID_ARGUMENT",
                "INVALID_REQUEST",
            ),
            (MethodNotFound, -32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND"),
            (
                InvalidParams,
                -32602,
                400,
                "INVALID_ARGUMENT",
                "INVALID_PARAMS",
            ),
            (Internal, -32603, 500, "INTERNAL", "INTERNAL_ERROR"),
        ];
        for (k, code, http, grpc, reason) in rows {
            assert_eq!(
                (
                    k.jsonrpc_code(),
                    k.http_status(),
                    k.grpc_status(),
                    k.reason()
                ),
                (code, http, grpc, reason),
                "{k:?}"
            );
        }
    }

    #[test]
    fn source_never_reaches_the_wire() {
        let e = A2aError::internal("db password is hunter2");
        let s = format!("{} {} {}", e, e.to_jsonrpc_error(), e.to_rest_error());
        assert!(!s.contains("hunter2"));
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn rest_body_shape() {
        let e = A2aError::invalid_params("historyLength", "must not be negative");
        let v = e.to_rest_error();
        assert_eq!(v["error"]["code"], 400);
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(v["error"]["details"][0]["domain"], ERROR_DOMAIN);
        assert_eq!(
            v["error"]["details"][1]["fieldViolations"][0]["field"],
            "historyLength"
        );
    }

    #[test]
    fn wire_round_trip() {
        for &k in ErrorKind::ALL {
            let e = A2aError::new(k).with_metadata("taskId", "t");
            let back = A2aError::from_wire(&e.to_jsonrpc_error()).unwrap();
            assert_eq!(back.kind(), k);
            assert_eq!(back.metadata()["taskId"], "t");
            let back = A2aError::from_wire(&e.to_rest_error()).unwrap();
            assert_eq!(back.kind(), k);
        }
        // Message, metadata and violations come back complete in both forms.
        let e = A2aError::invalid_params("a", "bad a")
            .with_violation("b", "bad b")
            .with_metadata("k", "v")
            .with_message("custom");
        for wire in [e.to_jsonrpc_error(), e.to_rest_error()] {
            let back = A2aError::from_wire(&wire).unwrap();
            assert_eq!(back.kind(), ErrorKind::InvalidParams);
            assert_eq!(back.message(), "custom");
            assert_eq!(back.metadata(), e.metadata());
            assert_eq!(back.violations(), e.violations());
        }
        // Other details (another domain's ErrorInfo, DebugInfo, …) are kept
        // and written again after ours.
        let debug = json!({"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "d"});
        let other = json!({"@type": ERROR_INFO_TYPE, "reason": "QUOTA", "domain": "example.com"});
        let e = A2aError::task_not_found("t")
            .with_detail(debug.clone())
            .with_detail(other.clone());
        for wire in [e.to_jsonrpc_error(), e.to_rest_error()] {
            let back = A2aError::from_wire(&wire).unwrap();
            assert_eq!(back.kind(), ErrorKind::TaskNotFound);
            assert_eq!(back.extra_details(), [debug.clone(), other.clone()]);
            assert_eq!(back.details(), e.details());
        }
        // Without an ErrorInfo: the JSON-RPC code, else the HTTP status.
        let bare = |code: i64| A2aError::from_wire(&json!({"code": code, "message": "m"})).unwrap();
        assert_eq!(bare(-32001).kind(), ErrorKind::TaskNotFound);
        assert_eq!(bare(404).kind(), ErrorKind::TaskNotFound);
        assert_eq!(bare(-1).kind(), ErrorKind::Internal);
        assert_eq!(bare(-1).message(), "m");
        assert!(A2aError::from_wire(&json!({"message": "no code"})).is_none());
    }
}
