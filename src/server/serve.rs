//! The cores an [`A2aServerBuilder`] serves (a raw core, an agent or
//! executor on the task engine, a managed program, a team), the assembly
//! of the whole stack around one and the start-up recovery of its log.
//!
//! ```
//! use a2a_tower::server::A2aServer;
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind};
//!
//! let card = AgentCard::new("Raw", "A raw core", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost/"))
//!     .with_skill(AgentSkill::new("raw", "Raw", "Refuses everything"));
//! let core = tower::service_fn(|_req: A2aRequest| async {
//!     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
//! });
//! let app = A2aServer::builder(card).core(core);
//! assert!(app.is_ok());
//! ```

use tower_layer::Layer;

use super::builder::{A2aHttpService, A2aServerBuilder, Edge};
use crate::card::{ExtendedCardService, StackCapabilities};
use crate::engine::{
    Agent, AgentExecutor, Execution, Executor, ExecutorService, TaskLayer, TaskService,
};
use crate::log::{MemoryTaskLog, TaskStore};
use crate::{
    A2aService, AgentCardLayer, BodyLimitLayer, BoxError, ConfigError, ExtensionsLayer,
    VersionLayer,
};
use a2a_tower_http::binding::BindingsLayer;

impl<AL, HL> A2aServerBuilder<AL, HL> {
    /// Serves a raw core (no task engine, no log, nothing to recover: the
    /// one finisher that is not `async`).
    pub fn core<S>(self, core: S) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
    where
        AL: Layer<ExtendedCardService<S>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        let caps = self.capabilities.unwrap_or_default();
        self.assemble(core, caps)
    }

    /// Serves an [`Agent`] (text in, text chunks out) through the task
    /// engine, after start-up recovery (see
    /// [finishing the builder](A2aServerBuilder#finishing-the-builder)).
    pub async fn agent<A: Agent>(
        self,
        agent: A,
    ) -> Result<A2aHttpService<HL, AL::Service>, BoxError>
    where
        AL: Layer<ExtendedCardService<TaskService<ExecutorService<AgentExecutor<A>>>>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        self.executor_service(AgentExecutor::service(agent)).await
    }

    /// Serves an [`Executor`] through the task engine, after start-up
    /// recovery.
    pub async fn executor<E: Executor>(
        self,
        executor: E,
    ) -> Result<A2aHttpService<HL, AL::Service>, BoxError>
    where
        AL: Layer<ExtendedCardService<TaskService<ExecutorService<E>>>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        self.executor_service(ExecutorService::new(executor)).await
    }

    /// Serves an executor reached as a `Service<Execution>` (so host layers
    /// such as timeouts can sit between the engine and the executor) through
    /// the task engine, after start-up recovery.
    pub async fn executor_service<X>(
        mut self,
        executor: X,
    ) -> Result<A2aHttpService<HL, AL::Service>, BoxError>
    where
        X: tower_service::Service<Execution, Response = ()> + Clone + Send + 'static,
        X::Error: Into<BoxError>,
        X::Future: Send + 'static,
        AL: Layer<ExtendedCardService<TaskService<X>>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        let tasks = self.task_layer()?;
        let caps = engine_capabilities(self.delivers_push());
        let recovery = self.recovery;
        let app = self.assemble(tasks.clone().layer(executor), caps)?;
        if recovery {
            tasks.recover().await?;
        }
        Ok(app)
    }

    /// Serves a managed [`Program`](crate::managed::Program) (see
    /// [`managed`](crate::managed)) over the configured task log, host id
    /// and authority, after resuming the runs this host id left when its
    /// process died (unless [`recovery(false)`](Self::recovery)). The card
    /// gets the `urn:scope:a2a:external-wait` extension if it does not
    /// declare it.
    #[cfg(feature = "managed")]
    #[cfg_attr(docsrs, doc(cfg(feature = "managed")))]
    pub async fn program(
        mut self,
        program: crate::managed::Program,
    ) -> Result<A2aHttpService<HL, AL::Service>, BoxError>
    where
        AL: Layer<ExtendedCardService<crate::managed::ManagedService>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        use crate::managed::{EXTERNAL_WAIT_EXTENSION, ManagedService};
        self.declare(
            EXTERNAL_WAIT_EXTENSION,
            "Questions of a managed run: answer with scope.wait metadata",
        );
        let log = self.core_log()?;
        let mut managed = ManagedService::builder(self.card.clone(), log, program);
        if let Some(a) = self.authority.take() {
            managed = managed.authority(a);
        }
        if let Some(id) = self.host_id.take() {
            managed = managed.host_id(id);
        }
        let managed = managed.build()?;
        let caps = engine_capabilities(self.delivers_push());
        let recovery = self.recovery;
        let app = self.assemble(managed.clone(), caps)?;
        if recovery {
            managed.recover().await?;
        }
        Ok(app)
    }

    /// Serves a [`Team`](crate::queue::Team) of agents behind the
    /// per-context delivery queue (see [`queue`](crate::queue)) over the
    /// configured task log, host id and authority, after start-up recovery
    /// (unless [`recovery(false)`](Self::recovery)). The card gets the
    /// [`QUEUE_EXTENSION`](crate::queue::QUEUE_EXTENSION) if it does not
    /// declare it.
    pub async fn team(
        mut self,
        team: crate::queue::Team,
    ) -> Result<A2aHttpService<HL, AL::Service>, BoxError>
    where
        AL: Layer<ExtendedCardService<crate::queue::TeamService>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        self.declare(
            crate::queue::QUEUE_EXTENSION,
            "Per-context delivery queue: queue.target, queue.priority, queue.mode; GetContextQueue and ReorderContextQueue",
        );
        let tasks = self.task_layer()?;
        for method in crate::queue::extension_methods() {
            self.extension_methods.push(method);
        }
        let service = team.service(tasks);
        let caps = engine_capabilities(self.delivers_push());
        let recovery = self.recovery;
        let app = self.assemble(service.clone(), caps)?;
        if recovery {
            service.recover().await?;
        }
        Ok(app)
    }

    /// Whether push notifications are delivered (see `push_notifications`).
    fn delivers_push(&self) -> bool {
        #[cfg(feature = "push")]
        return self.push.is_some();
        #[cfg(not(feature = "push"))]
        false
    }

    /// The log the core writes to: the configured one (default: a
    /// `MemoryTaskLog`), through a push outbox when push notifications are
    /// delivered (its sweep runs while the core lives).
    fn core_log(&mut self) -> Result<TaskStore, ConfigError> {
        let log = self
            .log
            .take()
            .unwrap_or_else(|| TaskStore::from(MemoryTaskLog::new()));
        #[cfg(feature = "push")]
        if let Some(sender) = self.push.clone() {
            use crate::push::outbox::Outbox;
            if tokio::runtime::Handle::try_current().is_err() {
                return Err(ConfigError::new(
                    "push notifications need a Tokio runtime: build the server inside one",
                ));
            }
            let host = self.host_id.clone();
            let host = host.unwrap_or_else(|| crate::engine::DEFAULT_HOST_ID.to_owned());
            let outbox = Outbox::builder(log, sender).host_id(host).build()?;
            outbox.start_while_used();
            return Ok(outbox.store());
        }
        Ok(log)
    }

    /// The task engine over the configured log (see `core_log`),
    /// authority, inactivity timeout and host id.
    fn task_layer(&mut self) -> Result<TaskLayer, ConfigError> {
        let log = self.core_log()?;
        let mut tasks = TaskLayer::new(self.card.clone(), log)?;
        if let Some(a) = self.authority.take() {
            tasks = tasks.authority(a);
        }
        if let Some(t) = self.inactivity_timeout {
            tasks = tasks.inactivity_timeout(t)?;
        }
        if let Some(id) = self.host_id.take() {
            tasks = tasks.host_id(id)?;
        }
        Ok(tasks)
    }

    /// Adds the extension `uri` to the card unless it declares it.
    fn declare(&mut self, uri: &str, description: &str) {
        let extensions = &mut self.card.capabilities.extensions;
        if !extensions.iter().any(|e| e.uri == uri) {
            extensions.push(crate::types::AgentExtension {
                uri: uri.into(),
                description: description.into(),
                ..Default::default()
            });
        }
    }

    fn assemble<S>(
        self,
        core: S,
        caps: StackCapabilities,
    ) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
    where
        AL: Layer<ExtendedCardService<S>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        let card = &self.card;
        let caps =
            caps.extended_agent_card(caps.extended_agent_card || self.extended_card.is_some());
        // The gRPC binding is served beside the others when the card has a
        // GRPC interface and the feature is on.
        let caps = caps.grpc(cfg!(feature = "grpc"));
        let mut card_layer = AgentCardLayer::with_capabilities(card, caps)?.cors(self.card_cors);
        if let Some(age) = self.card_max_age {
            card_layer = card_layer.max_age(age);
        }
        #[cfg(feature = "signing")]
        if let Some(key) = &self.card_key {
            card_layer = card_layer.signed(key)?;
        }
        let mut bindings = BindingsLayer::new(card)?;
        #[cfg(feature = "grpc")]
        {
            bindings = bindings.max_message_bytes(self.max_body_bytes);
        }
        if let Some(k) = self.keep_alive {
            bindings = bindings.keep_alive(k);
        }
        for method in self.extension_methods {
            bindings = bindings.extension_method(method)?;
        }
        let core = self
            .a2a_layers
            .layer(ExtendedCardService::optional(core, self.extended_card));
        let edge = BodyLimitLayer::new(card)?
            .max_bytes(self.max_body_bytes)?
            .layer(
                VersionLayer::new(card)?
                    .lenient(self.lenient_version)
                    .layer(ExtensionsLayer::new(card)?.layer(bindings.layer(core))),
            );
        Ok(card_layer.layer(self.http_layers.layer(edge)))
    }
}

/// What a stack over the task engine delivers: streams, push notifications
/// when they are delivered (`push`; the engine stores the configs). The
/// extended card is the builder's, see [`A2aServerBuilder::extended_card`].
fn engine_capabilities(push: bool) -> StackCapabilities {
    StackCapabilities::new()
        .streaming(true)
        .push_notifications(push)
}

#[cfg(test)]
mod tests {
    use crate::engine::{AgentInput, RESTARTED_MESSAGE, agent_fn};
    use crate::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
    use crate::server::A2aServer;
    use crate::types::{AgentCard, AgentInterface, AgentSkill, Message, TaskState};

    fn card() -> AgentCard {
        AgentCard::new("Echo", "Echoes text", "1.0.0")
            .with_interface(AgentInterface::jsonrpc("http://localhost/"))
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
    }

    /// A log holding a task this host was running when its process died.
    async fn left_running() -> MemoryTaskLog {
        let log = MemoryTaskLog::new();
        let records = vec![
            Record::created("t-1", "c"),
            Record::MessageAdmitted {
                message: Message::user("m", "hi"),
            },
            Record::ExecutionStarted {
                host: "web-1".into(),
            },
        ];
        log.append(AppendRequest::create("public", "t-1", records))
            .await
            .unwrap();
        log
    }

    fn echo() -> impl crate::engine::Agent {
        agent_fn(|input: AgentInput| async move { Ok(input.text) })
    }

    #[tokio::test]
    async fn the_engine_finishers_recover_before_returning() {
        let log = left_running().await;
        let builder = A2aServer::builder(card()).task_log(log.clone());
        let app = builder.host_id("web-1").agent(echo()).await.unwrap();
        let task = log.snapshot("public", "t-1").await.unwrap();
        assert_eq!(task.state(), TaskState::Failed);
        let message = task.task.status.message.as_ref().unwrap().text();
        assert_eq!(message, RESTARTED_MESSAGE);
        drop(app);
    }

    #[tokio::test]
    async fn recovery_false_leaves_the_log_alone() {
        let log = left_running().await;
        let builder = A2aServer::builder(card()).task_log(log.clone());
        let builder = builder.host_id("web-1").recovery(false);
        let app = builder.agent(echo()).await.unwrap();
        let task = log.snapshot("public", "t-1").await.unwrap();
        assert_eq!(task.state(), TaskState::Submitted);
        drop(app);
    }

    #[tokio::test]
    async fn a_bad_configuration_fails_before_recovery() {
        let log = left_running().await;
        let nowhere = AgentCard::new("None", "No interface", "1.0.0")
            .with_skill(AgentSkill::new("x", "x", "x"));
        let builder = A2aServer::builder(nowhere).task_log(log.clone());
        assert!(builder.host_id("web-1").agent(echo()).await.is_err());
        let task = log.snapshot("public", "t-1").await.unwrap();
        assert_eq!(task.state(), TaskState::Submitted, "not recovered");
    }
}
