//! [`Endpoint`]: one remote A2A agent to expose as a tool, and the host's
//! declarations about it.
//!
//! The connection settings are the client's ([`ClientBuilder`]): the card
//! URL, the HTTP service (used as given, never reconfigured), the card
//! timeout and size limit, the RPC origins allowed besides the card's, and
//! optionally one insisted transport. [`ToolSet::open`](super::ToolSet::open)
//! checks them with the client's own checks: an invalid URL, a zero timeout
//! or size, a malformed origin is a [`Configuration`](super::ToolErrorKind::Configuration)
//! error before any card is fetched.
//!
//! The host adds: a tool name (else derived from the card's name, see
//! [`tool_name`](super::tool_name)); a continuation identity (its stable
//! principal and execution revision, so a saved input request can be resumed
//! by an equivalent tool set built later); a concurrency policy (a
//! deterministic function of the invocation; exclusive on the tool name by
//! default); and the replay [`Effect`] (unsafe by default: a message id or a
//! task id alone proves no deduplication).
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::client::Transport;
//! use a2a_tower::tool::{Concurrency, Effect, Endpoint};
//!
//! let endpoint = Endpoint::new("https://fx.example/.well-known/agent-card.json")
//!     .name("currency")
//!     .continuation_identity("billing-host/rev-12")
//!     .card_timeout(Duration::from_secs(5))
//!     .allow_origins(["https://rpc.fx.example"])
//!     .transport(Transport::JsonRpc)
//!     // Conversions of different currencies may run side by side.
//!     .concurrency(|call| {
//!         let pair = call.arguments["message"].as_str().unwrap_or("").get(..3).unwrap_or("");
//!         Concurrency::concurrent(format!("currency/{pair}"))
//!     })
//!     .effect(Effect::ReadOnly);
//! # let _ = endpoint;
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::contract::{Concurrency, Effect, Invocation};
use crate::client::{A2aClient, ClientBuilder, HttpClient, Transport};

/// The host's scheduling declaration for a tool's calls: deterministic, free
/// of side effects, safe to call concurrently.
pub type ConcurrencyPolicy = Arc<dyn Fn(&Invocation) -> Concurrency + Send + Sync>;

/// One remote A2A agent to expose as a tool; see the module docs.
pub struct Endpoint<S = HttpClient> {
    pub(crate) client: ClientBuilder<S>,
    pub(crate) card_url: String,
    pub(crate) name: Option<String>,
    pub(crate) identity: Option<String>,
    pub(crate) concurrency: Option<ConcurrencyPolicy>,
    pub(crate) effect: Effect,
}

impl<S> fmt::Debug for Endpoint<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("card_url", &self.card_url)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("concurrency", &self.concurrency.as_ref().map(|_| "custom"))
            .field("effect", &self.effect)
            .finish_non_exhaustive()
    }
}

impl Endpoint<HttpClient> {
    /// The agent whose card is at `card_url` (an absolute `http`/`https`
    /// URL), over the default [`HttpClient`].
    pub fn new(card_url: impl Into<String>) -> Self {
        let card_url = card_url.into();
        Self {
            client: A2aClient::builder(card_url.clone()),
            card_url,
            name: None,
            identity: None,
            concurrency: None,
            effect: Effect::Unsafe,
        }
    }
}

impl<S> Endpoint<S> {
    /// The model-visible tool name, instead of the one derived from the
    /// card's name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The host's stable, non-secret identity for this endpoint's principal
    /// and execution revision. Input requests made under it can be resumed by
    /// any tool set opened with the same identity and binding; without it,
    /// only by the tool set that made them. Must not be empty.
    pub fn continuation_identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Uses `http` for the card and every call (with the host's auth, retry
    /// or timeout layers); it is used as given, never reconfigured.
    pub fn http<S2>(self, http: S2) -> Endpoint<S2> {
        Endpoint {
            client: self.client.http(http),
            card_url: self.card_url,
            name: self.name,
            identity: self.identity,
            concurrency: self.concurrency,
            effect: self.effect,
        }
    }

    /// Bounds the card fetch (default 30 s; never bounds the calls).
    pub fn card_timeout(mut self, timeout: Duration) -> Self {
        self.client = self.client.card_timeout(timeout);
        self
    }

    /// Bounds the card's body (default 1 MiB).
    pub fn max_card_bytes(mut self, max: usize) -> Self {
        self.client = self.client.max_card_bytes(max);
        self
    }

    /// Origins, exactly `scheme://host[:port]`, besides the card's, on which
    /// the agent's RPC interface is accepted.
    pub fn allow_origins<I, T>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.client = self.client.allow_origins(origins);
        self
    }

    /// Insists on one binding instead of the card's first supported one.
    pub fn transport(mut self, transport: Transport) -> Self {
        self.client = self.client.transport(transport);
        self
    }

    /// The host's concurrency policy for this tool's calls (exclusive on the
    /// tool name by default). It must be deterministic and free of side
    /// effects: schedulers may call it more than once, and on replay.
    pub fn concurrency<F>(mut self, policy: F) -> Self
    where
        F: Fn(&Invocation) -> Concurrency + Send + Sync + 'static,
    {
        self.concurrency = Some(Arc::new(policy));
        self
    }

    /// What replaying a call does, as the host knows it ([`Effect::Unsafe`]
    /// by default).
    pub fn effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_settings() {
        let e = Endpoint::new("http://a.example/card");
        assert_eq!(e.effect, Effect::Unsafe);
        assert!(e.concurrency.is_none() && e.name.is_none() && e.identity.is_none());
        let e = e
            .name("n")
            .continuation_identity("id")
            .effect(Effect::Idempotent)
            .concurrency(|call| Concurrency::concurrent(call.id.clone()))
            .http(());
        assert_eq!(e.name.as_deref(), Some("n"));
        assert_eq!(e.identity.as_deref(), Some("id"));
        assert_eq!(e.effect, Effect::Idempotent);
        let policy = e.concurrency.as_ref().unwrap();
        assert_eq!(
            policy(&Invocation::new("c-1", json!({}))),
            Concurrency::concurrent("c-1")
        );
        let debug = format!("{e:?}");
        assert!(
            debug.contains("http://a.example/card") && debug.contains("custom"),
            "{debug}"
        );
    }
}
