//! The push-config storage rules through the engine, on any task log
//! (a2a-spec.md §4.7, §4.9): create, get, list with pages, idempotent
//! delete, ids, replacement, validation, authority scoping, terminal tasks,
//! SendMessage's inline config, configs appended while an execution on
//! another engine writes the task, and configs read back by a second
//! handle of the log (a restart). The built-in logs run it in the
//! repository's `tests/logs/log_{memory,sqlite,postgres}.rs`.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::{Authority, Execution, TaskLayer, TaskService};
use crate::log::{Record, TaskBackend, TaskLog};
use crate::types::{
    AgentCard, Artifact, AuthenticationInfo, ListTaskPushNotificationConfigsRequest, Message, Part,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigId, TaskState,
};
use crate::{A2aError, A2aRequest, A2aResponse, BoxError, ErrorKind, Operation};
use tokio::sync::watch;
use tower::util::BoxCloneSyncService;
use tower::{Layer, ServiceExt};

type Svc = TaskService<BoxCloneSyncService<Execution, (), BoxError>>;

mod across;
pub use across::{configs_fold_into_a_running_execution, configs_read_back, configs_written};

const GUARD: Duration = Duration::from_secs(10);

/// Engines over one log, sharing a unique authority prefix (the tenant of a
/// call is its caller), and the gate of `hold` tasks.
pub(crate) struct Engines {
    prefix: String,
    gate: watch::Sender<bool>,
}

impl Engines {
    pub(crate) fn new() -> Self {
        Self {
            prefix: uuid::Uuid::new_v4().to_string(),
            gate: watch::channel(false).0,
        }
    }

    /// An engine of `host` over `log`; its card declares push notifications
    /// if `push`. Its executor: `hold` emits WORKING, waits for the gate,
    /// then emits an artifact and completes; `done` completes; `ask` and
    /// any later message but `done` ask for input; anything else completes.
    pub(crate) fn engine(&self, host: &str, log: Arc<dyn TaskBackend>, push: bool) -> Svc {
        let gate = self.gate.subscribe();
        let inner = BoxCloneSyncService::new(tower::service_fn(move |ex: Execution| {
            let mut gate = gate.clone();
            async move {
                let first = ex.task.history.first().map(Message::text);
                match (first.as_deref(), ex.message.text().as_str()) {
                    (_, "done") => ex.emit.complete().await?,
                    (Some("hold"), _) => {
                        ex.emit.working().await?;
                        let _ = gate.wait_for(|open| *open).await;
                        let artifact = Artifact {
                            artifact_id: "out".into(),
                            parts: vec![Part::text("late")],
                            ..Artifact::default()
                        };
                        ex.emit.artifact(artifact, false, true).await?;
                        ex.emit.complete().await?;
                    }
                    (Some("ask"), _) => ex.emit.input_required("more?").await?,
                    _ => ex.emit.complete().await?,
                }
                Ok::<(), BoxError>(())
            }
        }));
        let mut card = AgentCard::new("Push", "stores push configs", "1.0.0");
        card.capabilities.push_notifications = Some(push);
        let prefix = self.prefix.clone();
        TaskLayer::new(card, log)
            .unwrap()
            .authority(Authority::from_fn(move |ctx| {
                Ok(format!("{prefix}/{}", ctx.tenant))
            }))
            .host_id(host)
            .unwrap()
            .layer(inner)
    }
}

pub(crate) async fn call(svc: &Svc, op: Operation) -> Result<A2aResponse, A2aError> {
    tokio::time::timeout(GUARD, svc.clone().oneshot(A2aRequest::new(op)))
        .await
        .expect("the call answered")
}

/// SendMessage of `text` by `tenant` (to `task` when not empty, at once if
/// `immediately`), with an inline config if given.
pub(crate) async fn send(
    svc: &Svc,
    tenant: &str,
    task: &str,
    text: &str,
    config: Option<TaskPushNotificationConfig>,
    immediately: bool,
) -> Result<Task, A2aError> {
    let mut message = Message::user(uuid::Uuid::new_v4().to_string(), text);
    message.task_id = task.into();
    let req = SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            task_push_notification_config: config,
            return_immediately: immediately,
            ..Default::default()
        }),
        tenant: tenant.into(),
        ..Default::default()
    };
    match call(svc, Operation::SendMessage(req)).await? {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => Ok(t.into_inner()),
        other => panic!("expected a task, got {other:?}"),
    }
}

pub(crate) fn hook(tenant: &str, task: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: tenant.into(),
        id: id.into(),
        task_id: task.into(),
        url: url.into(),
        ..Default::default()
    }
}

fn id(tenant: &str, task: &str, id: &str) -> TaskPushNotificationConfigId {
    TaskPushNotificationConfigId {
        tenant: tenant.into(),
        task_id: task.into(),
        id: id.into(),
    }
}

pub(crate) async fn create(
    svc: &Svc,
    c: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2aError> {
    match call(svc, Operation::CreateTaskPushNotificationConfig(c)).await? {
        A2aResponse::PushConfig(c) => Ok(c),
        other => panic!("expected a config, got {other:?}"),
    }
}

pub(crate) async fn get(
    svc: &Svc,
    tenant: &str,
    task: &str,
    config: &str,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let op = Operation::GetTaskPushNotificationConfig(id(tenant, task, config));
    match call(svc, op).await? {
        A2aResponse::PushConfig(c) => Ok(c),
        other => panic!("expected a config, got {other:?}"),
    }
}

/// One page: the configs and the next page token.
pub(crate) async fn page(
    svc: &Svc,
    tenant: &str,
    task: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<TaskPushNotificationConfig>, String), A2aError> {
    let op = Operation::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
        tenant: tenant.into(),
        task_id: task.into(),
        page_size: size,
        page_token: token.into(),
    });
    match call(svc, op).await? {
        A2aResponse::PushConfigs(p) => Ok((p.configs, p.next_page_token)),
        other => panic!("expected a page, got {other:?}"),
    }
}

pub(crate) async fn delete(
    svc: &Svc,
    tenant: &str,
    task: &str,
    config: &str,
) -> Result<(), A2aError> {
    let op = Operation::DeleteTaskPushNotificationConfig(id(tenant, task, config));
    match call(svc, op).await? {
        A2aResponse::Empty => Ok(()),
        other => panic!("expected Empty, got {other:?}"),
    }
}

fn kind<T: std::fmt::Debug>(r: Result<T, A2aError>) -> ErrorKind {
    r.expect_err("an error").kind()
}

fn fields<T: std::fmt::Debug>(r: Result<T, A2aError>) -> Vec<String> {
    let e = r.expect_err("invalid params");
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "{e:?}");
    e.violations().iter().map(|(f, _)| f.clone()).collect()
}

/// The four operations on `task` as `tenant`, each with its error kind.
async fn four_kinds(svc: &Svc, tenant: &str, task: &str) -> [ErrorKind; 4] {
    [
        kind(create(svc, hook(tenant, task, "x", "https://example.com/x")).await),
        kind(get(svc, tenant, task, "x").await),
        kind(page(svc, tenant, task, 0, "").await),
        kind(delete(svc, tenant, task, "x").await),
    ]
}

/// Create, get, list with pages, replace, delete, validation, authority
/// scoping, terminal tasks, the inline config and the capability.
pub async fn push_config_rules(log: Arc<dyn TaskBackend>) {
    let engines = Engines::new();
    let svc = engines.engine("a", log.clone(), true);
    let task = send(&svc, "alice", "", "ask", None, false).await.unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    let t = task.id.as_str();

    // An empty id is assigned; the answer is what Get returns.
    let auto = create(&svc, hook("alice", t, "", "https://example.com/a"))
        .await
        .unwrap();
    assert!(uuid::Uuid::parse_str(&auto.id).is_ok(), "{}", auto.id);
    assert_eq!(auto.task_id, t);
    assert_eq!(get(&svc, "alice", t, &auto.id).await.unwrap(), auto);

    // The same id replaces; the same config again changes nothing.
    let mut c1 = hook("alice", t, "c1", "http://hooks.example.com/1");
    c1.token = "tok".into();
    c1.authentication = Some(AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: "secret".into(),
    });
    // Answers carry no secret (the scheme stays); the log keeps them.
    let mut c1_answered = c1.clone();
    c1_answered.token.clear();
    c1_answered
        .authentication
        .as_mut()
        .unwrap()
        .credentials
        .clear();
    assert_eq!(create(&svc, c1.clone()).await.unwrap(), c1_answered);
    assert_eq!(get(&svc, "alice", t, "c1").await.unwrap(), c1_answered);
    let listed = page(&svc, "alice", t, 0, "").await.unwrap().0;
    assert!(listed.contains(&c1_answered), "{listed:?}");
    let stored = log
        .snapshot(&format!("{}/alice", engines.prefix), t)
        .await
        .unwrap();
    assert!(stored.projection.push_configs().contains(&c1));
    let replaced = hook("alice", t, "c1", "https://hooks.example.com/2");
    assert_eq!(create(&svc, replaced.clone()).await.unwrap(), replaced);
    assert_eq!(create(&svc, replaced.clone()).await.unwrap(), replaced);
    assert_eq!(get(&svc, "alice", t, "c1").await.unwrap(), replaced);
    let sets = |records: &[crate::log::Sequenced]| {
        records
            .iter()
            .filter(|s| matches!(&*s.record, Record::PushConfigSet { .. }))
            .count()
    };
    let authority = format!("{}/alice", engines.prefix);
    let records = log.read(&authority, t, 0).await.unwrap();
    assert_eq!(sets(&records), 3, "the repeated config was not recorded");

    // Pages in id order; every config once; the last token empty.
    for i in 2..=5 {
        create(&svc, hook("alice", t, &format!("c{i}"), "https://e.com"))
            .await
            .unwrap();
    }
    let mut all = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let (configs, next) = page(&svc, "alice", t, 2, &token).await.unwrap();
        assert!(configs.len() <= 2);
        all.extend(configs.into_iter().map(|c| c.id));
        pages += 1;
        if next.is_empty() {
            break;
        }
        token = next;
    }
    let mut want = vec![auto.id.clone()];
    want.extend((1..=5).map(|i| format!("c{i}")));
    want.sort();
    assert_eq!(all, want);
    assert_eq!(pages, 3);
    let (everything, next) = page(&svc, "alice", t, 0, "").await.unwrap();
    assert_eq!(everything.len(), 6);
    assert_eq!(next, "");
    assert_eq!(
        fields(page(&svc, "alice", t, 2, "garbage").await),
        ["pageToken"]
    );

    // Delete is idempotent; a deleted or unknown config is TaskNotFound.
    delete(&svc, "alice", t, "c1").await.unwrap();
    delete(&svc, "alice", t, "c1").await.unwrap();
    delete(&svc, "alice", t, "never").await.unwrap();
    assert_eq!(
        kind(get(&svc, "alice", t, "c1").await),
        ErrorKind::TaskNotFound
    );
    assert_eq!(page(&svc, "alice", t, 0, "").await.unwrap().0.len(), 5);

    // Validation, field by field, before any lookup.
    for (url, ok) in [
        ("https://example.com/hook", true),
        ("http://10.0.0.1:8080/x", true),
        ("", false),
        ("example.com/hook", false),
        ("ftp://example.com/hook", false),
        ("https://", false),
    ] {
        let r = create(&svc, hook("alice", "no-such-task", "v", url)).await;
        if ok {
            assert_eq!(kind(r), ErrorKind::TaskNotFound, "{url}");
        } else {
            assert_eq!(fields(r), ["url"], "{url}");
        }
    }
    let mut bad = hook("alice", t, "v", "https://example.com");
    bad.authentication = Some(AuthenticationInfo::default());
    assert_eq!(
        fields(create(&svc, bad.clone()).await),
        ["authentication.scheme"]
    );
    bad.token = "a\nb".into();
    bad.authentication = Some(AuthenticationInfo {
        scheme: "Basic".into(),
        credentials: "x\r\ny".into(),
    });
    assert_eq!(
        fields(create(&svc, bad).await),
        ["token", "authentication.credentials"]
    );

    // Unknown task, and another authority's task: TaskNotFound for all four.
    let nf = [ErrorKind::TaskNotFound; 4];
    assert_eq!(four_kinds(&svc, "alice", "no-such-task").await, nf);
    assert_eq!(four_kinds(&svc, "bob", t).await, nf);
    assert_eq!(page(&svc, "alice", t, 0, "").await.unwrap().0.len(), 5);
    assert_eq!(get(&svc, "alice", t, "c2").await.unwrap().id, "c2");

    // A follow-up's inline config is stored with its admission.
    let inline = hook("", "", "", "https://example.com/inline");
    let again = send(&svc, "alice", t, "more", Some(inline), false)
        .await
        .unwrap();
    assert_eq!(again.status.state, TaskState::InputRequired);
    let (configs, _) = page(&svc, "alice", t, 0, "").await.unwrap();
    let stored = configs
        .iter()
        .find(|c| c.url == "https://example.com/inline")
        .expect("the inline config");
    assert_eq!(stored.task_id, t);
    assert!(!stored.id.is_empty());

    // A terminal task keeps its configs and takes new ones, which receive
    // nothing more: no delivery cursor.
    let done = send(&svc, "alice", t, "done", None, false).await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let cursors = log.delivery_cursors(&authority, t).await.unwrap();
    let late = hook("alice", t, "late", "https://example.com/late");
    assert_eq!(create(&svc, late.clone()).await.unwrap(), late);
    assert_eq!(get(&svc, "alice", t, "late").await.unwrap(), late);
    assert_eq!(get(&svc, "alice", t, "c2").await.unwrap().id, "c2");
    let count = page(&svc, "alice", t, 0, "").await.unwrap().0.len();
    assert_eq!(
        log.delivery_cursors(&authority, t).await.unwrap(),
        cursors,
        "the late config has no cursor"
    );
    delete(&svc, "alice", t, "c2").await.unwrap();
    assert_eq!(
        kind(get(&svc, "alice", t, "c2").await),
        ErrorKind::TaskNotFound
    );
    assert_eq!(
        page(&svc, "alice", t, 0, "").await.unwrap().0.len(),
        count - 1
    );
    assert_eq!(
        log.snapshot(&authority, t).await.unwrap().task.status.state,
        TaskState::Completed,
        "the task is unchanged"
    );

    // A new task's inline config: in the commit that creates the task.
    let inline = hook("", "", "mine", "https://example.com/new");
    let task = send(&svc, "alice", "", "ask", Some(inline), false)
        .await
        .unwrap();
    let got = get(&svc, "alice", &task.id, "mine").await.unwrap();
    assert_eq!(got.task_id, task.id);
    let records = log.read(&authority, &task.id, 0).await.unwrap();
    assert!(matches!(&*records[0].record, Record::Created { .. }));
    let set = records
        .iter()
        .position(|s| matches!(&*s.record, Record::PushConfigSet { .. }))
        .unwrap();
    let first_status = records
        .iter()
        .position(|s| matches!(&*s.record, Record::StatusChanged { .. }))
        .unwrap();
    assert!(set < first_status, "stored before the agent ran");
    let bad = hook("", "", "", "not a url");
    let err = send(&svc, "alice", "", "ask", Some(bad), false).await;
    assert_eq!(
        fields(err),
        ["configuration.taskPushNotificationConfig.url"]
    );

    // Without the capability: −32003 for all four, and for an inline config.
    let off = engines.engine("a", log, false);
    let pns = [ErrorKind::PushNotificationNotSupported; 4];
    assert_eq!(four_kinds(&off, "alice", &task.id).await, pns);
    assert_eq!(four_kinds(&off, "alice", "no-such-task").await, pns);
    let inline = hook("", "", "", "https://example.com/x");
    assert_eq!(
        kind(send(&off, "alice", "", "ask", Some(inline), false).await),
        ErrorKind::PushNotificationNotSupported
    );
}
