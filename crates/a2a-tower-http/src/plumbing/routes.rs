//! Which binding a request path belongs to, derived from the card's interfaces,
//! and the binding-shaped error response used by every HTTP-level layer.
//!
//! Paths are matched relative to where the host mounted the stack. The
//! card's interface paths share a *base* (their longest common prefix, on
//! segment boundaries: `/agents/shout` for `/agents/shout` and
//! `/agents/shout/rest`); each binding's path below it is its *relative
//! path* (`/` and `/rest`). A request path is read in two ways, in order:
//!
//! 1. as the full path the card advertises (the host mounted the stack at
//!    the root and passes the path through: `route_service`, a fallback);
//! 2. as a path relative to the base (the host or a proxy stripped the base:
//!    axum's `nest_service("/agents/shout", ..)`, actix's `scope`, a proxy
//!    that rewrites `/agents/shout/x` to `/x`).
//!
//! The first reading that names a binding wins; JSON-RPC's exact path wins
//! over the HTTP+JSON prefix within one reading. The trade-off: a stack
//! whose card says `/agents/shout` and that receives every path of a host
//! (as its fallback) also answers at `/` and `/rest`. Hosts that want one
//! reading only route just the card's paths (or just the nested prefix) to it.

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

/// The base of the card's JSON-RPC and HTTP+JSON interface paths, each
/// binding's path relative to it, and whether the card has a gRPC interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routes {
    /// No trailing slash; `/` for the root.
    base: String,
    /// Relative to `base`: starts with `/`, no trailing slash (`/` itself).
    jsonrpc: Option<String>,
    /// Relative to `base`, like `jsonrpc`.
    rest: Option<String>,
    #[cfg(feature = "grpc")]
    grpc: bool,
}

impl Default for Routes {
    fn default() -> Self {
        Self {
            base: "/".to_owned(),
            jsonrpc: None,
            rest: None,
            #[cfg(feature = "grpc")]
            grpc: false,
        }
    }
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

/// The part of `path` below `prefix` (`""` for `prefix` itself), if `path`
/// is `prefix` or below it on a segment boundary. `prefix` has no trailing
/// slash; `/` is the prefix of every path.
fn below<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    if prefix == "/" {
        return Some(path);
    }
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// The longest common prefix of two trimmed paths, on segment boundaries
/// (`/` when they share no segment).
fn common_base(a: &str, b: &str) -> String {
    let common: Vec<&str> = a
        .split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    match common.join("/") {
        base if base.is_empty() => "/".to_owned(),
        base => base,
    }
}

/// `path` relative to `base` (`/` for `base` itself).
fn relative(path: &str, base: &str) -> String {
    match below(path, base) {
        Some("") | None => "/".to_owned(),
        Some(rest) => rest.to_owned(),
    }
}

impl Routes {
    /// Routes of the first JSONRPC and first HTTP+JSON interface of the card.
    pub(crate) fn from_card(card: &AgentCard) -> Result<Self, ConfigError> {
        let path = |binding: &str| {
            card.interface(binding)
                .map(|i| interface_path(&i.url).map(|p| trim_slash(&p).to_owned()))
                .transpose()
        };
        let (jsonrpc, rest) = (path(BINDING_JSONRPC)?, path(BINDING_HTTP_JSON)?);
        let base = match (&jsonrpc, &rest) {
            (Some(j), Some(r)) => common_base(j, r),
            (Some(p), None) | (None, Some(p)) => p.clone(),
            (None, None) => "/".to_owned(),
        };
        Ok(Self {
            jsonrpc: jsonrpc.map(|p| relative(&p, &base)),
            rest: rest.map(|p| relative(&p, &base)),
            base,
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

    /// The card's JSON-RPC path relative to the base (no trailing slash,
    /// `/` for the base itself).
    #[cfg(feature = "jsonrpc")]
    pub(crate) fn jsonrpc_path(&self) -> Option<&str> {
        self.jsonrpc.as_deref()
    }

    /// The card's HTTP+JSON prefix relative to the base (no trailing slash,
    /// `/` for the base itself).
    #[cfg(feature = "rest")]
    pub(crate) fn rest_prefix(&self) -> Option<&str> {
        self.rest.as_deref()
    }

    /// The base of the card's interface paths (no trailing slash, `/` for
    /// the root).
    #[cfg(test)]
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// The binding of `path` and, for HTTP+JSON, the part below its prefix
    /// (`""` for the prefix itself): the path read as the card's full path
    /// first, then relative to the base (see the module docs).
    pub(crate) fn resolve<'p>(&self, path: &'p str) -> Option<(Binding, &'p str)> {
        let full = match self.base.as_str() {
            "/" => None,
            base => below(path, base).map(|r| if r.is_empty() { "/" } else { r }),
        };
        full.into_iter()
            .chain(std::iter::once(path))
            .find_map(|p| self.resolve_relative(p))
    }

    /// [`Routes::resolve`] of a path relative to the base.
    fn resolve_relative<'p>(&self, path: &'p str) -> Option<(Binding, &'p str)> {
        if path == WELL_KNOWN_CARD_PATH {
            return None;
        }
        if self.jsonrpc.as_deref() == Some(trim_slash(path)) {
            return Some((Binding::JsonRpc, ""));
        }
        let prefix = self.rest.as_deref()?;
        below(path, prefix).map(|suffix| (Binding::Rest, suffix))
    }

    /// The request path is the JSON-RPC endpoint (with or without a trailing slash).
    #[cfg(any(feature = "jsonrpc", test))]
    pub(crate) fn is_jsonrpc(&self, path: &str) -> bool {
        matches!(self.resolve(path), Some((Binding::JsonRpc, _)))
    }

    /// The part of `path` below the HTTP+JSON prefix, if it is under it
    /// (and is not the JSON-RPC endpoint).
    #[cfg(any(feature = "rest", test))]
    pub(crate) fn rest_suffix<'p>(&self, path: &'p str) -> Option<&'p str> {
        match self.resolve(path) {
            Some((Binding::Rest, suffix)) => Some(suffix),
            _ => None,
        }
    }

    /// The binding the path belongs to; JSON-RPC's exact path wins. The card
    /// endpoint belongs to no binding, even when HTTP+JSON is mounted at `/`.
    pub(crate) fn binding(&self, path: &str) -> Option<Binding> {
        self.resolve(path).map(|(binding, _)| binding)
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

    fn card(jsonrpc: &str, rest: &str) -> Routes {
        let card = AgentCard::default()
            .with_interface(AgentInterface::jsonrpc(jsonrpc))
            .with_interface(AgentInterface::http_json(rest));
        Routes::from_card(&card).unwrap()
    }

    #[test]
    fn base_is_the_common_prefix_on_segment_boundaries() {
        for (jsonrpc, rest, base, rel_rpc, rel_rest) in [
            ("http://h/", "http://h/rest", "/", "/", "/rest"),
            ("http://h/a2a", "http://h/a2a/rest", "/a2a", "/", "/rest"),
            (
                "http://h/a2a/rpc/",
                "http://h/a2a/rest/",
                "/a2a",
                "/rpc",
                "/rest",
            ),
            ("http://h/a2a", "http://h/a2ab", "/", "/a2a", "/a2ab"),
            ("http://h/x/rpc", "http://h/x", "/x", "/rpc", "/"),
            ("http://h/same", "http://h/same", "/same", "/", "/"),
        ] {
            let r = card(jsonrpc, rest);
            assert_eq!(r.base(), base, "{jsonrpc} {rest}");
            assert_eq!(r.jsonrpc_path(), Some(rel_rpc), "{jsonrpc} {rest}");
            assert_eq!(r.rest_prefix(), Some(rel_rest), "{jsonrpc} {rest}");
        }
        let one = Routes::from_card(
            &AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/agents/a")),
        )
        .unwrap();
        assert_eq!((one.base(), one.jsonrpc_path()), ("/agents/a", Some("/")));
    }

    #[test]
    fn full_and_base_relative_paths_both_resolve() {
        let r = card("http://h/agents/shout", "http://h/agents/shout/rest");
        // Mounted at the root, the full path.
        assert_eq!(r.binding("/agents/shout"), Some(Binding::JsonRpc));
        assert_eq!(r.binding("/agents/shout/"), Some(Binding::JsonRpc));
        assert_eq!(
            r.rest_suffix("/agents/shout/rest/tasks/1"),
            Some("/tasks/1")
        );
        // Nested under the base (the host stripped it).
        assert_eq!(r.binding("/"), Some(Binding::JsonRpc));
        assert_eq!(r.binding(""), Some(Binding::JsonRpc));
        assert_eq!(r.rest_suffix("/rest/tasks/1"), Some("/tasks/1"));
        assert_eq!(r.rest_suffix("/rest"), Some(""));
        // Neither reading.
        for other in [
            "/agents",
            "/agents/shoutx",
            "/agents/shout/other",
            "/other",
            "/restx",
        ] {
            assert_eq!(r.binding(other), None, "{other}");
        }
        // The card path, under the base or not, is never a binding's.
        assert_eq!(r.binding(WELL_KNOWN_CARD_PATH), None);
        assert!(!r.is_jsonrpc("/agents/shout/rest"));
    }

    #[test]
    fn the_full_reading_wins() {
        // `/x/x` is HTTP+JSON's full path and, relative to the base `/x`,
        // would be JSON-RPC's `/x`... which does not exist: the full path's
        // reading is taken first.
        let r = card("http://h/x", "http://h/x/x");
        assert_eq!(r.binding("/x/x/tasks/1"), Some(Binding::Rest));
        assert_eq!(r.rest_suffix("/x/x/tasks/1"), Some("/tasks/1"));
        assert_eq!(r.binding("/x"), Some(Binding::JsonRpc));
        // Relative to the base: `/x` is HTTP+JSON's prefix, but the full
        // reading of `/x` (JSON-RPC) came first.
        assert_eq!(r.rest_suffix("/x/tasks/1"), Some("/tasks/1"));
    }
}
