//! [`ClientBuilder`]: the configuration of a client, checked at
//! construction; and [`Connector`], which resolves the card and connects
//! [`A2aClient`]s from it under the origin policy.
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::client::{A2aClient, Transport};
//! let ok = A2aClient::builder("http://localhost:8080/.well-known/agent-card.json")
//!     .card_timeout(Duration::from_secs(5))
//!     .allow_origins(["http://rpc.localhost:9000"])
//!     .transport(Transport::HttpJson)
//!     .build();
//! assert!(ok.is_ok());
//! let bad = A2aClient::builder("not a url").build();
//! assert!(bad.is_err());
//! let bad = A2aClient::builder("http://h/card").allow_origins(["http://h/x"]).build();
//! assert!(bad.is_err());
//! ```

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Uri};
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::card::CardResolver;
use super::http::HttpService;
use super::origin::{self, Origin};
use super::request::Target;
use super::response::Limits;
use super::resume::{DEFAULT_RESUME_ATTEMPTS, DEFAULT_RESUME_BACKOFF, Resume};
use super::service::A2aClient;
use super::sse::DEFAULT_MAX_EVENT_BYTES;
use super::transport::Transport;
use crate::types::AgentCard;
use crate::{A2aError, ConfigError, ErrorKind, ProtocolVersion};

/// The default HTTP service: hyper-util's pooled client, HTTP/1.1 over plain
/// TCP or TLS (rustls on `ring`, trusting the webpki roots).
pub type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The default [`HttpClient`].
fn default_http() -> HttpClient {
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
        // Only fails for a provider without TLS 1.2 and 1.3; `ring` has both.
        .expect("ring supports the safe default TLS versions")
        .https_or_http()
        .enable_http1()
        .build();
    Client::builder(TokioExecutor::new()).build(tls)
}

/// The default card timeout (30 s).
pub const DEFAULT_CARD_TIMEOUT: Duration = Duration::from_secs(30);
/// The default card size limit (1 MiB).
pub const DEFAULT_MAX_CARD_BYTES: usize = 1024 * 1024;
/// The default bound on a complete (non-streamed) answer (16 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The host's credential source, shared.
#[derive(Clone)]
struct Source(std::sync::Arc<dyn super::CredentialSource>);

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialSource")
    }
}

/// The configuration of a client; [`build`](Self::build) checks it.
#[derive(Debug, Clone)]
pub struct ClientBuilder<S> {
    http: S,
    card_url: String,
    card_timeout: Duration,
    max_card_bytes: usize,
    max_event_bytes: usize,
    max_response_bytes: usize,
    allowed: Vec<String>,
    transport: Option<Transport>,
    version: Option<ProtocolVersion>,
    authorization: Option<HeaderValue>,
    credentials: Option<Source>,
    oauth2: Option<super::ClientSecret>,
    resume: Resume,
    #[cfg(feature = "signing")]
    trust: super::CardTrust,
}

impl A2aClient<HttpClient> {
    /// A builder for the agent whose card is at `card_url`, over the
    /// default [`HttpClient`] (replace it with [`ClientBuilder::http`]).
    pub fn builder(card_url: impl Into<String>) -> ClientBuilder<HttpClient> {
        ClientBuilder {
            http: default_http(),
            card_url: card_url.into(),
            card_timeout: DEFAULT_CARD_TIMEOUT,
            max_card_bytes: DEFAULT_MAX_CARD_BYTES,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            allowed: Vec::new(),
            transport: None,
            version: None,
            authorization: None,
            credentials: None,
            oauth2: None,
            resume: Resume {
                attempts: DEFAULT_RESUME_ATTEMPTS,
                backoff: DEFAULT_RESUME_BACKOFF,
            },
            #[cfg(feature = "signing")]
            trust: super::CardTrust::ignore(),
        }
    }
}

impl<S> ClientBuilder<S> {
    /// Uses `http` (any `Service<http::Request<Full<Bytes>>>`, with the
    /// host's auth, retry or timeout layers) for the card and every call.
    /// The service is used as given, never reconfigured.
    pub fn http<S2>(self, http: S2) -> ClientBuilder<S2> {
        ClientBuilder {
            http,
            card_url: self.card_url,
            card_timeout: self.card_timeout,
            max_card_bytes: self.max_card_bytes,
            max_event_bytes: self.max_event_bytes,
            max_response_bytes: self.max_response_bytes,
            allowed: self.allowed,
            transport: self.transport,
            version: self.version,
            authorization: self.authorization,
            credentials: self.credentials,
            oauth2: self.oauth2,
            resume: self.resume,
            #[cfg(feature = "signing")]
            trust: self.trust,
        }
    }

    /// Bounds the whole card fetch (default 30 s; never bounds RPC calls).
    pub fn card_timeout(mut self, timeout: Duration) -> Self {
        self.card_timeout = timeout;
        self
    }

    /// Bounds the card body (default 1 MiB).
    pub fn max_card_bytes(mut self, max: usize) -> Self {
        self.max_card_bytes = max;
        self
    }

    /// Bounds each SSE event (default 4 MiB).
    pub fn max_event_bytes(mut self, max: usize) -> Self {
        self.max_event_bytes = max;
        self
    }

    /// Bounds each complete answer (default 16 MiB).
    pub fn max_response_bytes(mut self, max: usize) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// Origins, exactly `scheme://host[:port]`, besides the card's, on which
    /// RPC interfaces are accepted.
    pub fn allow_origins<I, T>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.allowed.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Insists on one binding instead of the card's first supported one.
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Speak only this protocol version: an interface of the card at
    /// `1.0` or `0.3` (default: the first 1.0 interface, else the first 0.3
    /// one). Over 0.3 the client sends the 0.3 wire (no `A2A-Version`, the
    /// 0.3 method names, routes and objects, `X-A2A-Extensions`) and reads
    /// 0.3 answers as 1.0 ones; ListTasks, which 0.3 lacks, and extension
    /// methods over HTTP+JSON are UnsupportedOperation.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// An `Authorization` value sent to the card's origin only: on the card
    /// fetch and on calls to an interface on that origin, never elsewhere.
    pub fn authorization(mut self, value: HeaderValue) -> Self {
        self.authorization = Some(value);
        self
    }

    /// What the host presents for the card's security requirements (see
    /// [`credentials`](super::credentials)): when the client connects, the
    /// first requirement of the card whose every scheme `source` satisfies
    /// is placed on each call, as the card's schemes say, to the card's
    /// origin and the allowed RPC origins only; never on the card fetch,
    /// never for a card that failed the trust policy.
    pub fn credentials(mut self, source: impl super::CredentialSource) -> Self {
        self.credentials = Some(Source(std::sync::Arc::new(source)));
        self
    }

    /// An OAuth 2.0 client for the card's `clientCredentials` flows (see
    /// [`credentials`](super::credentials)): a requirement naming such a
    /// scheme is satisfied by a token fetched from the flow's `tokenUrl`
    /// with this id and secret (the secret goes nowhere else), cached until
    /// it expires, fetched again once when the agent answers 401. An OpenID
    /// Connect scheme too: its token endpoint is the `token_endpoint` of
    /// the discovery document at its `openIdConnectUrl`, on that origin.
    pub fn oauth2_client(mut self, client: super::ClientSecret) -> Self {
        self.oauth2 = Some(client);
        self
    }

    /// How a dropped stream is resumed: up
    /// to `attempts` resubscriptions per drop with `Last-Event-ID`, the first
    /// after `backoff`, each later one after twice the wait before (default
    /// 5 from 250 ms; 0 attempts turns resumption off).
    pub fn stream_resume(mut self, attempts: u32, backoff: Duration) -> Self {
        self.resume = Resume { attempts, backoff };
        self
    }

    /// What the card's signatures must be before any call (default
    /// [`CardTrust::ignore`](super::CardTrust::ignore)): a card that fails
    /// is refused when fetched, and nothing is sent on its behalf.
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn card_trust(mut self, trust: super::CardTrust) -> Self {
        self.trust = trust;
        self
    }

    /// Checks the configuration: an absolute `http`/`https` card URL, non-zero
    /// timeout and sizes, a well-formed allow-list.
    pub fn build(self) -> Result<Connector<S>, ConfigError> {
        let url: Uri = self
            .card_url
            .parse()
            .map_err(|_| ConfigError::new("the card URL is not a URL"))?;
        let origin = Origin::of(&url)
            .ok_or_else(|| ConfigError::new("the card URL is not an absolute http(s) URL"))?;
        if self.card_timeout.is_zero() {
            return Err(ConfigError::new("the card timeout must not be zero"));
        }
        for (name, n) in [
            ("card size limit", self.max_card_bytes),
            ("event size limit", self.max_event_bytes),
            ("response size limit", self.max_response_bytes),
        ] {
            if n == 0 {
                return Err(ConfigError::new(format!("the {name} must not be zero")));
            }
        }
        let allowed = origin::parse_all(&self.allowed)?;
        let auth = self.authorization;
        #[allow(unused_mut)]
        let mut resolver = CardResolver::new(
            self.http,
            url,
            origin,
            self.card_timeout,
            self.max_card_bytes,
            auth,
        );
        #[cfg(feature = "signing")]
        {
            resolver.trust = std::sync::Arc::new(self.trust);
        }
        Ok(Connector {
            resolver,
            allowed,
            transport: self.transport,
            version: self.version,
            limits: Limits {
                max_response_bytes: self.max_response_bytes,
                max_event_bytes: self.max_event_bytes,
            },
            resume: self.resume,
            credentials: self.credentials,
            oauth2: self.oauth2,
        })
    }
}

/// A checked configuration: resolves the card (cached) and connects clients.
#[derive(Debug, Clone)]
pub struct Connector<S> {
    resolver: CardResolver<S>,
    allowed: Vec<Origin>,
    transport: Option<Transport>,
    version: Option<ProtocolVersion>,
    limits: Limits,
    resume: Resume,
    credentials: Option<Source>,
    oauth2: Option<super::ClientSecret>,
}

impl<S: HttpService> Connector<S> {
    /// The card resolver (its cache is shared with this connector).
    pub fn resolver(&self) -> &CardResolver<S> {
        &self.resolver
    }

    /// The agent card, within the card limits (see [`CardResolver`]).
    pub async fn resolve(&self) -> Result<AgentCard, A2aError> {
        self.resolver.resolve().await
    }

    /// Resolves the card and connects a client to its first supported
    /// interface (or the insisted binding). The interface must be on the
    /// card's origin or an allowed one (PermissionDenied otherwise, before
    /// any call); no supported interface is UnsupportedOperation.
    pub async fn connect(&self) -> Result<A2aClient<S>, A2aError> {
        let card = self.resolve().await?;
        let (transport, iface, version) =
            Transport::select_version(&card, self.transport, self.version).ok_or_else(|| {
                A2aError::new(ErrorKind::UnsupportedOperation)
                    .with_message("the agent card has no supported A2A 1.0 or 0.3 interface")
            })?;
        #[cfg(feature = "grpc")]
        let grpc_url = (transport == Transport::Grpc).then(|| super::grpc::channel_url(&iface.url));
        #[cfg(not(feature = "grpc"))]
        let grpc_url: Option<String> = None;
        let url: Uri = grpc_url
            .as_deref()
            .unwrap_or(&iface.url)
            .parse()
            .map_err(|_| super::response::invalid("the agent's interface URL is not a URL"))?;
        let iface_origin = Origin::of(&url).ok_or_else(|| {
            super::response::invalid("the agent's interface URL is not an absolute http(s) URL")
        })?;
        let home = &self.resolver.origin;
        if &iface_origin != home && !self.allowed.contains(&iface_origin) {
            return Err(A2aError::new(ErrorKind::PermissionDenied)
                .with_message("the agent's interface is on an origin that is not allowed"));
        }
        let target = Target {
            transport,
            url: iface.url.clone(),
            base: iface.url.trim_end_matches('/').to_owned(),
            tenant: iface.tenant.clone(),
            v03: version == ProtocolVersion::V0_3,
            authorization: self
                .resolver
                .authorization
                .clone()
                .filter(|_| &iface_origin == home),
            credentials: (self.credentials.is_some() || self.oauth2.is_some()).then(|| {
                let none = super::Credentials::new();
                let source = self
                    .credentials
                    .as_ref()
                    .map_or(&none as &dyn super::CredentialSource, |s| &*s.0);
                let plan =
                    super::CredentialPlan::for_card_with(&card, source, self.oauth2.as_ref());
                let origins = std::iter::once(home.clone()).chain(self.allowed.iter().cloned());
                super::CredentialsLayer::new(plan, origins)
            }),
        };
        #[cfg(feature = "grpc")]
        let channel = match transport {
            Transport::Grpc => Some(super::grpc::channel(&iface.url)?),
            _ => None,
        };
        let client = A2aClient::new(
            self.resolver.http.clone(),
            target,
            self.limits,
            card,
            self.resume,
        );
        #[cfg(feature = "grpc")]
        if let Some(channel) = channel {
            return Ok(client.with_grpc(channel));
        }
        Ok(client)
    }
}
