//! [`ManagedService`]: a program served as A2A tasks, a complete
//! `Service<A2aRequest>` over a task log.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::StreamExt;
use tower_service::Service;

use super::admit;
use super::pending::EXTERNAL_WAIT_EXTENSION;
use super::policy::OutputPolicy;
use super::program::Program;
use super::recover;
use super::runs::Runs;
use crate::engine::dispatch::{EngineCore, dispatch};
use crate::engine::push_config as push;
use crate::engine::{Authority, Shared, TaskLayer, event_stream, record_ids, view};
use crate::log::{LogError, TaskLog, TaskStore, Watch};
use crate::types::{
    AgentCard, CancelTaskRequest, Role, SendMessageRequest, SendMessageResponse, StreamResponse,
};
use crate::{A2aError, A2aRequest, A2aResponse, CallContext, ConfigError, EventStream};

/// What every clone of a [`ManagedService`] shares.
pub(crate) struct Inner {
    pub(crate) engine: Shared,
    pub(crate) log: Arc<dyn TaskLog>,
    pub(crate) program: Program,
    pub(crate) service: String,
    pub(crate) policy: OutputPolicy,
    pub(crate) host_id: Arc<str>,
    pub(crate) runs: Runs,
}

/// Serves one [`Program`] as A2A tasks: SendMessage starts a run (or answers
/// one of its waits), GetTask, ListTasks and SubscribeToTask read the task
/// log, CancelTask records a cancel request. Built by [`ManagedBuilder`].
///
/// The task id of a start is derived from (service, authority, context id,
/// message id): a retry with the same ids and input returns the task already
/// started, the same ids with another input are refused, a new message id
/// starts separate work.
#[derive(Clone)]
pub struct ManagedService {
    inner: Arc<Inner>,
}

impl fmt::Debug for ManagedService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedService")
            .field("program", &self.inner.program.name())
            .field("service", &self.inner.service)
            .finish_non_exhaustive()
    }
}

/// Configuration of a [`ManagedService`].
#[must_use]
pub struct ManagedBuilder {
    card: AgentCard,
    store: TaskStore,
    program: Program,
    service: Option<String>,
    authority: Authority,
    host_id: Option<String>,
    subscriber_buffer: Option<usize>,
}

impl fmt::Debug for ManagedBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedBuilder")
            .field("program", &self.program.name())
            .finish_non_exhaustive()
    }
}

impl ManagedBuilder {
    /// The service name that isolates endpoints sharing one task log (default:
    /// the program's name). Tasks of another service look like tasks that do
    /// not exist.
    pub fn service(mut self, name: impl Into<String>) -> Self {
        self.service = Some(name.into());
        self
    }

    /// How the authority of a call is derived (default
    /// [`Authority::public`], for unauthenticated examples only).
    pub fn authority(mut self, authority: Authority) -> Self {
        self.authority = authority;
        self
    }

    /// The id of this host (default `local`); hosts sharing a log need
    /// distinct, stable ids. Recovery resumes the runs of one host id.
    pub fn host_id(mut self, id: impl Into<String>) -> Self {
        self.host_id = Some(id.into());
        self
    }

    /// How far a subscriber may lag behind before its stream is cut (default:
    /// no limit; a slow reader continues from the log at its cursor).
    pub fn subscriber_buffer(mut self, records: usize) -> Self {
        self.subscriber_buffer = Some(records);
        self
    }

    /// The service. The card must declare the `urn:scope:a2a:external-wait`
    /// extension and output modes the policy can serve (`application/json`,
    /// `text/plain`, or both).
    pub fn build(self) -> Result<ManagedService, ConfigError> {
        let policy = OutputPolicy::from_modes(&self.card.default_output_modes)?;
        if !self
            .card
            .capabilities
            .extensions
            .iter()
            .any(|e| e.uri == EXTERNAL_WAIT_EXTENSION)
        {
            return Err(ConfigError::new(format!(
                "a managed task's card declares the extension {EXTERNAL_WAIT_EXTENSION}"
            )));
        }
        let service = self
            .service
            .unwrap_or_else(|| self.program.name().to_owned());
        if service.is_empty() || service.contains('/') {
            return Err(ConfigError::new(
                "a managed service name must be non-empty and without '/'",
            ));
        }
        let user = self.authority;
        let prefix = service.clone();
        let authority =
            Authority::from_fn(move |ctx| user.resolve(ctx).map(|a| format!("{prefix}/{a}")));
        let log = self.store.records().clone();
        let mut tasks = TaskLayer::new(self.card, self.store)?.authority(authority);
        if let Some(id) = self.host_id {
            tasks = tasks.host_id(id)?;
        }
        if let Some(n) = self.subscriber_buffer {
            tasks = tasks.subscriber_buffer(n)?;
        }
        let engine = tasks.into_shared();
        Ok(ManagedService {
            inner: Arc::new(Inner {
                host_id: engine.host_id.clone(),
                engine,
                log,
                program: self.program,
                service,
                policy,
                runs: Runs::default(),
            }),
        })
    }
}

impl ManagedService {
    /// A builder serving `program` for the agent described by `card`, with
    /// tasks in `store` (any built-in log).
    pub fn builder(
        card: AgentCard,
        store: impl Into<TaskStore>,
        program: Program,
    ) -> ManagedBuilder {
        ManagedBuilder {
            card,
            store: store.into(),
            program,
            service: None,
            authority: Authority::public(),
            host_id: None,
            subscriber_buffer: None,
        }
    }

    /// Resumes the runs this host id was running when its process died (also
    /// those waiting for answers), by replaying their journals. Await it once
    /// before serving.
    pub async fn recover(&self) -> Result<crate::engine::Recovered, LogError> {
        let host = self.inner.host_id.clone();
        recover::resume(&self.inner, &host).await
    }

    /// Resumes the runs of another host id, known to be dead (its process is
    /// gone for good): their writer epoch is taken over, fencing it.
    pub async fn recover_host(&self, host_id: &str) -> Result<crate::engine::Recovered, LogError> {
        recover::resume(&self.inner, host_id).await
    }

    /// The number of runs on this host.
    pub fn running(&self) -> usize {
        self.inner.runs.len()
    }
}

impl Service<A2aRequest> for ManagedService {
    type Response = A2aResponse;
    type Error = A2aError;
    type Future = crate::engine::ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), A2aError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: A2aRequest) -> Self::Future {
        dispatch(self.clone(), req)
    }
}

/// The managed core's own part of the engine's dispatch: a new input
/// starts (or reconciles with) a run, an answer resumes a wait, and a cancel
/// is recorded for the run; every other operation is the engine's.
impl EngineCore for ManagedService {
    fn shared(&self) -> &Shared {
        &self.inner.engine
    }

    async fn send(
        self,
        req: SendMessageRequest,
        context: CallContext,
        stream: bool,
    ) -> Result<A2aResponse, A2aError> {
        send(&self.inner, req, &context, stream).await
    }

    async fn cancel(
        self,
        req: CancelTaskRequest,
        context: CallContext,
    ) -> Result<A2aResponse, A2aError> {
        let authority = self.inner.engine.authority.resolve(&context)?;
        let task = admit::cancel(&self.inner, &authority, &req.id).await?;
        record_ids(&task.id, &task.context_id);
        Ok(A2aResponse::Task(view(&task, None, true)))
    }
}

async fn send(
    inner: &Arc<Inner>,
    req: SendMessageRequest,
    context: &CallContext,
    streaming: bool,
) -> Result<A2aResponse, A2aError> {
    let authority = inner.engine.authority.resolve(context)?;
    if req.message.role == Role::Agent {
        return Err(A2aError::invalid_params(
            "message.role",
            "must be ROLE_USER",
        ));
    }
    super::input::exact_numbers(&req.message, context)?;
    let (return_immediately, history_length) = req
        .configuration
        .as_ref()
        .map_or((false, None), |c| (c.return_immediately, c.history_length));
    let config = req
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.as_ref());
    let config = push::inline(&inner.engine, config)?;
    let starts = req.message.task_id.is_empty();
    let (task_id, _) = if starts {
        admit::start(inner, &authority, req.message, config).await?
    } else {
        admit::answer(inner, &authority, req.message, config).await?
    };
    // A blocking start answers once the run is quiescent (every process
    // waiting or exited), with every question it asks at once; a run on
    // another host (a retried start) is seen through its commits alone.
    let run = (starts && !streaming && !return_immediately)
        .then(|| inner.runs.get(&task_id))
        .flatten();
    let log = &inner.log;
    let watch = log.watch(&authority, &task_id, None).await?;
    record_ids(&watch.snapshot.task.id, &watch.snapshot.task.context_id);
    let state = watch.snapshot.state();
    let settled = state.is_terminal() || (state.is_interrupted() && run.is_none());
    if streaming {
        if settled {
            let task = (*watch.snapshot.task).clone();
            return Ok(A2aResponse::Stream(EventStream::from_iter(vec![Ok(
                StreamResponse::Task(task),
            )])));
        }
        return Ok(A2aResponse::Stream(event_stream(
            watch,
            crate::engine::Start::Snapshot,
            inner.engine.subscriber_buffer,
            Some(crate::engine::Reopen {
                log: log.clone(),
                authority: authority.clone(),
                task_id: task_id.clone(),
            }),
        )));
    }
    let task = if return_immediately || settled {
        watch.snapshot.task
    } else {
        let Watch { mut records, .. } = watch;
        let quiet = async {
            match &run {
                Some(run) => tokio::select! {
                    () = run.quiet.wait() => {}
                    () = run.lost.wait() => {}
                },
                None => std::future::pending().await,
            }
        };
        tokio::pin!(quiet);
        loop {
            tokio::select! {
                () = &mut quiet => break,
                record = records.next() => match record {
                    Some(Ok(s)) => {
                        let ends = s.record.state().is_some_and(|st| {
                            st.is_terminal() || (st.is_interrupted() && run.is_none())
                        });
                        if ends {
                            break;
                        }
                    }
                    Some(Err(e)) => return Err(e.into()),
                    None => break,
                },
            }
        }
        log.snapshot(&authority, &task_id).await?.task
    };
    Ok(A2aResponse::SendMessage(SendMessageResponse::Task(
        view(&task, history_length, true).into(),
    )))
}
