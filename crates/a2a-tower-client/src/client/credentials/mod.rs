//! Client credentials driven by the card: the host says what it has
//! ([`CredentialSource`], or the static [`Credentials`]); the card's
//! `securitySchemes` and `securityRequirements` say what is sent and where
//! ([`CredentialPlan`]: the first requirement whose every scheme the host
//! satisfies); [`CredentialsLayer`] places it on requests to the card's
//! origin and the allowed RPC origins only.
//!
//! OAuth 2.0 client credentials ([`ClientSecret`], through
//! [`ClientBuilder::oauth2_client`](super::ClientBuilder::oauth2_client)):
//! a scheme whose flow is `clientCredentials` is satisfied by a token from
//! the flow's `tokenUrl` (the only place the secret goes), cached until its
//! `expires_in` ends and fetched again, once per call, when the agent
//! answers 401 to it. An OpenID Connect scheme is satisfied the same way,
//! its token endpoint found through discovery at its `openIdConnectUrl`
//! (and only on that URL's origin). Over the JSON bindings only.
//!
//! [`ClientBuilder::credentials`](super::ClientBuilder::credentials) does
//! all three when the client connects, after the card has been fetched and
//! has passed the trust policy: a card that fails it is refused before any
//! credential is computed or sent. A host that wants another order or other
//! parts builds the plan and the layer itself, around any HTTP service.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use a2a_tower::client::{CredentialPlan, Credentials, CredentialsLayer, Origin};
//! use a2a_tower::types::{AgentCard, HttpAuthSecurityScheme, ScopeList, SecurityRequirement, SecurityScheme};
//! use tower::{Layer, ServiceExt, service_fn};
//!
//! let mut card = AgentCard::new("A", "B", "1.0.0");
//! card.security_schemes.insert("bearer".into(), SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
//!     scheme: "Bearer".into(), ..Default::default()
//! }));
//! let mut need = SecurityRequirement::default();
//! need.schemes.insert("bearer".into(), ScopeList::default());
//! card.security_requirements.push(need);
//!
//! let plan = CredentialPlan::for_card(&card, &Credentials::new().bearer("t0k"));
//! let layer = CredentialsLayer::new(plan, ["http://agent.example".parse::<Origin>().unwrap()]);
//! let echo = service_fn(|req: http::Request<()>| async move {
//!     Ok::<_, std::convert::Infallible>(req.headers().get("authorization").cloned())
//! });
//! let to = |uri: &str| http::Request::get(uri).body(()).unwrap();
//! let home = layer.layer(echo).oneshot(to("http://agent.example/rpc")).await.unwrap();
//! assert_eq!(home.unwrap(), "Bearer t0k");
//! let away = layer.layer(echo).oneshot(to("http://elsewhere.example/rpc")).await.unwrap();
//! assert_eq!(away, None);
//! # }
//! ```

mod layer;
mod oauth2;
mod plan;
mod source;

pub use layer::{CredentialsLayer, CredentialsService};
pub use oauth2::{ClientSecret, EXPIRY_MARGIN};
pub use plan::CredentialPlan;
pub use source::{Credential, CredentialSource, Credentials};
