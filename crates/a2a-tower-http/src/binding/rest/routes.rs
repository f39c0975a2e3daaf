//! The HTTP+JSON route table (a2a-spec.md §7.1): HTTP method and path below
//! the interface prefix to an endpoint, then path values, query parameters
//! and body to the typed [`Operation`]. Registered extension routes are
//! tried after the core's, in each form (without, then with a tenant).

use std::borrow::Cow;

use http::Method;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Map, Value};

use super::query::{Query, path_value};
use super::verbs::Verbs;
use crate::binding::extension_method::{ExtensionMethods, Found, MAX_SEGMENTS};
use crate::types::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigId,
};
use crate::{A2aError, ErrorKind, ExtensionRequest, HttpVerb, Operation, OperationKind};

/// The HTTP methods of the route table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Get,
    Post,
    Delete,
    /// Extension routes only.
    Put,
    /// Extension routes only.
    Patch,
}

impl Verb {
    pub(super) const fn of_table(verb: HttpVerb) -> Self {
        match verb {
            HttpVerb::Get => Self::Get,
            HttpVerb::Delete => Self::Delete,
            // `HttpVerb` is `#[non_exhaustive]` across the crate line: POST
            // is the verb of every operation that is not a read or a delete.
            _ => Self::Post,
        }
    }

    fn of(method: &Method) -> Option<Self> {
        match *method {
            Method::GET => Some(Self::Get),
            Method::POST => Some(Self::Post),
            Method::DELETE => Some(Self::Delete),
            Method::PUT => Some(Self::Put),
            Method::PATCH => Some(Self::Patch),
            _ => None,
        }
    }
}

/// One operation's route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// An operation of the core.
    Core(OperationKind),
    /// A registered extension method, by name.
    Extension(&'static str),
}

impl Endpoint {
    /// The operation's name, as [`Operation::method`] gives it.
    pub(crate) const fn operation(self) -> &'static str {
        match self {
            Self::Core(kind) => kind.name(),
            Self::Extension(name) => name,
        }
    }

    /// The operation's route template (`/tasks/{id}`): the span's
    /// `http.route`, never a path value. `None` for an extension method.
    pub(crate) fn template(self) -> Option<&'static str> {
        match self {
            Self::Core(kind) => kind.http_routes().first().map(|r| r.path),
            Self::Extension(_) => None,
        }
    }
}

/// A path of the table, with the raw (still percent-encoded) values it binds.
#[derive(Debug, Clone, Copy)]
enum Resource<'p> {
    MessageSend,
    MessageStream,
    Tasks,
    Task(&'p str),
    TaskCancel(&'p str),
    TaskSubscribe(&'p str),
    PushConfigs(&'p str),
    PushConfig(&'p str, &'p str),
    ExtendedAgentCard,
}

impl<'p> Resource<'p> {
    /// The resource at these path segments (the tenant already removed).
    fn at(segments: &[&'p str]) -> Option<Self> {
        let id = |s: &'p str| (!s.is_empty()).then_some(s);
        Some(match *segments {
            ["message:send"] => Self::MessageSend,
            ["message:stream"] => Self::MessageStream,
            ["extendedAgentCard"] => Self::ExtendedAgentCard,
            ["tasks"] => Self::Tasks,
            ["tasks", seg] => match seg.rsplit_once(':') {
                Some((task, "cancel")) => Self::TaskCancel(id(task)?),
                Some((task, "subscribe")) => Self::TaskSubscribe(id(task)?),
                _ => Self::Task(id(seg)?),
            },
            ["tasks", task, "pushNotificationConfigs"] => Self::PushConfigs(id(task)?),
            ["tasks", task, "pushNotificationConfigs", config] => {
                Self::PushConfig(id(task)?, id(config)?)
            }
            _ => return None,
        })
    }

    /// The operations of this path, by verb (the table's routes with its
    /// template).
    fn verbs(self) -> &'static Verbs {
        macro_rules! of {
            ($path:literal) => {{
                const VERBS: Verbs = Verbs::of($path);
                &VERBS
            }};
        }
        match self {
            Self::MessageSend => of!("/message:send"),
            Self::MessageStream => of!("/message:stream"),
            Self::Tasks => of!("/tasks"),
            Self::Task(_) => of!("/tasks/{id}"),
            Self::TaskCancel(_) => of!("/tasks/{id}:cancel"),
            Self::TaskSubscribe(_) => of!("/tasks/{id}:subscribe"),
            Self::PushConfigs(_) => of!("/tasks/{id}/pushNotificationConfigs"),
            Self::PushConfig(..) => of!("/tasks/{id}/pushNotificationConfigs/{configId}"),
            Self::ExtendedAgentCard => of!("/extendedAgentCard"),
        }
    }

    fn ids(self) -> (&'p str, &'p str) {
        match self {
            Self::Task(t) | Self::TaskCancel(t) | Self::TaskSubscribe(t) | Self::PushConfigs(t) => {
                (t, "")
            }
            Self::PushConfig(t, c) => (t, c),
            _ => ("", ""),
        }
    }
}

/// A request the table does not serve.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No route has this path: 404.
    NotFound,
    /// A route has this path but not this verb: 405 with this `Allow`.
    NotAllowed(Cow<'static, str>),
    /// A path value that does not decode: 400.
    Invalid(A2aError),
}

impl Refusal {
    /// The error answered, in the binding's error shape.
    pub(crate) fn error(self) -> A2aError {
        match self {
            Self::NotFound => A2aError::new(ErrorKind::MethodNotFound),
            Self::NotAllowed(_) => A2aError::new(ErrorKind::MethodNotAllowed),
            Self::Invalid(e) => e,
        }
    }
}

/// A matched route with its decoded path values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub(crate) endpoint: Endpoint,
    verb: Verb,
    tenant: Option<String>,
    task_id: String,
    config_id: String,
    /// An extension route's decoded captures, by name.
    captures: Vec<(String, String)>,
}

/// Matches `method` and `path` (below the interface prefix). Routes without
/// a tenant are tried first, then the same routes under a `/{tenant}`
/// segment (§7.1, recommended), so `/tasks/tasks` is the task `tasks`; in
/// each form the core's routes come before the `extensions`. The first
/// path that also has the verb wins; a path that matched only without the
/// verb is a 405. A trailing slash is ignored.
pub(crate) fn route(
    method: &Method,
    path: &str,
    extensions: &ExtensionMethods,
) -> Result<Route, Refusal> {
    let path = path.trim_end_matches('/');
    let mut segments = [""; MAX_SEGMENTS];
    let mut n = 0;
    for seg in path
        .strip_prefix('/')
        .into_iter()
        .flat_map(|p| p.split('/'))
    {
        *segments.get_mut(n).ok_or(Refusal::NotFound)? = seg;
        n += 1;
    }
    let segments = &segments[..n];
    let tenant_form = segments
        .split_first()
        .filter(|(t, rest)| !t.is_empty() && !rest.is_empty());
    let candidates = [
        Some((None, segments)),
        tenant_form.map(|(t, r)| (Some(*t), r)),
    ];
    let verb = Verb::of(method);
    let mut allow = None;
    for (tenant, segs) in candidates.into_iter().flatten() {
        let decoded_tenant = || {
            tenant
                .map(|t| path_value(t, "tenant"))
                .transpose()
                .map_err(Refusal::Invalid)
        };
        let Some(resource) = Resource::at(segs) else {
            let (route, captures) = match extensions.find(method, segs) {
                Found::Route(route, captures) => (route, captures),
                Found::OtherMethods(methods) => {
                    allow.get_or_insert(Cow::Owned(methods));
                    continue;
                }
                Found::Nothing => continue,
            };
            let captures = captures
                .into_iter()
                .map(|(name, raw)| Ok((name.to_owned(), path_value(raw, name)?)))
                .collect::<Result<_, A2aError>>()
                .map_err(Refusal::Invalid)?;
            return Ok(Route {
                endpoint: Endpoint::Extension(route.name),
                // Registered routes have a verb of the table.
                verb: verb.unwrap_or(Verb::Get),
                tenant: decoded_tenant()?,
                task_id: String::new(),
                config_id: String::new(),
                captures,
            });
        };
        let Some((verb, kind)) = resource.verbs().find(verb) else {
            allow.get_or_insert(Cow::Borrowed(resource.verbs().allow()));
            continue;
        };
        let (task, config) = resource.ids();
        return Ok(Route {
            endpoint: Endpoint::Core(kind),
            verb,
            tenant: decoded_tenant()?,
            task_id: path_value(task, "id").map_err(Refusal::Invalid)?,
            config_id: path_value(config, "id").map_err(Refusal::Invalid)?,
            captures: Vec::new(),
        });
    }
    Err(allow.map_or(Refusal::NotFound, Refusal::NotAllowed))
}

impl Route {
    /// The request body is read (POST, and PUT or PATCH of an extension
    /// route); GET and DELETE bodies are ignored.
    pub(crate) fn reads_body(&self) -> bool {
        matches!(self.verb, Verb::Post | Verb::Put | Verb::Patch)
    }

    /// The operation, from the path values (which win over body fields),
    /// the query (GET and DELETE) and the body (POST; empty means `{}`).
    pub(crate) fn decode(self, query: Option<&str>, body: &[u8]) -> Result<Operation, A2aError> {
        use Endpoint::Core as E;
        use OperationKind as K;
        let Route {
            endpoint,
            tenant,
            task_id,
            config_id,
            captures,
            ..
        } = self;
        let query = || Query::parse(query);
        let tenant_or = |from_body: String| tenant.clone().unwrap_or(from_body);
        Ok(match endpoint {
            E(K::SendMessage) | E(K::SendStreamingMessage) => {
                let mut r: SendMessageRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                if endpoint == E(K::SendMessage) {
                    Operation::SendMessage(r)
                } else {
                    Operation::SendStreamingMessage(r)
                }
            }
            E(K::GetTask) => Operation::GetTask(GetTaskRequest {
                tenant: tenant_or(String::new()),
                id: task_id,
                history_length: query().int(&["historyLength", "history_length"])?,
            }),
            E(K::ListTasks) => {
                Operation::ListTasks(list_tasks(&query(), tenant_or(String::new()))?)
            }
            E(K::CancelTask) => {
                let mut r: CancelTaskRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.id = task_id;
                Operation::CancelTask(r)
            }
            E(K::SubscribeToTask) => {
                let mut r: SubscribeToTaskRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.id = task_id;
                Operation::SubscribeToTask(r)
            }
            E(K::CreateTaskPushNotificationConfig) => {
                let mut r: TaskPushNotificationConfig = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.task_id = task_id;
                Operation::CreateTaskPushNotificationConfig(r)
            }
            E(K::GetTaskPushNotificationConfig) | E(K::DeleteTaskPushNotificationConfig) => {
                let r = TaskPushNotificationConfigId {
                    tenant: tenant_or(String::new()),
                    task_id,
                    id: config_id,
                };
                if endpoint == E(K::GetTaskPushNotificationConfig) {
                    Operation::GetTaskPushNotificationConfig(r)
                } else {
                    Operation::DeleteTaskPushNotificationConfig(r)
                }
            }
            E(K::ListTaskPushNotificationConfigs) => {
                let q = query();
                Operation::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                    tenant: tenant_or(String::new()),
                    task_id,
                    page_size: q.int(&["pageSize", "page_size"])?.unwrap_or_default(),
                    page_token: q.string(&["pageToken", "page_token"])?,
                })
            }
            E(K::GetExtendedAgentCard) => {
                Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest {
                    tenant: tenant_or(String::new()),
                })
            }
            // An operation the core's table gained after this binding
            // (`OperationKind` is `#[non_exhaustive]` across the crate line).
            E(_) => return Err(A2aError::new(ErrorKind::UnsupportedOperation)),
            // Path values win over body members of the same name.
            Endpoint::Extension(name) => {
                let mut params: Map<String, Value> = json(body)?;
                for (key, value) in captures {
                    params.insert(key, Value::String(value));
                }
                if let Some(tenant) = tenant {
                    params.insert("tenant".to_owned(), Value::String(tenant));
                }
                Operation::Extension(ExtensionRequest::new(name, params))
            }
        })
    }
}

/// ListTasks from its query parameters (§7.2); `lastUpdatedAfter` (sent by
/// the a2a-go client) is an alias of `statusTimestampAfter`.
fn list_tasks(q: &Query, tenant: String) -> Result<ListTasksRequest, A2aError> {
    Ok(ListTasksRequest {
        tenant,
        context_id: q.string(&["contextId", "context_id"])?,
        status: q.state(&["status"])?.unwrap_or_default(),
        page_size: q.int(&["pageSize", "page_size"])?,
        page_token: q.string(&["pageToken", "page_token"])?,
        history_length: q.int(&["historyLength", "history_length"])?,
        status_timestamp_after: q.timestamp(&[
            "statusTimestampAfter",
            "status_timestamp_after",
            "lastUpdatedAfter",
        ])?,
        include_artifacts: q.boolean(&["includeArtifacts", "include_artifacts"])?,
    })
}

/// A JSON body; empty (or only whitespace) means `{}`. Not well-formed JSON
/// is ParseError; JSON that does not decode into `T` is InvalidParams.
fn json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, A2aError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    // serde_json skips an ignored member's string without checking that it
    // is UTF-8, which JSON text must be (RFC 8259 §8.1).
    let body = std::str::from_utf8(body).map_err(|_| A2aError::new(ErrorKind::ParseError))?;
    serde_json::from_str(body).map_err(|_| {
        let kind = match serde_json::from_str::<IgnoredAny>(body) {
            Ok(_) => ErrorKind::InvalidParams,
            Err(_) => ErrorKind::ParseError,
        };
        A2aError::new(kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(method: Method, path: &str) -> (Endpoint, Option<String>, String, String) {
        let r = route(&method, path, &ExtensionMethods::default())
            .unwrap_or_else(|e| panic!("{path}: {e:?}"));
        (r.endpoint, r.tenant, r.task_id, r.config_id)
    }

    #[test]
    fn table() {
        use Endpoint::Core as E;
        use OperationKind as K;
        let none = || None::<String>;
        assert_eq!(ok(Method::POST, "/message:send").0, E(K::SendMessage));
        assert_eq!(
            ok(Method::POST, "/message:stream/").0,
            E(K::SendStreamingMessage)
        );
        assert_eq!(
            ok(Method::GET, "/tasks/"),
            (E(K::ListTasks), none(), "".into(), "".into())
        );
        assert_eq!(
            ok(Method::GET, "/tasks/a%2Fb"),
            (E(K::GetTask), none(), "a/b".into(), "".into())
        );
        assert_eq!(ok(Method::GET, "/tasks/a:b").2, "a:b");
        assert_eq!(
            ok(Method::POST, "/tasks/a:b:cancel"),
            (E(K::CancelTask), none(), "a:b".into(), "".into())
        );
        assert_eq!(
            ok(Method::GET, "/tasks/t:subscribe").0,
            E(K::SubscribeToTask)
        );
        assert_eq!(
            ok(Method::POST, "/tasks/t:subscribe").0,
            E(K::SubscribeToTask)
        );
        assert_eq!(
            ok(Method::GET, "/tasks/t/pushNotificationConfigs").0,
            E(K::ListTaskPushNotificationConfigs)
        );
        assert_eq!(
            ok(Method::POST, "/tasks/t/pushNotificationConfigs").0,
            E(K::CreateTaskPushNotificationConfig)
        );
        assert_eq!(
            ok(Method::DELETE, "/tasks/t/pushNotificationConfigs/c"),
            (
                E(K::DeleteTaskPushNotificationConfig),
                none(),
                "t".into(),
                "c".into()
            )
        );
        assert_eq!(
            ok(Method::GET, "/extendedAgentCard").0,
            E(K::GetExtendedAgentCard)
        );
        // §7.1 [REC]: non-tenant routes first; then under a tenant segment.
        assert_eq!(
            ok(Method::GET, "/tasks/tasks"),
            (E(K::GetTask), none(), "tasks".into(), "".into())
        );
        assert_eq!(
            ok(Method::GET, "/acme%20co/tasks").1.as_deref(),
            Some("acme co")
        );
        // The tenant form also wins when only it has the verb.
        assert_eq!(
            ok(Method::POST, "/tasks/message:send").1.as_deref(),
            Some("tasks")
        );
    }

    /// The `Allow` of a 405.
    fn allow(refusal: Refusal) -> String {
        match refusal {
            Refusal::NotAllowed(allow) => allow.into_owned(),
            other => panic!("not a 405: {other:?}"),
        }
    }

    #[test]
    fn refusals() {
        let refuse = |m: Method, p: &str| route(&m, p, &ExtensionMethods::default()).unwrap_err();
        for p in [
            "",
            "/",
            "/nope",
            "/tasks//x",
            "/t/u/tasks",
            "/tasks/:cancel",
            "/a/b/c/d/e/f",
        ] {
            assert!(matches!(refuse(Method::GET, p), Refusal::NotFound), "{p}");
        }
        for (m, p, want) in [
            (Method::GET, "/message:send", "POST"),
            (Method::PUT, "/tasks/t:subscribe", "GET, POST"),
            (
                Method::POST,
                "/tasks/t/pushNotificationConfigs/c",
                "GET, DELETE",
            ),
            (Method::DELETE, "/tasks", "GET"),
        ] {
            assert_eq!(allow(refuse(m, p)), want, "{p}");
        }
        assert!(matches!(
            refuse(Method::GET, "/tasks/%FF"),
            Refusal::Invalid(_)
        ));
    }

    #[test]
    fn bodies() {
        let r = route(
            &Method::POST,
            "/ten/tasks/t-1:cancel",
            &ExtensionMethods::default(),
        )
        .unwrap();
        let op = r
            .clone()
            .decode(None, br#"{"id":"other","tenant":"x","metadata":{"k":1}}"#)
            .unwrap();
        let Operation::CancelTask(c) = op else {
            panic!()
        };
        assert_eq!((c.id.as_str(), c.tenant.as_str()), ("t-1", "ten"));
        assert!(c.metadata.is_some());
        assert!(r.clone().decode(None, b"").is_ok());
        assert_eq!(
            r.clone().decode(None, b"{").unwrap_err().kind(),
            ErrorKind::ParseError
        );
        assert_eq!(
            r.decode(None, b"[1]").unwrap_err().kind(),
            ErrorKind::InvalidParams
        );
    }

    #[test]
    fn endpoint_names_are_the_operation_names() {
        for (m, p, body) in [
            (Method::POST, "/message:send", "{}"),
            (Method::POST, "/message:stream", "{}"),
            (Method::GET, "/tasks/t", ""),
            (Method::GET, "/tasks", ""),
            (Method::POST, "/tasks/t:cancel", ""),
            (Method::GET, "/tasks/t:subscribe", ""),
            (Method::POST, "/tasks/t/pushNotificationConfigs", "{}"),
            (Method::GET, "/tasks/t/pushNotificationConfigs", ""),
            (Method::GET, "/tasks/t/pushNotificationConfigs/c", ""),
            (Method::DELETE, "/tasks/t/pushNotificationConfigs/c", ""),
            (Method::GET, "/extendedAgentCard", ""),
        ] {
            let r = route(&m, p, &ExtensionMethods::default()).unwrap();
            let name = r.endpoint.operation();
            assert_eq!(
                r.decode(None, body.as_bytes()).unwrap().method(),
                name,
                "{p}"
            );
        }
    }

    fn queue() -> ExtensionMethods {
        let mut ext = ExtensionMethods::default();
        let get = crate::ExtensionMethod::new("GetContextQueue")
            .route(Method::GET, "/contexts/{contextId}/queue");
        let reorder = crate::ExtensionMethod::new("ReorderContextQueue")
            .route(Method::POST, "/contexts/{contextId}/queue:reorder")
            .route(Method::PATCH, "/contexts/{contextId}/queue");
        ext.add(get).unwrap();
        ext.add(reorder).unwrap();
        ext
    }

    fn params(op: Operation) -> (&'static str, Value) {
        let Operation::Extension(r) = op else {
            panic!("{op:?}")
        };
        (r.method, Value::Object(r.params))
    }

    #[test]
    fn extension_routes_capture_and_merge() {
        use serde_json::json;
        let ext = queue();
        let at = |m: Method, p: &str| route(&m, p, &ext).unwrap_or_else(|e| panic!("{p}: {e:?}"));
        // Captures are percent-decoded strings; a GET body and the query are not read.
        let r = at(Method::GET, "/contexts/c%2F1%20x/queue/");
        assert!(!r.reads_body());
        assert_eq!(r.endpoint.operation(), "GetContextQueue");
        let op = r
            .decode(Some("contextId=q&x=1"), br#"{"contextId":"body"}"#)
            .unwrap();
        assert_eq!(
            params(op),
            ("GetContextQueue", json!({"contextId": "c/1 x"}))
        );
        // Under a tenant: the tenant joins the params; path values win over the body.
        let r = at(Method::POST, "/acme%20co/contexts/c-1/queue:reorder");
        assert!(r.reads_body());
        let body = br#"{"revision":"r7","taskIds":["b","a"],"contextId":"other","tenant":"x"}"#;
        let op = r.decode(None, body).unwrap();
        assert_eq!(op.tenant(), "acme co");
        assert_eq!(
            params(op),
            (
                "ReorderContextQueue",
                json!({"revision": "r7", "taskIds": ["b", "a"], "contextId": "c-1", "tenant": "acme co"})
            )
        );
        // Without a tenant segment, a body's tenant stays.
        let op = at(Method::PATCH, "/contexts/c/queue")
            .decode(None, br#"{"tenant":"t"}"#)
            .unwrap();
        assert_eq!(op.tenant(), "t");
        // An empty body is {}; not JSON is ParseError; not an object InvalidParams.
        let r = at(Method::POST, "/contexts/c/queue:reorder");
        assert_eq!(
            params(r.clone().decode(None, b" ").unwrap()).1,
            json!({"contextId": "c"})
        );
        for (body, kind) in [
            (&b"{"[..], ErrorKind::ParseError),
            (b"[1]", ErrorKind::InvalidParams),
            (b"\"s\"", ErrorKind::InvalidParams),
            (b"null", ErrorKind::InvalidParams),
        ] {
            assert_eq!(r.clone().decode(None, body).unwrap_err().kind(), kind);
        }
        // Not UTF-8, even in a member nobody reads: not JSON (found by tests/fuzz).
        let cancel = route(
            &Method::POST,
            "/tasks/t:cancel",
            &ExtensionMethods::default(),
        );
        let err = cancel
            .unwrap()
            .decode(None, b"{\"x\":\"\xff\"}")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ParseError);
    }

    #[test]
    fn extension_routes_refusals_and_order() {
        let ext = queue();
        let refuse = |m: Method, p: &str| route(&m, p, &ext).unwrap_err();
        assert_eq!(
            allow(refuse(Method::DELETE, "/contexts/c/queue")),
            "GET, PATCH"
        );
        let under_tenant = refuse(Method::GET, "/t/contexts/c/queue:reorder");
        assert_eq!(allow(under_tenant), "POST");
        assert!(matches!(
            refuse(Method::GET, "/contexts/c"),
            Refusal::NotFound
        ));
        assert!(matches!(
            refuse(Method::GET, "/contexts//queue"),
            Refusal::NotFound
        ));
        let Refusal::Invalid(e) = refuse(Method::GET, "/contexts/%FF/queue") else {
            panic!("not UTF-8")
        };
        assert_eq!(e.violations()[0].0, "contextId");
        // Routes without a tenant come first: `/contexts/tasks/queue` is the
        // queue of the context `tasks`, not the task `queue` of the tenant
        // `contexts`; under a tenant, the core's routes still route.
        let r = route(&Method::GET, "/contexts/tasks/queue", &ext).unwrap();
        assert_eq!(
            (r.endpoint, r.tenant.as_deref(), r.captures),
            (
                Endpoint::Extension("GetContextQueue"),
                None,
                vec![("contextId".to_owned(), "tasks".to_owned())]
            )
        );
        let r = route(&Method::GET, "/x/tasks/t", &ext).unwrap();
        assert_eq!(
            (r.endpoint, r.tenant.as_deref()),
            (Endpoint::Core(OperationKind::GetTask), Some("x"))
        );
        // Long paths: a tenant and 15 segments still route.
        let mut long = ExtensionMethods::default();
        let deep = format!("/{}", ["s"; MAX_SEGMENTS - 1].join("/"));
        long.add(crate::ExtensionMethod::new("Deep").route(Method::GET, deep.clone()))
            .unwrap();
        assert!(route(&Method::GET, &format!("/t{deep}"), &long).is_ok());
        assert!(matches!(
            route(&Method::GET, &format!("/t/u{deep}"), &long).unwrap_err(),
            Refusal::NotFound
        ));
    }

    /// A path of the template with each capture filled in.
    fn filled(template: &str) -> String {
        template.replace("{id}", "t").replace("{configId}", "c")
    }

    #[test]
    fn every_route_of_the_table_routes_to_its_operation() {
        let none = ExtensionMethods::default();
        for &kind in OperationKind::ALL {
            for r in kind.http_routes() {
                let path = filled(r.path);
                let got = route(&r.verb.method(), &path, &none).unwrap();
                assert_eq!(got.endpoint, Endpoint::Core(kind), "{} {path}", r.verb);
                let path = filled(&r.tenant_path.replace("{tenant}", "ten"));
                let got = route(&r.verb.method(), &path, &none).unwrap();
                assert_eq!(got.endpoint, Endpoint::Core(kind), "{} {path}", r.verb);
                assert_eq!(got.tenant.as_deref(), Some("ten"));
                // ... and no extension route may take a core route's path.
                let m = crate::ExtensionMethod::new("Taken").route(Method::PUT, filled(r.path));
                assert!(ExtensionMethods::default().add(m).is_err(), "{path}");
            }
        }
    }
}
