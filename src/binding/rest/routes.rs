//! The HTTP+JSON route table (a2a-spec.md §7.1): HTTP method and path below
//! the interface prefix to an endpoint, then path values, query parameters
//! and body to the typed [`Operation`].

use http::Method;
use serde::de::{DeserializeOwned, IgnoredAny};

use super::query::{Query, path_value};
use crate::types::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigId,
};
use crate::{A2aError, ErrorKind, Operation};

/// The HTTP methods of the route table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Get,
    Post,
    Delete,
}

impl Verb {
    fn of(method: &Method) -> Option<Self> {
        match *method {
            Method::GET => Some(Self::Get),
            Method::POST => Some(Self::Post),
            Method::DELETE => Some(Self::Delete),
            _ => None,
        }
    }
}

/// One operation's route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreatePushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    GetExtendedAgentCard,
}

impl Endpoint {
    /// The operation's name, as [`Operation::method`] gives it.
    pub(crate) const fn operation(self) -> &'static str {
        match self {
            Self::SendMessage => "SendMessage",
            Self::SendStreamingMessage => "SendStreamingMessage",
            Self::GetTask => "GetTask",
            Self::ListTasks => "ListTasks",
            Self::CancelTask => "CancelTask",
            Self::SubscribeToTask => "SubscribeToTask",
            Self::CreatePushConfig => "CreateTaskPushNotificationConfig",
            Self::GetPushConfig => "GetTaskPushNotificationConfig",
            Self::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Self::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Self::GetExtendedAgentCard => "GetExtendedAgentCard",
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

    /// The endpoints of this path, by verb.
    fn verbs(self) -> &'static [(Verb, Endpoint)] {
        use Endpoint as E;
        use Verb::*;
        match self {
            Self::MessageSend => &[(Post, E::SendMessage)],
            Self::MessageStream => &[(Post, E::SendStreamingMessage)],
            Self::Tasks => &[(Get, E::ListTasks)],
            Self::Task(_) => &[(Get, E::GetTask)],
            Self::TaskCancel(_) => &[(Post, E::CancelTask)],
            // §7.1: the proto says GET, the spec text POST; both are served.
            Self::TaskSubscribe(_) => &[(Get, E::SubscribeToTask), (Post, E::SubscribeToTask)],
            Self::PushConfigs(_) => &[(Get, E::ListPushConfigs), (Post, E::CreatePushConfig)],
            Self::PushConfig(..) => &[(Get, E::GetPushConfig), (Delete, E::DeletePushConfig)],
            Self::ExtendedAgentCard => &[(Get, E::GetExtendedAgentCard)],
        }
    }

    /// The `Allow` header of this path.
    fn allow(self) -> &'static str {
        match self.verbs() {
            [(Verb::Get, _), (Verb::Post, _)] => "GET, POST",
            [(Verb::Get, _), (Verb::Delete, _)] => "GET, DELETE",
            [(Verb::Post, _)] => "POST",
            _ => "GET",
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
    NotAllowed(&'static str),
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
pub(crate) struct Route {
    pub(crate) endpoint: Endpoint,
    verb: Verb,
    tenant: Option<String>,
    task_id: String,
    config_id: String,
}

/// Matches `method` and `path` (below the interface prefix). Routes without
/// a tenant are tried first, then the same routes under a `/{tenant}`
/// segment (§7.1, recommended), so `/tasks/tasks` is the task `tasks`. The first
/// path that also has the verb wins; a path that matched only without the
/// verb is a 405. A trailing slash is ignored.
pub(crate) fn route(method: &Method, path: &str) -> Result<Route, Refusal> {
    let path = path.trim_end_matches('/');
    let mut segments = [""; 5];
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
        let Some(resource) = Resource::at(segs) else {
            continue;
        };
        let found = resource.verbs().iter().find(|(v, _)| Some(*v) == verb);
        let Some(&(verb, endpoint)) = found else {
            allow.get_or_insert(resource.allow());
            continue;
        };
        let (task, config) = resource.ids();
        return Ok(Route {
            endpoint,
            verb,
            tenant: tenant
                .map(|t| path_value(t, "tenant"))
                .transpose()
                .map_err(Refusal::Invalid)?,
            task_id: path_value(task, "id").map_err(Refusal::Invalid)?,
            config_id: path_value(config, "id").map_err(Refusal::Invalid)?,
        });
    }
    Err(allow.map_or(Refusal::NotFound, Refusal::NotAllowed))
}

impl Route {
    /// The request body is read (a POST); GET and DELETE bodies are ignored.
    pub(crate) fn reads_body(&self) -> bool {
        self.verb == Verb::Post
    }

    /// The operation, from the path values (which win over body fields),
    /// the query (GET and DELETE) and the body (POST; empty means `{}`).
    pub(crate) fn decode(self, query: Option<&str>, body: &[u8]) -> Result<Operation, A2aError> {
        use Endpoint as E;
        let Route {
            endpoint,
            tenant,
            task_id,
            config_id,
            ..
        } = self;
        let query = || Query::parse(query);
        let tenant_or = |from_body: String| tenant.clone().unwrap_or(from_body);
        Ok(match endpoint {
            E::SendMessage | E::SendStreamingMessage => {
                let mut r: SendMessageRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                if endpoint == E::SendMessage {
                    Operation::SendMessage(r)
                } else {
                    Operation::SendStreamingMessage(r)
                }
            }
            E::GetTask => Operation::GetTask(GetTaskRequest {
                tenant: tenant_or(String::new()),
                id: task_id,
                history_length: query().int(&["historyLength", "history_length"])?,
            }),
            E::ListTasks => Operation::ListTasks(list_tasks(&query(), tenant_or(String::new()))?),
            E::CancelTask => {
                let mut r: CancelTaskRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.id = task_id;
                Operation::CancelTask(r)
            }
            E::SubscribeToTask => {
                let mut r: SubscribeToTaskRequest = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.id = task_id;
                Operation::SubscribeToTask(r)
            }
            E::CreatePushConfig => {
                let mut r: TaskPushNotificationConfig = json(body)?;
                r.tenant = tenant_or(r.tenant);
                r.task_id = task_id;
                Operation::CreateTaskPushNotificationConfig(r)
            }
            E::GetPushConfig | E::DeletePushConfig => {
                let r = TaskPushNotificationConfigId {
                    tenant: tenant_or(String::new()),
                    task_id,
                    id: config_id,
                };
                if endpoint == E::GetPushConfig {
                    Operation::GetTaskPushNotificationConfig(r)
                } else {
                    Operation::DeleteTaskPushNotificationConfig(r)
                }
            }
            E::ListPushConfigs => {
                let q = query();
                Operation::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                    tenant: tenant_or(String::new()),
                    task_id,
                    page_size: q.int(&["pageSize", "page_size"])?.unwrap_or_default(),
                    page_token: q.string(&["pageToken", "page_token"])?,
                })
            }
            E::GetExtendedAgentCard => {
                Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest {
                    tenant: tenant_or(String::new()),
                })
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
    serde_json::from_slice(body).map_err(|_| {
        let kind = match serde_json::from_slice::<IgnoredAny>(body) {
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
        let r = route(&method, path).unwrap_or_else(|e| panic!("{path}: {e:?}"));
        (r.endpoint, r.tenant, r.task_id, r.config_id)
    }

    #[test]
    fn table() {
        use Endpoint as E;
        let none = || None::<String>;
        assert_eq!(ok(Method::POST, "/message:send").0, E::SendMessage);
        assert_eq!(
            ok(Method::POST, "/message:stream/").0,
            E::SendStreamingMessage
        );
        assert_eq!(
            ok(Method::GET, "/tasks/"),
            (E::ListTasks, none(), "".into(), "".into())
        );
        assert_eq!(
            ok(Method::GET, "/tasks/a%2Fb"),
            (E::GetTask, none(), "a/b".into(), "".into())
        );
        assert_eq!(ok(Method::GET, "/tasks/a:b").2, "a:b");
        assert_eq!(
            ok(Method::POST, "/tasks/a:b:cancel"),
            (E::CancelTask, none(), "a:b".into(), "".into())
        );
        assert_eq!(ok(Method::GET, "/tasks/t:subscribe").0, E::SubscribeToTask);
        assert_eq!(ok(Method::POST, "/tasks/t:subscribe").0, E::SubscribeToTask);
        assert_eq!(
            ok(Method::GET, "/tasks/t/pushNotificationConfigs").0,
            E::ListPushConfigs
        );
        assert_eq!(
            ok(Method::POST, "/tasks/t/pushNotificationConfigs").0,
            E::CreatePushConfig
        );
        assert_eq!(
            ok(Method::DELETE, "/tasks/t/pushNotificationConfigs/c"),
            (E::DeletePushConfig, none(), "t".into(), "c".into())
        );
        assert_eq!(
            ok(Method::GET, "/extendedAgentCard").0,
            E::GetExtendedAgentCard
        );
        // §7.1 [REC]: non-tenant routes first; then under a tenant segment.
        assert_eq!(
            ok(Method::GET, "/tasks/tasks"),
            (E::GetTask, none(), "tasks".into(), "".into())
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

    #[test]
    fn refusals() {
        let refuse = |m: Method, p: &str| route(&m, p).unwrap_err();
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
        assert!(matches!(
            refuse(Method::GET, "/message:send"),
            Refusal::NotAllowed("POST")
        ));
        assert!(matches!(
            refuse(Method::PUT, "/tasks/t:subscribe"),
            Refusal::NotAllowed("GET, POST")
        ));
        assert!(matches!(
            refuse(Method::POST, "/tasks/t/pushNotificationConfigs/c"),
            Refusal::NotAllowed("GET, DELETE")
        ));
        assert!(matches!(
            refuse(Method::DELETE, "/tasks"),
            Refusal::NotAllowed("GET")
        ));
        assert!(matches!(
            refuse(Method::GET, "/tasks/%FF"),
            Refusal::Invalid(_)
        ));
    }

    #[test]
    fn bodies() {
        let r = route(&Method::POST, "/ten/tasks/t-1:cancel").unwrap();
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
            let r = route(&m, p).unwrap();
            let name = r.endpoint.operation();
            assert_eq!(
                r.decode(None, body.as_bytes()).unwrap().method(),
                name,
                "{p}"
            );
        }
    }
}
