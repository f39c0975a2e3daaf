//! [`A2aServer`]: one-call assembly of the whole A2A surface.

#[cfg(feature = "signing")]
use std::sync::Arc;
use std::time::Duration;

use tower_layer::{Identity, Layer, Stack};

use crate::card::{AgentCardService, ExtendedCard, StackCapabilities};
use crate::engine::{Authority, TaskLayer};
use crate::extensions::ExtensionsService;
use crate::limit::{BodyLimitService, DEFAULT_MAX_BODY_BYTES};
use crate::log::TaskStore;
use crate::types::AgentCard;
use crate::version::VersionService;
use crate::{BoxError, ExtensionMethod};
use a2a_tower_http::binding::BindingsService;

/// The HTTP stack below the card endpoint and the host's HTTP layers.
pub type Edge<S> = BodyLimitService<VersionService<ExtensionsService<BindingsService<S>>>>;

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
            recovery: true,
            #[cfg(feature = "push")]
            push: None,
            #[cfg(feature = "signing")]
            card_key: None,
        }
    }
}

/// Assembles the card endpoint, body limit, version and extension checks,
/// both bindings at the paths the card advertises, host layers at the HTTP
/// and the `A2aRequest` level, and the core: the task engine over a task log
/// running an [`Agent`](crate::engine::Agent) or [`Executor`](crate::engine::Executor), or a
/// raw [`A2aService`](crate::A2aService).
///
/// ```text
/// AgentCardLayer            GET /.well-known/agent-card.json (public)
///  └ http_layer(..)         host HTTP layers, in the order added (first = outermost),
///                           `authenticate(..)` among them
///    └ BodyLimitLayer → VersionLayer → ExtensionsLayer
///      └ JsonRpcService / RestService  the card's JSONRPC and HTTP+JSON interfaces
///        (and GrpcBindingService for a GRPC interface, by content type; `grpc` feature)
///        └ a2a_layer(..)    host A2aRequest layers (authority, quotas, audit)
///          └ ExtendedCardService  GetExtendedAgentCard, when `extended_card` is set
///            └ TaskService  the task engine over the task log (or a raw core)
///              └ your Agent / Executor
/// ```
///
/// The card endpoint stays outside the host's HTTP layers, so a client can
/// discover the agent (and its security schemes) before authenticating.
/// Layers that must also cover the card wrap the built service.
///
/// # Finishing the builder
///
/// Every core over a task log is served the same way: an `async` finisher
/// that checks the configuration, assembles the stack, runs start-up
/// recovery over the log and returns the service, ready for the host's
/// server (or [`serve`](crate::server::serve)):
///
/// | finisher | core | recovery |
/// |---|---|---|
/// | [`agent(a).await`](Self::agent) | an [`Agent`](crate::engine::Agent) on the task engine | tasks this host id left running: FAILED |
/// | [`executor(e).await`](Self::executor), [`executor_service(x).await`](Self::executor_service) | an [`Executor`](crate::engine::Executor) on the task engine | the same |
/// | `program(p).await` | a managed `Program` (feature `managed`) | its runs resumed from their journals |
/// | [`team(t).await`](Self::team) | a [`Team`](crate::queue::Team) behind the delivery queue | runs FAILED as above, queues drained |
/// | [`core(svc)`](Self::core) | your own `Service<A2aRequest>` | none (no log): not `async` |
///
/// [`recovery(false)`](Self::recovery) skips the recovery for hosts that
/// run it themselves.
#[must_use]
pub struct A2aServerBuilder<AL = Identity, HL = Identity> {
    pub(super) card: AgentCard,
    pub(super) a2a_layers: AL,
    pub(super) http_layers: HL,
    pub(super) log: Option<TaskStore>,
    pub(super) authority: Option<Authority>,
    pub(super) host_id: Option<String>,
    pub(super) inactivity_timeout: Option<Duration>,
    pub(super) max_body_bytes: usize,
    pub(super) lenient_version: bool,
    pub(super) keep_alive: Option<Duration>,
    pub(super) card_cors: bool,
    pub(super) card_max_age: Option<Duration>,
    pub(super) capabilities: Option<StackCapabilities>,
    pub(super) extension_methods: Vec<ExtensionMethod>,
    pub(super) extended_card: Option<ExtendedCard>,
    /// Whether the finishers run start-up recovery (see `recovery`).
    pub(super) recovery: bool,
    /// Push notifications are delivered through this sender (and an outbox
    /// over the task log): the engine and managed cores, which store configs,
    /// may then serve a card declaring `pushNotifications`.
    #[cfg(feature = "push")]
    pub(super) push: Option<crate::push::PushSender>,
    /// The key the served card is signed with, once, when built.
    #[cfg(feature = "signing")]
    pub(super) card_key: Option<Arc<crate::signing::SigningKey>>,
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

    /// Adds an authentication layer (see [`auth`](crate::auth)) as an HTTP
    /// layer, like [`http_layer`](Self::http_layer), and declares the
    /// scheme it enforces in the card the stack serves (and checks against):
    /// the scheme under the layer's name, added to every security
    /// requirement (or a requirement of its own when the card has none), so
    /// the card never offers a way in that the layer refuses. Its refusals
    /// are shaped for the card's bindings.
    #[cfg(any(feature = "auth-jwt", feature = "auth-api-key"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "auth-jwt", feature = "auth-api-key"))))]
    pub fn authenticate<L>(mut self, mut layer: L) -> A2aServerBuilder<AL, Stack<L, HL>>
    where
        L: crate::auth::SecuredLayer,
    {
        layer.secure(&mut self.card);
        self.http_layer(layer)
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
            recovery: self.recovery,
            #[cfg(feature = "push")]
            push: self.push,
            #[cfg(feature = "signing")]
            card_key: self.card_key,
        }
    }

    /// The task log of the engine (default: a [`MemoryTaskLog`](crate::log::MemoryTaskLog) with its
    /// default bounds).
    pub fn task_log(mut self, log: impl Into<TaskStore>) -> Self {
        self.log = Some(log.into());
        self
    }

    /// The engine's host id (see [`TaskLayer::host_id`]): hosts sharing a
    /// task log need distinct, stable ids. An empty id fails the build.
    pub fn host_id(mut self, id: impl Into<String>) -> Self {
        self.host_id = Some(id.into());
        self
    }

    /// Whether finishing the builder runs start-up recovery first (default
    /// `true`; see [the finishers](A2aServerBuilder#finishing-the-builder)).
    /// Turn it off for a host that recovers the log itself, or one that must
    /// not yet: recovery fences every execution its host id still has
    /// running in the log, so a new process taking over from one that is
    /// still draining (the same host id) would cut that one off.
    pub fn recovery(mut self, enabled: bool) -> Self {
        self.recovery = enabled;
        self
    }

    /// The task engine's start-up recovery over the configured task log
    /// (see [`TaskLayer::recover`]), what `agent`, `executor` and
    /// `executor_service` run when they finish: closes as FAILED the tasks
    /// this host id was running when its process died. For a host that
    /// wants the count (or recovers at a time of its own) before building
    /// with [`recovery(false)`](Self::recovery). Not for a managed program
    /// or a team: their finishers resume runs and drain queues instead.
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

    /// Serves the card signed by `key` (a2a-spec.md §8.4): signed once when
    /// the stack is built, so its bytes and `ETag` are stable
    /// ([`AgentCardLayer::signed`](crate::AgentCardLayer::signed)).
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn sign_card(mut self, key: crate::signing::SigningKey) -> Self {
        self.card_key = Some(Arc::new(key));
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
}
