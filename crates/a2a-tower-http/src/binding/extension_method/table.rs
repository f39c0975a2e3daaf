//! [`ExtensionMethods`]: the extension methods registered on a binding,
//! checked against the core's methods and routes (the operation table,
//! [`OperationKind`]) and against each other.

use http::Method;

use super::ExtensionMethod;
use super::template::PathTemplate;
use crate::{ConfigError, OperationKind};

/// One registered HTTP+JSON route of an extension method.
#[derive(Debug, Clone)]
pub(crate) struct ExtensionRoute {
    /// The method's registered name.
    pub(crate) name: &'static str,
    /// The HTTP method.
    pub(crate) method: Method,
    /// The path below the prefix and tenant segment.
    pub(crate) path: PathTemplate,
}

/// What the routes say about a request path.
#[cfg_attr(not(feature = "rest"), allow(dead_code))] // HTTP+JSON routing
#[derive(Debug)]
pub(crate) enum Found<'t, 'p> {
    /// A route with this path and method, with its raw captures.
    Route(&'t ExtensionRoute, Vec<(&'t str, &'p str)>),
    /// Routes have this path, not this method: the `Allow` header value.
    OtherMethods(String),
    /// No route has this path.
    Nothing,
}

/// The extension methods of a binding.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtensionMethods {
    names: Vec<&'static str>,
    routes: Vec<ExtensionRoute>,
}

impl ExtensionMethods {
    /// Registers `method`, all or nothing: a name that is empty, a core
    /// method, reserved by JSON-RPC (`rpc.`) or already registered fails; so
    /// does a route with another HTTP method than GET, POST, PUT, PATCH or
    /// DELETE, a path that does not parse, that some core route's path
    /// matches too, or that a registered route with the same HTTP method
    /// matches too.
    pub(crate) fn add(&mut self, method: ExtensionMethod) -> Result<(), ConfigError> {
        let name = method.name();
        let bad = |why: String| ConfigError::new(format!("extension method {name:?}: {why}"));
        if name.is_empty() || name.starts_with("rpc.") || OperationKind::from_method(name).is_some()
        {
            return Err(bad(
                "the name is empty, reserved (rpc.) or a core method".into()
            ));
        }
        if self.names.contains(&name) {
            return Err(bad("is already registered".into()));
        }
        let mut routes: Vec<ExtensionRoute> = Vec::new();
        for (verb, text) in method.into_routes() {
            if ![
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ]
            .contains(&verb)
            {
                return Err(bad(format!("{verb} is not a route method")));
            }
            let path = PathTemplate::parse(&text)?;
            let core_paths = OperationKind::ALL
                .iter()
                .flat_map(|kind| kind.http_routes())
                .map(|route| route.path);
            for core in core_paths {
                if path.overlaps(&PathTemplate::parse(core)?) {
                    return Err(bad(format!(
                        "{text:?} clashes with the core route {core:?}"
                    )));
                }
            }
            let taken = self.routes.iter().chain(&routes);
            if let Some(r) = taken
                .into_iter()
                .find(|r| r.method == verb && r.path.overlaps(&path))
            {
                let other = r.path.as_str();
                return Err(bad(format!(
                    "{verb} {text:?} clashes with {verb} {other:?} of {:?}",
                    r.name
                )));
            }
            routes.push(ExtensionRoute {
                name,
                method: verb,
                path,
            });
        }
        self.names.push(name);
        self.routes.extend(routes);
        Ok(())
    }

    /// The registered name equal to `name`.
    #[cfg_attr(not(feature = "jsonrpc"), allow(dead_code))] // JSON-RPC decoding
    pub(crate) fn method(&self, name: &str) -> Option<&'static str> {
        self.names.iter().copied().find(|n| *n == name)
    }

    /// The route for `method` on these raw path segments (below the prefix
    /// and the tenant segment, if any).
    #[cfg_attr(not(feature = "rest"), allow(dead_code))] // HTTP+JSON routing
    pub(crate) fn find<'t, 'p>(&'t self, method: &Method, segments: &[&'p str]) -> Found<'t, 'p> {
        let mut allow: Vec<&str> = Vec::new();
        for route in &self.routes {
            let Some(captures) = route.path.matches(segments) else {
                continue;
            };
            if route.method == method {
                return Found::Route(route, captures);
            }
            if !allow.contains(&route.method.as_str()) {
                allow.push(route.method.as_str());
            }
        }
        if allow.is_empty() {
            Found::Nothing
        } else {
            Found::OtherMethods(allow.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> ExtensionMethods {
        let mut t = ExtensionMethods::default();
        t.add(
            ExtensionMethod::new("GetContextQueue")
                .route(Method::GET, "/contexts/{contextId}/queue"),
        )
        .unwrap();
        t.add(
            ExtensionMethod::new("ReorderContextQueue")
                .route(Method::POST, "/contexts/{contextId}/queue:reorder"),
        )
        .unwrap();
        t.add(
            ExtensionMethod::new("ClearContextQueue")
                .route(Method::DELETE, "/contexts/{contextId}/queue"),
        )
        .unwrap();
        t
    }

    #[test]
    fn names() {
        let mut t = queue();
        assert_eq!(t.method("GetContextQueue"), Some("GetContextQueue"));
        assert_eq!(t.method("getcontextqueue"), None);
        for taken in ["GetTask", "GetContextQueue", "rpc.discover", ""] {
            assert!(t.add(ExtensionMethod::new(taken)).is_err(), "{taken}");
        }
        // JSON-RPC only: no route.
        t.add(ExtensionMethod::new("Ping")).unwrap();
        assert_eq!(t.method("Ping"), Some("Ping"));
    }

    #[test]
    fn clashes_are_config_errors() {
        let mut t = queue();
        for (verb, path) in [
            (Method::GET, "/tasks/{id}"),
            (Method::POST, "/tasks/{id}"),
            (Method::GET, "/tasks/queue"),
            (Method::GET, "/tasks/{id}/pushNotificationConfigs"),
            (Method::PUT, "/message:send"),
            (Method::GET, "/contexts/{other}/queue"),
            (Method::POST, "/contexts/all/queue:reorder"),
            (Method::HEAD, "/contexts/{c}/size"),
            (Method::GET, "contexts"),
        ] {
            let m = ExtensionMethod::new("Late").route(verb.clone(), path);
            assert!(t.add(m).is_err(), "{verb} {path}");
        }
        // Nothing of a refused registration is kept.
        let m = ExtensionMethod::new("Half")
            .route(Method::GET, "/contexts/{c}/size")
            .route(Method::GET, "/tasks/{id}");
        assert!(t.add(m).is_err());
        assert_eq!(t.method("Half"), None);
        assert!(matches!(
            t.find(&Method::GET, &["contexts", "c", "size"]),
            Found::Nothing
        ));
        // Another method on a registered path, and a longer path, are fine.
        let m = ExtensionMethod::new("PutContextQueue").route(Method::PUT, "/contexts/{c}/queue");
        t.add(m).unwrap();
        t.add(ExtensionMethod::new("Deep").route(Method::GET, "/tasks/{id}/queue"))
            .unwrap();
    }

    #[test]
    fn find_by_path_and_method() {
        let t = queue();
        let Found::Route(r, captures) = t.find(&Method::GET, &["contexts", "c%201", "queue"])
        else {
            panic!("GET queue")
        };
        assert_eq!(
            (r.name, captures),
            ("GetContextQueue", vec![("contextId", "c%201")])
        );
        let Found::Route(r, _) = t.find(&Method::DELETE, &["contexts", "c", "queue"]) else {
            panic!("DELETE queue")
        };
        assert_eq!(r.name, "ClearContextQueue");
        assert!(matches!(
            t.find(&Method::POST, &["contexts", "c", "queue"]),
            Found::OtherMethods(a) if a == "GET, DELETE"
        ));
        assert!(matches!(
            t.find(&Method::GET, &["contexts", "c"]),
            Found::Nothing
        ));
    }
}
