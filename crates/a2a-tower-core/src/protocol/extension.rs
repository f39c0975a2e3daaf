//! [`ExtensionRequest`]: a call of an extension method, as the core sees it.

use serde_json::{Map, Value};

/// A call of a method an extension adds to the protocol: the registered
/// method name and the JSON parameters object, the same whichever binding
/// carried it.
///
/// The JSON-RPC binding passes the request's `params` object; the HTTP+JSON
/// binding builds the object from the route (its captured path values and a
/// tenant segment, which win over body members) and the JSON body (see
/// [`ExtensionMethod`](crate::ExtensionMethod) for the rules).
///
/// ```
/// use a2a_tower::{A2aRequest, ExtensionRequest, Operation};
/// use serde_json::json;
///
/// let params = json!({"contextId": "ctx-1", "tenant": "acme"});
/// let params = params.as_object().cloned().unwrap();
/// let req = A2aRequest::new(Operation::Extension(ExtensionRequest::new("GetContextQueue", params)));
/// assert_eq!(req.operation.method(), "GetContextQueue");
/// assert_eq!(req.context.tenant, "acme");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExtensionRequest {
    /// The registered method name (the JSON-RPC method).
    pub method: &'static str,
    /// The parameters object.
    pub params: Map<String, Value>,
}

impl ExtensionRequest {
    /// A call of `method` with `params`.
    pub fn new(method: &'static str, params: Map<String, Value>) -> Self {
        Self { method, params }
    }

    /// The `tenant` member of the parameters when it is a string, else empty.
    pub fn tenant(&self) -> &str {
        self.params
            .get("tenant")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}
