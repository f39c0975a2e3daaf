//! Which binding a request path belongs to, derived from the card's interfaces,
//! and the binding-shaped error response used by every HTTP-level layer.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};

use crate::types::{AgentCard, BINDING_HTTP_JSON, BINDING_JSONRPC};
use crate::{A2aError, Body, ConfigError, ErrorKind};

/// The well-known path of the agent card (RFC 8615).
pub(crate) const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The HTTP binding of a request, which decides the shape of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// JSON-RPC 2.0: a JSON-RPC error object.
    JsonRpc,
    /// HTTP+JSON: the `google.rpc.Status` error body.
    Rest,
    /// gRPC: a trailers-only response with the status.
    #[cfg(feature = "grpc")]
    Grpc,
}

/// The paths of the card's JSON-RPC interface and HTTP+JSON prefix, and
/// whether it has a gRPC interface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Routes {
    jsonrpc: Option<String>,
    rest: Option<String>,
    #[cfg(feature = "grpc")]
    grpc: bool,
}

/// The path of an absolute `http(s)` URL without user-info, query or fragment.
pub(crate) fn interface_path(url: &str) -> Result<String, ConfigError> {
    let bad = |why: &str| ConfigError::new(format!("interface url {url:?}: {why}"));
    if url.contains('#') {
        return Err(bad("must not have a fragment"));
    }
    let uri: http::Uri = url.parse().map_err(|_| bad("is not a valid URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(bad("must be an absolute http(s) URL")),
    }
    let authority = uri.authority().ok_or_else(|| bad("has no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("must not contain user-info"));
    }
    if authority.host().is_empty() {
        return Err(bad("has no host"));
    }
    if uri.query().is_some() || url.contains('?') {
        return Err(bad("must not have a query"));
    }
    let path = uri.path();
    Ok(if path.is_empty() {
        "/".to_owned()
    } else {
        path.to_owned()
    })
}

/// `p` without trailing slashes (`/` stays `/`).
pub(crate) fn trim_slash(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() { "/" } else { t }
}

impl Routes {
    /// Routes of the first JSONRPC and first HTTP+JSON interface of the card.
    pub(crate) fn from_card(card: &AgentCard) -> Result<Self, ConfigError> {
        let jsonrpc = card
            .interface(BINDING_JSONRPC)
            .map(|i| interface_path(&i.url).map(|p| trim_slash(&p).to_owned()))
            .transpose()?;
        let rest = card
            .interface(BINDING_HTTP_JSON)
            .map(|i| interface_path(&i.url).map(|p| trim_slash(&p).to_owned()))
            .transpose()?;
        Ok(Self {
            jsonrpc,
            rest,
            #[cfg(feature = "grpc")]
            grpc: card.interface(crate::types::BINDING_GRPC).is_some(),
        })
    }

    /// The binding of a request: gRPC by its content type (when the card
    /// has a gRPC interface), else by its path ([`Routes::binding`]).
    pub(crate) fn binding_of<B>(&self, req: &http::Request<B>) -> Option<Binding> {
        #[cfg(feature = "grpc")]
        if self.grpc && crate::binding::grpc::status::is_grpc(req.headers()) {
            return Some(Binding::Grpc);
        }
        self.binding(req.uri().path())
    }

    /// The JSON-RPC path (no trailing slash, `/` for the root).
    #[cfg(feature = "jsonrpc")]
    pub(crate) fn jsonrpc_path(&self) -> Option<&str> {
        self.jsonrpc.as_deref()
    }

    /// The HTTP+JSON prefix (no trailing slash, `/` for the root).
    #[cfg(feature = "rest")]
    pub(crate) fn rest_prefix(&self) -> Option<&str> {
        self.rest.as_deref()
    }

    /// The request path is the JSON-RPC endpoint (with or without a trailing slash).
    pub(crate) fn is_jsonrpc(&self, path: &str) -> bool {
        self.jsonrpc
            .as_deref()
            .is_some_and(|p| trim_slash(path) == p)
    }

    /// The part of `path` below the HTTP+JSON prefix, if it is under it.
    pub(crate) fn rest_suffix<'p>(&self, path: &'p str) -> Option<&'p str> {
        let prefix = self.rest.as_deref()?;
        if prefix == "/" {
            return Some(path);
        }
        let rest = path.strip_prefix(prefix)?;
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    }

    /// The binding the path belongs to; JSON-RPC's exact path wins. The card
    /// endpoint belongs to no binding, even when HTTP+JSON is mounted at `/`.
    pub(crate) fn binding(&self, path: &str) -> Option<Binding> {
        if path == WELL_KNOWN_CARD_PATH {
            None
        } else if self.is_jsonrpc(path) {
            Some(Binding::JsonRpc)
        } else if self.rest_suffix(path).is_some() {
            Some(Binding::Rest)
        } else {
            None
        }
    }
}

/// The HTTP status of a JSON-RPC error response: 200, except for faults of
/// the HTTP exchange itself (oversized body, wrong verb, authentication).
pub(crate) fn jsonrpc_http_status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::PayloadTooLarge
        | ErrorKind::MethodNotAllowed
        | ErrorKind::Unauthenticated
        | ErrorKind::PermissionDenied => {
            StatusCode::from_u16(kind.http_status()).unwrap_or(StatusCode::OK)
        }
        _ => StatusCode::OK,
    }
}

/// A JSON response with the given status.
pub(crate) fn json_response(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut res = Response::new(Body::full(body));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// A JSON-RPC error response with the given id (`null` when unknown).
pub(crate) fn jsonrpc_error_response(id: &serde_json::Value, err: &A2aError) -> Response<Body> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": err.to_jsonrpc_error()});
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    json_response(jsonrpc_http_status(err.kind()), Bytes::from(bytes))
}

/// A REST error response: status from the error table, `google.rpc.Status` body.
pub(crate) fn rest_error_response(err: &A2aError) -> Response<Body> {
    let bytes = serde_json::to_vec(&err.to_rest_error()).unwrap_or_default();
    let status =
        StatusCode::from_u16(err.kind().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, Bytes::from(bytes))
}

/// The error response shaped for the binding.
pub(crate) fn error_response(binding: Binding, err: &A2aError) -> Response<Body> {
    match binding {
        Binding::JsonRpc => jsonrpc_error_response(&serde_json::Value::Null, err),
        Binding::Rest => rest_error_response(err),
        #[cfg(feature = "grpc")]
        Binding::Grpc => crate::binding::grpc::status::error_response(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn interface_urls() {
        assert_eq!(interface_path("http://h:8080").unwrap(), "/");
        assert_eq!(interface_path("https://h/a2a/rpc/").unwrap(), "/a2a/rpc/");
        for bad in [
            "ftp://h/x",
            "/relative",
            "http://user:pw@h/x",
            "http://h/x?y=1",
            "http://h/x#f",
            "not a url",
        ] {
            assert!(interface_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn routes() {
        let card = AgentCard::default()
            .with_interface(AgentInterface::jsonrpc("http://h/"))
            .with_interface(AgentInterface::http_json("http://h/rest/"));
        let r = Routes::from_card(&card).unwrap();
        assert_eq!(r.binding("/"), Some(Binding::JsonRpc));
        assert_eq!(r.binding("/rest/tasks"), Some(Binding::Rest));
        assert_eq!(r.binding("/rest"), Some(Binding::Rest));
        assert_eq!(r.binding("/restless"), None);
        assert_eq!(r.binding("/other"), None);
        assert_eq!(r.rest_suffix("/rest/tasks/1"), Some("/tasks/1"));
    }

    #[test]
    fn card_path_is_never_a2a() {
        let card = AgentCard::default()
            .with_interface(AgentInterface::http_json("http://h/"))
            .with_interface(AgentInterface::jsonrpc("http://h/rpc"));
        let routes = Routes::from_card(&card).unwrap();
        assert_eq!(routes.binding(WELL_KNOWN_CARD_PATH), None);
        assert_eq!(routes.binding("/tasks/t"), Some(Binding::Rest));
        assert_eq!(routes.binding("/rpc/"), Some(Binding::JsonRpc));
    }
}
