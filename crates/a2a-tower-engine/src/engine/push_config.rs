//! The four push-notification config operations (a2a-spec.md §4.7) and the
//! inline config of SendMessage, kept with the task in the task log.
//!
//! A config is a [`Record::PushConfigSet`] (created, or replaced by id) or a
//! [`Record::PushConfigDeleted`] appended to its task, so it is as durable
//! as the task, shared by every host of the log, and scoped by the task's
//! [`Authority`](super::Authority): another authority's task and its configs
//! are TaskNotFound for all four operations, decided before anything is
//! looked up. The operations exist only when the card declares
//! `capabilities.pushNotifications` (otherwise PushNotificationNotSupported,
//! −32003).
//!
//! - **Create** validates the config (InvalidParams, one field violation per
//!   problem): `url` an absolute `http` or `https` URL (any host; delivery
//!   guards the address); `authentication.scheme` present, an HTTP token;
//!   `authentication.credentials` and `token` usable as header values. An
//!   empty `id` gets a fresh UUID (time-ordered); an existing `id` is
//!   replaced. The stored config, `id` and `taskId` set, is the answer.
//!   A task keeps at most 16 configs: a new one past that is InvalidParams.
//! - **Get** answers the config, or TaskNotFound when the task has none
//!   with that id (the spec reuses the error for configs).
//! - **No answer carries a secret**: Create, Get and List answer each config
//!   with its `token` and `authentication.credentials` empty (the scheme
//!   stays), so a webhook's credentials are never read back, by the caller
//!   that set them or by anyone else of its authority (A2A#1681). A client
//!   that replaces a config sends its secrets again. Stored, they can be
//!   sealed with a host key (`TaskStore::seal_push_secrets`, feature `push`).
//! - **List** pages through the configs in `id` order: `pageSize` 1..=100
//!   (0 or unset: 100), an opaque `pageToken` (anything else is
//!   InvalidParams), `nextPageToken` empty on the last page.
//! - **Delete** is idempotent: Empty, whether the config existed or not.
//! - **A terminal task keeps its configs and takes new ones**, as the
//!   other SDKs do: a config set or deleted is the one kind of record that
//!   may follow a terminal one ([`Record::may_follow_terminal`]). The task
//!   sends nothing more, so a config created on a terminal task receives
//!   nothing (it gets no delivery cursor); Get, List and Delete see it.
//! - **SendMessage** may carry one config
//!   (`configuration.taskPushNotificationConfig`, same rules, fields under
//!   that prefix): it is committed with the message's admission, in the
//!   commit that creates the task or continues it; on a continuation the
//!   bound of 16 holds as for Create.
//!
//! A config appended while an execution writes the task does not disturb
//! it: the writer folds configs it did not write into its position and
//! commits again.
//!
//! ```
//! use a2a_tower::engine::{Execution, Executor, ExecutorService, TaskLayer};
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::types::{
//!     AgentCard, ListTaskPushNotificationConfigsRequest, Message, SendMessageRequest,
//!     SendMessageResponse, TaskPushNotificationConfig,
//! };
//! use a2a_tower::{A2aRequest, A2aResponse, BoxError, Operation};
//! use tower::{Layer, ServiceExt};
//!
//! struct Ask;
//! impl Executor for Ask {
//!     async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
//!         ex.emit.input_required("Which city?").await?;
//!         Ok(())
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut card = AgentCard::new("Weather", "Asks, then answers", "1.0.0");
//! card.capabilities.push_notifications = Some(true);
//! let engine = TaskLayer::new(card, MemoryTaskLog::new())
//!     .unwrap()
//!     .layer(ExecutorService::new(Ask));
//! let call = |op| engine.clone().oneshot(A2aRequest::new(op));
//!
//! let send = SendMessageRequest { message: Message::user("m-1", "weather?"), ..Default::default() };
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) =
//!     call(Operation::SendMessage(send)).await.unwrap() else { panic!() };
//!
//! let hook = |url: &str| TaskPushNotificationConfig {
//!     task_id: task.id.clone(),
//!     url: url.into(),
//!     ..Default::default()
//! };
//! let err = call(Operation::CreateTaskPushNotificationConfig(hook("ftp://example.com")))
//!     .await
//!     .unwrap_err();
//! assert_eq!(err.violations()[0].0, "url");
//!
//! let res = call(Operation::CreateTaskPushNotificationConfig(hook("https://example.com/hook")))
//!     .await
//!     .unwrap();
//! let A2aResponse::PushConfig(created) = res else { panic!() };
//! assert!(!created.id.is_empty(), "the server assigns an id");
//!
//! let list = ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
//! let res = call(Operation::ListTaskPushNotificationConfigs(list)).await.unwrap();
//! let A2aResponse::PushConfigs(page) = res else { panic!() };
//! assert_eq!(page.configs, [created]);
//! assert_eq!(page.next_page_token, "");
//! # });
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::layer::Shared;
use super::ops::not_found;
use super::service::record_ids;
use crate::log::{AppendRequest, LogErrorKind, Record, Snapshot};
use crate::protocol::check::Violations;
use crate::types::{
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigId,
};
use crate::{A2aError, A2aResponse, CallContext, ErrorKind};

/// The page size of List when the request gives none, and the largest.
const MAX_PAGE: usize = 100;

/// The most configs one task keeps: each is a POST per event, so a caller
/// must not be able to fan one task out to any number of URLs.
pub(crate) const MAX_CONFIGS: usize = 16;
/// The prefix of a List page token.
const TOKEN_PREFIX: &str = "pc1.";
/// How often a create or delete re-reads a task that moved meanwhile.
const ATTEMPTS: usize = 16;

/// The field names of one config's violations: a create request's own
/// fields, or those of SendMessage's inline config.
struct Fields {
    url: &'static str,
    token: &'static str,
    scheme: &'static str,
    credentials: &'static str,
}

const CREATE: Fields = Fields {
    url: "url",
    token: "token",
    scheme: "authentication.scheme",
    credentials: "authentication.credentials",
};

const INLINE: Fields = Fields {
    url: "configuration.taskPushNotificationConfig.url",
    token: "configuration.taskPushNotificationConfig.token",
    scheme: "configuration.taskPushNotificationConfig.authentication.scheme",
    credentials: "configuration.taskPushNotificationConfig.authentication.credentials",
};

/// An absolute `http` or `https` URL with a host.
fn webhook_url(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    let scheme = uri.scheme_str().unwrap_or_default();
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && uri.host().is_some_and(|h| !h.is_empty())
}

/// An HTTP token (RFC 9110 §5.6.2): what an auth scheme is.
fn http_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Usable as (part of) a header value: visible ASCII and spaces.
fn header_text(s: &str) -> bool {
    s.bytes().all(|b| b == b' ' || b.is_ascii_graphic())
}

fn check(v: &mut Violations, c: &TaskPushNotificationConfig, f: &Fields) {
    if c.url.is_empty() {
        v.check(false, f.url, "is required");
    } else {
        v.check(
            webhook_url(&c.url),
            f.url,
            "must be an absolute http or https URL",
        );
    }
    v.check(header_text(&c.token), f.token, "must be visible ASCII");
    if let Some(auth) = &c.authentication {
        if auth.scheme.is_empty() {
            v.check(false, f.scheme, "is required");
        } else {
            v.check(
                http_token(&auth.scheme),
                f.scheme,
                "must be an HTTP authentication scheme name",
            );
        }
        v.check(
            header_text(&auth.credentials),
            f.credentials,
            "must be visible ASCII",
        );
    }
}

/// SendMessage's inline config, checked against the card and the rules
/// above, with an id (the task id is set at admission).
pub(crate) fn inline(
    shared: &Shared,
    config: Option<&TaskPushNotificationConfig>,
) -> Result<Option<TaskPushNotificationConfig>, A2aError> {
    let Some(config) = config else {
        return Ok(None);
    };
    if !shared.card.capabilities.push_notifications() {
        return Err(A2aError::new(ErrorKind::PushNotificationNotSupported));
    }
    let mut v = Violations::default();
    check(&mut v, config, &INLINE);
    v.into_result()?;
    let mut config = config.clone();
    assign_id(&mut config);
    Ok(Some(config))
}

/// The record that stores SendMessage's inline config (from [`inline`]) on
/// the task `task_id`.
pub(crate) fn inline_record(
    config: Option<TaskPushNotificationConfig>,
    task_id: &str,
) -> Option<Record> {
    config.map(|mut config| {
        config.task_id = task_id.to_owned();
        Record::PushConfigSet { config }
    })
}

/// The bound of [`MAX_CONFIGS`] for SendMessage's inline config on a
/// continuation of the task `snap`: a new id past the bound is
/// InvalidParams, as Create's is.
pub(crate) fn bounded(
    snap: &Snapshot,
    config: Option<&TaskPushNotificationConfig>,
) -> Result<(), A2aError> {
    let Some(config) = config else {
        return Ok(());
    };
    let configs = snap.projection.push_configs();
    if configs.len() >= MAX_CONFIGS && !configs.iter().any(|c| c.id == config.id) {
        return Err(A2aError::invalid_params(
            "configuration.taskPushNotificationConfig",
            "the task has the most push notification configs it may have (16)",
        ));
    }
    Ok(())
}

/// `config` as the operations answer it: without its secrets (`token` and
/// `authentication.credentials` empty, the scheme kept), so that no answer
/// carries a webhook credential back (the caller that set them has them).
pub(crate) fn redacted(config: &TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    let mut config = config.clone();
    config.token.clear();
    if let Some(auth) = &mut config.authentication {
        auth.credentials.clear();
    }
    config
}

fn assign_id(config: &mut TaskPushNotificationConfig) {
    if config.id.is_empty() {
        config.id = super::id_text(uuid::Uuid::now_v7());
    }
}

/// The task for `authority`, not found as TaskNotFound.
async fn task(shared: &Shared, authority: &str, task_id: &str) -> Result<Snapshot, A2aError> {
    let snap = shared
        .log
        .snapshot(authority, task_id)
        .await
        .map_err(not_found(task_id))?;
    record_ids(&snap.task.id, &snap.task.context_id);
    Ok(snap)
}

/// The task's configs (a terminal task's too).
fn active(snap: &Snapshot) -> &[TaskPushNotificationConfig] {
    snap.projection.push_configs()
}

fn config_not_found(task_id: &str) -> A2aError {
    A2aError::task_not_found(task_id).with_message("Push notification config not found")
}

/// Appends what `decide` asks for to the task's current head, as any caller
/// may (a conditional append with the task's epoch, which an execution
/// writing the task folds in); re-reads and decides again when the task
/// moved meanwhile. `decide` answers `Err(response)` to append nothing.
async fn append(
    shared: &Shared,
    authority: &str,
    task_id: &str,
    decide: impl Fn(&Snapshot) -> Result<Result<Record, A2aResponse>, A2aError>,
) -> Result<A2aResponse, A2aError> {
    for _ in 0..ATTEMPTS {
        let snap = task(shared, authority, task_id).await?;
        let record = match decide(&snap)? {
            Ok(record) => record,
            Err(response) => return Ok(response),
        };
        let request = AppendRequest::new(authority, task_id, snap.seq, snap.epoch, vec![record]);
        match shared.log.append(request).await {
            Ok(_) => return Ok(A2aResponse::Empty),
            // Moved, taken over, or ended meanwhile: decide again.
            Err(e)
                if matches!(
                    e.kind(),
                    LogErrorKind::Conflict | LogErrorKind::Fenced | LogErrorKind::Invalid
                ) =>
            {
                tokio::task::yield_now().await;
            }
            Err(e) => return Err(not_found(task_id)(e)),
        }
    }
    Err(A2aError::new(ErrorKind::Unavailable).with_message("The task is changing too fast; retry"))
}

/// CreateTaskPushNotificationConfig.
pub(crate) async fn create(
    shared: &Shared,
    mut req: TaskPushNotificationConfig,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    let mut v = Violations::default();
    check(&mut v, &req, &CREATE);
    v.into_result()?;
    assign_id(&mut req);
    let task_id = req.task_id.clone();
    let stored = req.clone();
    append(shared, &authority, &task_id, |snap| {
        let configs = snap.projection.push_configs();
        if configs.contains(&req) {
            // The same config again (a retry): nothing to record.
            return Ok(Err(A2aResponse::Empty));
        }
        if configs.len() >= MAX_CONFIGS && !configs.iter().any(|c| c.id == req.id) {
            return Err(A2aError::invalid_params(
                "taskId",
                "the task has the most push notification configs it may have (16)",
            ));
        }
        Ok(Ok(Record::PushConfigSet {
            config: req.clone(),
        }))
    })
    .await?;
    Ok(A2aResponse::PushConfig(redacted(&stored)))
}

/// GetTaskPushNotificationConfig.
pub(crate) async fn get(
    shared: &Shared,
    req: TaskPushNotificationConfigId,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    let snap = task(shared, &authority, &req.task_id).await?;
    active(&snap)
        .iter()
        .find(|c| c.id == req.id)
        .map(|c| A2aResponse::PushConfig(redacted(c)))
        .ok_or_else(|| config_not_found(&req.task_id))
}

/// ListTaskPushNotificationConfigs.
pub(crate) async fn list(
    shared: &Shared,
    req: ListTaskPushNotificationConfigsRequest,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    // 0..=100: checked at dispatch.
    let size = match usize::try_from(req.page_size) {
        Ok(0) | Err(_) => MAX_PAGE,
        Ok(n) => n.min(MAX_PAGE),
    };
    let after =
        match req.page_token.as_str() {
            "" => None,
            token => Some(from_token(token).ok_or_else(|| {
                A2aError::invalid_params("pageToken", "is not a valid page token")
            })?),
        };
    let authority = shared.authority.resolve(ctx)?;
    let snap = task(shared, &authority, &req.task_id).await?;
    let mut configs: Vec<&TaskPushNotificationConfig> = active(&snap)
        .iter()
        .filter(|c| after.as_deref().is_none_or(|a| c.id.as_str() > a))
        .collect();
    configs.sort_unstable_by(|a, b| a.id.cmp(&b.id));
    let more = configs.len() > size;
    configs.truncate(size);
    let next_page_token = match configs.last() {
        Some(last) if more => to_token(&last.id),
        _ => String::new(),
    };
    Ok(A2aResponse::PushConfigs(
        ListTaskPushNotificationConfigsResponse {
            configs: configs.into_iter().map(redacted).collect(),
            next_page_token,
        },
    ))
}

/// DeleteTaskPushNotificationConfig: idempotent.
pub(crate) async fn delete(
    shared: &Shared,
    req: TaskPushNotificationConfigId,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    append(shared, &authority, &req.task_id, |snap| {
        Ok(if active(snap).iter().any(|c| c.id == req.id) {
            Ok(Record::PushConfigDeleted { id: req.id.clone() })
        } else {
            Err(A2aResponse::Empty)
        })
    })
    .await
}

fn to_token(last_id: &str) -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(last_id))
}

fn from_token(token: &str) -> Option<String> {
    let body = token.strip_prefix(TOKEN_PREFIX)?;
    String::from_utf8(URL_SAFE_NO_PAD.decode(body).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AuthenticationInfo;

    fn fields(c: &TaskPushNotificationConfig) -> Vec<String> {
        let mut v = Violations::default();
        check(&mut v, c, &CREATE);
        match v.into_result() {
            Ok(()) => vec![],
            Err(e) => e.violations().iter().map(|(f, _)| f.clone()).collect(),
        }
    }

    fn config(url: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            task_id: "t".into(),
            url: url.into(),
            ..Default::default()
        }
    }

    #[test]
    fn urls() {
        for ok in [
            "http://example.com/hook",
            "https://127.0.0.1:8443/a?b=c",
            "HTTPS://[::1]/x",
            "http://localhost",
        ] {
            assert!(fields(&config(ok)).is_empty(), "{ok}");
        }
        for bad in [
            "",
            "example.com/hook",
            "/hook",
            "ftp://example.com/x",
            "file:///etc/passwd",
            "http://exa mple.com",
            "mailto:a@b.c",
        ] {
            assert_eq!(fields(&config(bad)), ["url"], "{bad:?}");
        }
    }

    #[test]
    fn authentication_and_token() {
        let mut c = config("https://example.com");
        c.authentication = Some(AuthenticationInfo::default());
        assert_eq!(fields(&c), ["authentication.scheme"]);
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer x".into(),
            credentials: "a\r\nX-Evil: 1".into(),
        });
        c.token = "t\n".into();
        assert_eq!(
            fields(&c),
            [
                "token",
                "authentication.scheme",
                "authentication.credentials"
            ]
        );
        c.authentication = Some(AuthenticationInfo {
            scheme: "Basic".into(),
            credentials: "dXNlcjpwYXNz".into(),
        });
        c.token = "opaque token".into();
        assert!(fields(&c).is_empty());
    }

    #[test]
    fn page_tokens_round_trip() {
        for id in ["", "a", "0193-…/x"] {
            assert_eq!(from_token(&to_token(id)).as_deref(), Some(id));
        }
        assert_eq!(from_token("abc"), None);
        assert_eq!(from_token("pc1.!!"), None);
    }
}
