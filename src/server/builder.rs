//! [`A2aServer`]: one-call assembly of the whole A2A surface.

use std::sync::Arc;
use std::time::Duration;

use tower_layer::{Identity, Layer, Stack};

use crate::binding::router::{BindingsLayer, BindingsService};
use crate::card::{AgentCardService, ExtendedCard, ExtendedCardService, StackCapabilities};
use crate::engine::{
    Agent, AgentExecutor, Authority, Execution, Executor, ExecutorService, TaskLayer, TaskService,
};
use crate::extensions::A2aExtensionsService;
use crate::limit::{A2aBodyLimitService, DEFAULT_MAX_BODY_BYTES};
use crate::log::{MemoryTaskLog, TaskLog};
use crate::types::AgentCard;
use crate::version::A2aVersionService;
use crate::{
    A2aBodyLimitLayer, A2aExtensionsLayer, A2aService, A2aVersionLayer, AgentCardLayer, BoxError,
    ConfigError, ExtensionMethod,
};

/// The HTTP stack below the card endpoint and the host's HTTP layers.
pub type Edge<S> = A2aBodyLimitService<A2aVersionService<A2aExtensionsService<BindingsService<S>>>>;

/// The assembled service: the card endpoint around the host's HTTP layers
/// (`HL`) around the A2A edge over the core.
pub type A2aHttpService<HL, S> = AgentCardService<<HL as Layer<Edge<S>>>::Service>;

/// Entry point of the one-call assembly; see [`A2aServer::builder`].
#[derive(Debug, Clone, Copy)]
pub struct A2aServer;

impl A2aServer {
    /// A builder for the agent described by `card`.
    pub fn builder(card: AgentCard) -> A2aServerBuilder {
        A2aServerBuilder {
            card,
            a2a_layers: Identity::new(),
            http_layers: Identity::new(),
            log: None,
            authority: None,
            host_id: None,
            inactivity_timeout: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            lenient_version: false,
            keep_alive: None,
            card_cors: false,
            card_max_age: None,
            capabilities: None,
            extension_methods: Vec::new(),
            extended_card: None,
            #[cfg(feature = "push")]
            push: None,
        }
    }
}

/// Assembles the card endpoint, body limit, version and extension checks,
/// both bindings at the paths the card advertises, host layers at the HTTP
/// and the `A2aRequest` level, and the core: the task engine over a task log
/// running an [`Agent`] or [`Executor`], or a raw [`A2aService`].
///
/// ```text
/// AgentCardLayer            GET /.well-known/agent-card.json (public)
///  └ http_layer(..)         host HTTP layers, in the order added (first = outermost)
///    └ A2aBodyLimitLayer → A2aVersionLayer → A2aExtensionsLayer
///      └ JsonRpcService / RestService  the card's JSONRPC and HTTP+JSON interfaces
///        (and GrpcService for a GRPC interface, by content type; `grpc` feature)
///        └ a2a_layer(..)    host A2aRequest layers (authority, quotas, audit)
///          └ ExtendedCardService  GetExtendedAgentCard, when `extended_card` is set
///            └ TaskService  the task engine over the task log (or a raw core)
///              └ your Agent / Executor
/// ```
///
/// The card endpoint stays outside the host's HTTP layers, so a client can
/// discover the agent (and its security schemes) before authenticating.
/// Layers that must also cover the card wrap the built service.
#[must_use]
pub struct A2aServerBuilder<AL = Identity, HL = Identity> {
    card: AgentCard,
    a2a_layers: AL,
    http_layers: HL,
    log: Option<Arc<dyn TaskLog>>,
    authority: Option<Authority>,
    host_id: Option<String>,
    inactivity_timeout: Option<Duration>,
    max_body_bytes: usize,
    lenient_version: bool,
    keep_alive: Option<Duration>,
    card_cors: bool,
    card_max_age: Option<Duration>,
    capabilities: Option<StackCapabilities>,
    extension_methods: Vec<ExtensionMethod>,
    extended_card: Option<ExtendedCard>,
    /// Push notifications are delivered through this sender (and an outbox
    /// over the task log): the engine and managed cores, which store configs,
    /// may then serve a card declaring `pushNotifications`.
    #[cfg(feature = "push")]
    push: Option<crate::push::PushSender>,
}

impl<AL, HL> std::fmt::Debug for A2aServerBuilder<AL, HL> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServerBuilder")
            .field("agent", &self.card.name)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}

impl<AL, HL> A2aServerBuilder<AL, HL> {
    /// Adds a host layer at the `A2aRequest` level, between the bindings and
    /// the core (authority derivation, quotas, audit). Layers added first are
    /// outermost.
    pub fn a2a_layer<L>(self, layer: L) -> A2aServerBuilder<Stack<L, AL>, HL> {
        self.map_layers(|a2a, http| (Stack::new(layer, a2a), http))
    }

    /// Adds a host layer at the HTTP level, inside the card endpoint and
    /// outside the body limit (authentication, timeouts, rate limits). Layers
    /// added first are outermost.
    pub fn http_layer<L>(self, layer: L) -> A2aServerBuilder<AL, Stack<L, HL>> {
        self.map_layers(|a2a, http| (a2a, Stack::new(layer, http)))
    }

    fn map_layers<AL2, HL2>(
        self,
        f: impl FnOnce(AL, HL) -> (AL2, HL2),
    ) -> A2aServerBuilder<AL2, HL2> {
        let (a2a_layers, http_layers) = f(self.a2a_layers, self.http_layers);
        A2aServerBuilder {
            card: self.card,
            a2a_layers,
            http_layers,
            log: self.log,
            authority: self.authority,
            host_id: self.host_id,
            inactivity_timeout: self.inactivity_timeout,
            max_body_bytes: self.max_body_bytes,
            lenient_version: self.lenient_version,
            keep_alive: self.keep_alive,
            card_cors: self.card_cors,
            card_max_age: self.card_max_age,
            capabilities: self.capabilities,
            extension_methods: self.extension_methods,
            extended_card: self.extended_card,
            #[cfg(feature = "push")]
            push: self.push,
        }
    }

    /// The task log of the engine (default: a [`MemoryTaskLog`] with its
    /// default bounds).
    pub fn task_log(mut self, log: impl TaskLog) -> Self {
        self.log = Some(Arc::new(log));
        self
    }

    /// The engine's host id (see [`TaskLayer::host_id`]): hosts sharing a
    /// task log need distinct, stable ids. An empty id fails the build.
    pub fn host_id(mut self, id: impl Into<String>) -> Self {
        self.host_id = Some(id.into());
        self
    }

    /// Start-up recovery over the configured task log (see
    /// [`TaskLayer::recover`]): closes as FAILED the tasks this host id was
    /// running when its process died. Await it once before serving.
    pub async fn recover(&self) -> Result<crate::engine::Recovered, BoxError> {
        let Some(log) = &self.log else {
            // A fresh in-memory log holds nothing to recover.
            return Ok(crate::engine::Recovered::default());
        };
        let mut tasks = TaskLayer::new(self.card.clone(), log.clone())?;
        if let Some(id) = &self.host_id {
            tasks = tasks.host_id(id.clone())?;
        }
        Ok(tasks.recover().await?)
    }

    /// How the engine derives the authority of a call (default
    /// [`Authority::public`], for unauthenticated examples only).
    pub fn authority(mut self, authority: Authority) -> Self {
        self.authority = Some(authority);
        self
    }

    /// Cancels an execution that emits nothing for this long.
    pub fn inactivity_timeout(mut self, timeout: Duration) -> Self {
        self.inactivity_timeout = Some(timeout);
        self
    }

    /// The request body limit (default 4 MiB); also the gRPC binding's
    /// largest request message.
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// Treat a missing `A2A-Version` as 1.0 (off by default; for curl users).
    pub fn lenient_version(mut self, lenient: bool) -> Self {
        self.lenient_version = lenient;
        self
    }

    /// SSE keep-alive interval of both bindings (default 15 s).
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = Some(interval);
        self
    }

    /// CORS on the card endpoint (off by default).
    pub fn card_cors(mut self, enabled: bool) -> Self {
        self.card_cors = enabled;
        self
    }

    /// `Cache-Control: max-age` of the card (default 300 s).
    pub fn card_max_age(mut self, max_age: Duration) -> Self {
        self.card_max_age = Some(max_age);
        self
    }

    /// What a raw core fulfils, for the card check (default: streaming only).
    /// The engine's own capabilities are used when the core is the engine.
    pub fn stack_capabilities(mut self, capabilities: StackCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Serves `GetExtendedAgentCard` on every binding with `card` (see
    /// [`ExtendedCard`]: a caller without the principal it needs gets
    /// Unauthenticated), in front of the core and inside the host's
    /// `a2a_layer`s, so an authentication layer there has run. The card may
    /// then declare `capabilities.extendedAgentCard: true`.
    pub fn extended_card(mut self, card: ExtendedCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Delivers push notifications (a2a-spec.md §9) through `sender`: the
    /// engine (or managed core) stores each task's push configs in the task
    /// log, and an [`Outbox`](crate::push::outbox::Outbox) over that log,
    /// with this builder's host id, POSTs every committed event of the task to
    /// each config, in order per config, resumed after a crash (its sweep
    /// runs while the served core lives). The card may then declare
    /// `capabilities.pushNotifications: true`. The sender's
    /// [`WebhookGuard`](crate::push::WebhookGuard) refuses non-public
    /// webhook addresses unless allowed. Building needs a Tokio runtime.
    #[cfg(feature = "push")]
    #[cfg_attr(docsrs, doc(cfg(feature = "push")))]
    pub fn push_notifications(mut self, sender: crate::push::PushSender) -> Self {
        self.push = Some(sender);
        self
    }

    /// Serves an extension's method on both bindings (see
    /// [`ExtensionMethod`]); the core receives it as
    /// [`Operation::Extension`](crate::Operation::Extension). A name or route
    /// that clashes fails the build.
    pub fn extension_method(mut self, method: ExtensionMethod) -> Self {
        self.extension_methods.push(method);
        self
    }

    /// Serves a raw core (no task engine).
    pub fn core<S>(self, core: S) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
    where
        AL: Layer<ExtendedCardService<S>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        let caps = self.capabilities.unwrap_or_default();
        self.assemble(core, caps)
    }

    /// Serves an [`Agent`] (text in, text chunks out) through the task engine.
    pub fn agent<A: Agent>(self, agent: A) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
    where
        AL: Layer<ExtendedCardService<TaskService<ExecutorService<AgentExecutor<A>>>>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        self.executor_service(AgentExecutor::service(agent))
    }

    /// Serves an [`Executor`] through the task engine.
    pub fn executor<E: Executor>(
        self,
        executor: E,
    ) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
    where
        AL: Layer<ExtendedCardService<TaskService<ExecutorService<E>>>>,
        AL::Service: A2aService,
        HL: Layer<Edge<AL::Service>>,
    {
        self.executor_service(ExecutorService::new(executor))
    }

    /// Serves an executor reached as a `Service<Execution>` (so host layers
    /// such as timeouts can sit between the engine and the executor) through
    /// the task engine.
    pub fn executor_service<X>(
        mut self,
        executor: X,
    ) -> Result<A2aHttpService<HL, AL::Service>, ConfigError>
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
        self.assemble(tasks.layer(executor), caps)
    }

    /// Serves a managed [`Program`](crate::managed::Program) (see
    /// [`managed`](crate::managed)) over the configured task log, host id
    /// and authority, after resuming the runs this host id left when its
    /// process died (hence `async`). The card gets the
    /// `urn:scope:a2a:external-wait` extension if it does not declare it.
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
        managed.recover().await?;
        let caps = engine_capabilities(self.delivers_push());
        Ok(self.assemble(managed, caps)?)
    }

    /// Serves a [`Team`](crate::queue::Team) of agents behind the
    /// per-context delivery queue (see [`queue`](crate::queue)) over the
    /// configured task log, host id and authority, after start-up recovery
    /// (hence `async`). The card gets the
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
        service.recover().await?;
        // The delivery queue keeps no push configs.
        let caps = engine_capabilities(false);
        Ok(self.assemble(service, caps)?)
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
    fn core_log(&mut self) -> Result<Arc<dyn TaskLog>, ConfigError> {
        let log = self
            .log
            .take()
            .unwrap_or_else(|| Arc::new(MemoryTaskLog::new()));
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
            return Ok(Arc::new(outbox.log()));
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
        let edge = A2aBodyLimitLayer::new(card)?
            .max_bytes(self.max_body_bytes)?
            .layer(
                A2aVersionLayer::new(card)?
                    .lenient(self.lenient_version)
                    .layer(A2aExtensionsLayer::new(card)?.layer(bindings.layer(core))),
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
