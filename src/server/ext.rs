//! [`A2aServiceBuilderExt`]: the A2A layers as `tower::ServiceBuilder` methods,
//! for hosts that compose the stack by hand.

use tower::ServiceBuilder;
use tower_layer::Stack;

use crate::types::AgentCard;
use crate::{AgentCardLayer, BodyLimitLayer, ConfigError, ExtensionsLayer, VersionLayer};
#[cfg(all(feature = "jsonrpc", feature = "rest"))]
use a2a_tower_http::binding::BindingsLayer;

mod sealed {
    pub trait Sealed {}
    impl<L> Sealed for tower::ServiceBuilder<L> {}
}

/// The A2A layers as [`ServiceBuilder`] methods. Each builds its layer from
/// the card and fails with a [`ConfigError`] exactly as the layer's `new` does.
///
/// ```
/// use a2a_tower::server::A2aServiceBuilderExt;
/// use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
/// use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind};
/// use tower::{ServiceBuilder, ServiceExt};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let card = AgentCard::new("Hand-built", "Composed by hand", "1.0.0")
///     .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
///     .with_skill(AgentSkill::new("none", "Nothing", "Answers nothing"));
/// let core = tower::service_fn(|_: A2aRequest| async {
///     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
/// });
/// let svc = ServiceBuilder::new()
///     .a2a_edge(&card)?      // card, body limit, version, extensions
///     .a2a_bindings(&card)?  // JSON-RPC and/or HTTP+JSON, as the card says
///     .service(core);
/// let res = svc
///     .oneshot(http::Request::get("/.well-known/agent-card.json").body(String::new())?)
///     .await?;
/// assert_eq!(res.status(), 200);
/// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
/// # }).unwrap();
/// ```
pub trait A2aServiceBuilderExt<L>: sealed::Sealed + Sized {
    /// Adds [`AgentCardLayer`].
    fn a2a_card(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<AgentCardLayer, L>>, ConfigError>;

    /// Adds [`BodyLimitLayer`] with the default limit.
    fn a2a_body_limit(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<BodyLimitLayer, L>>, ConfigError>;

    /// Adds [`VersionLayer`].
    fn a2a_version(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<VersionLayer, L>>, ConfigError>;

    /// Adds [`ExtensionsLayer`].
    fn a2a_extensions(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<ExtensionsLayer, L>>, ConfigError>;

    /// Adds the card, body limit, version and extensions layers, in that order.
    #[allow(clippy::type_complexity)]
    fn a2a_edge(
        self,
        card: &AgentCard,
    ) -> Result<
        ServiceBuilder<
            Stack<
                ExtensionsLayer,
                Stack<VersionLayer, Stack<BodyLimitLayer, Stack<AgentCardLayer, L>>>,
            >,
        >,
        ConfigError,
    > {
        self.a2a_card(card)?
            .a2a_body_limit(card)?
            .a2a_version(card)?
            .a2a_extensions(card)
    }

    /// Adds the bindings the card advertises ([`BindingsLayer`]).
    #[cfg(all(feature = "jsonrpc", feature = "rest"))]
    #[cfg_attr(docsrs, doc(cfg(all(feature = "jsonrpc", feature = "rest"))))]
    fn a2a_bindings(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<BindingsLayer, L>>, ConfigError>;
}

impl<L> A2aServiceBuilderExt<L> for ServiceBuilder<L> {
    fn a2a_card(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<AgentCardLayer, L>>, ConfigError> {
        Ok(self.layer(AgentCardLayer::new(card)?))
    }

    fn a2a_body_limit(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<BodyLimitLayer, L>>, ConfigError> {
        Ok(self.layer(BodyLimitLayer::new(card)?))
    }

    fn a2a_version(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<VersionLayer, L>>, ConfigError> {
        Ok(self.layer(VersionLayer::new(card)?))
    }

    fn a2a_extensions(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<ExtensionsLayer, L>>, ConfigError> {
        Ok(self.layer(ExtensionsLayer::new(card)?))
    }

    #[cfg(all(feature = "jsonrpc", feature = "rest"))]
    fn a2a_bindings(
        self,
        card: &AgentCard,
    ) -> Result<ServiceBuilder<Stack<BindingsLayer, L>>, ConfigError> {
        Ok(self.layer(BindingsLayer::new(card)?))
    }
}
