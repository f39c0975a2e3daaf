//! [`ExtensionMethod`]: the description of a method an extension adds to
//! the protocol (its name and HTTP+JSON routes), next to the operation table
//! whose names and routes it may not take. The bindings register and check it
//! (`a2a-tower-http`); the delivery queue describes its two methods with it.

/// A method an extension adds, registered on the bindings with
/// [`JsonRpcLayer::extension_method`](https://docs.rs/a2a-tower/latest/a2a_tower/jsonrpc/type.JsonRpcLayer.html),
/// [`RestLayer::extension_method`](https://docs.rs/a2a-tower/latest/a2a_tower/rest/type.RestLayer.html),
/// `BindingsLayer::extension_method` or `A2aServerBuilder::extension_method`.
/// The core receives it as [`Operation::Extension`](crate::Operation::Extension)
/// with an [`ExtensionRequest`](crate::ExtensionRequest) and answers
/// [`A2aResponse::Extension`](crate::A2aResponse::Extension) with the JSON
/// result (another variant is InvalidAgentResponse). A core that does not
/// serve the method answers MethodNotFound, as the task engine and managed
/// tasks do. The body limit, version and `A2A-Extensions` checks apply as to
/// any call; extension methods never stream.
///
/// # JSON-RPC
///
/// The method is the registered name. `params` must be an object; absent or
/// `null` means `{}`, anything else is InvalidParams (−32602). The result is
/// the core's value; errors are JSON-RPC errors as for any method. The call
/// context's tenant is the `tenant` member of the params when it is a string.
///
/// # HTTP+JSON
///
/// Only a method with a [`route`](ExtensionMethod::route) is served, at its
/// path below the interface prefix, and under one `/{tenant}` segment like
/// the core routes. Paths are tried in this order: core routes without a
/// tenant, extension routes without a tenant, core routes under a tenant,
/// extension routes under a tenant; a trailing slash is ignored, and a path
/// known with another HTTP method is 405 with `Allow`.
///
/// The params object is built from:
/// - the body, for POST, PUT and PATCH: a JSON object (empty means `{}`),
///   `application/json`, `application/a2a+json` or no `Content-Type` (any
///   other is 415); not JSON is ParseError, JSON that is not an object
///   InvalidParams (400). GET and DELETE bodies are ignored;
/// - each `{name}` capture, percent-decoded, as a string member (a value that
///   is not UTF-8 once decoded is InvalidParams), and the tenant segment as
///   `tenant` (also the call context's tenant). These path values win over
///   body members of the same name, as for the core routes.
///
/// The query string is not read. Success is `200 application/json` with the
/// core's value as the body; errors are the `google.rpc.Status` body with
/// the status of the error table, as for any route.
///
/// # Registration
///
/// A [`ConfigError`](crate::ConfigError) when the method is registered: a
/// name that is empty, a core method or reserved by JSON-RPC (`rpc.…`), a
/// name registered twice; a route whose HTTP method is not GET, POST, PUT,
/// PATCH or DELETE, whose path does not parse (a leading `/`, non-empty
/// segments; a segment is a literal or `{name}` with an optional literal
/// suffix such as `{id}:reorder`; names of ASCII letters, digits and `_`,
/// each once, never `tenant`; no `%`, `?`, `#` or spaces), whose path some
/// core route's path also matches (`/tasks/{id}/queue` is fine,
/// `/tasks/queue` is the task `queue`), or that a route registered with the
/// same HTTP method also matches.
///
/// ```
/// use a2a_tower::{A2aRequest, A2aResponse, ExtensionMethod, JsonRpcLayer, Operation, RestLayer};
/// use a2a_tower::{A2aError, ErrorKind};
/// use a2a_tower::types::{AgentCard, AgentInterface};
/// use http_body_util::BodyExt;
/// use tower::{Layer, ServiceExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let card = AgentCard::new("Queue", "Reorders queues", "1.0.0")
///     .with_interface(AgentInterface::jsonrpc("http://localhost:8080/rpc"))
///     .with_interface(AgentInterface::http_json("http://localhost:8080/a2a"));
/// let reorder = ExtensionMethod::new("ReorderContextQueue")
///     .route(http::Method::POST, "/contexts/{contextId}/queue:reorder");
/// // The core answers the params it was given.
/// let core = tower::service_fn(|req: A2aRequest| async move {
///     match req.operation {
///         Operation::Extension(ext) => Ok(A2aResponse::Extension(ext.params.into())),
///         _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
///     }
/// });
/// let rest = RestLayer::new(&card)?.extension_method(reorder.clone())?.layer(core.clone());
/// let svc = JsonRpcLayer::new(&card)?.extension_method(reorder)?.fallback(rest).layer(core);
///
/// let req = http::Request::post("/a2a/acme/contexts/c%2D1/queue:reorder")
///     .header("content-type", "application/json")
///     .body(r#"{"revision":"7","taskIds":["t-2","t-1"]}"#.to_owned())?;
/// let res = svc.clone().oneshot(req).await?;
/// assert_eq!(res.status(), 200);
/// let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
/// assert_eq!(
///     body,
///     serde_json::json!({"revision": "7", "taskIds": ["t-2", "t-1"], "contextId": "c-1", "tenant": "acme"})
/// );
///
/// let rpc = r#"{"jsonrpc":"2.0","id":1,"method":"ReorderContextQueue","params":{"contextId":"c-1"}}"#;
/// let req = http::Request::post("/rpc")
///     .header("content-type", "application/json")
///     .body(rpc.to_owned())?;
/// let res = svc.oneshot(req).await?;
/// let body = res.into_body().collect().await?.to_bytes();
/// assert_eq!(&body[..], br#"{"jsonrpc":"2.0","id":1,"result":{"contextId":"c-1"}}"#);
/// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ExtensionMethod {
    name: &'static str,
    routes: Vec<(http::Method, String)>,
}

impl ExtensionMethod {
    /// The method `name`: its JSON-RPC method and
    /// [`ExtensionRequest::method`](crate::ExtensionRequest::method).
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            routes: Vec::new(),
        }
    }

    /// Adds an HTTP+JSON route: `method` on `path`, relative to the interface
    /// prefix and the tenant segment (`/contexts/{contextId}/queue`).
    /// Checked when the method is registered.
    pub fn route(mut self, method: http::Method, path: impl Into<String>) -> Self {
        self.routes.push((method, path.into()));
        self
    }

    /// The method's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The routes as added, unchecked: for the bindings' registration.
    #[doc(hidden)]
    pub fn into_routes(self) -> Vec<(http::Method, String)> {
        self.routes
    }
}
