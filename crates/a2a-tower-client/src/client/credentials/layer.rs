//! [`CredentialsLayer`] and [`CredentialsService`]: a [`CredentialPlan`]
//! placed on every request to the origins it may reach, nothing on others.

use std::sync::Arc;
use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::plan::CredentialPlan;
use crate::client::origin::Origin;

/// Wraps an HTTP service in a [`CredentialsService`]: requests to one of
/// `origins` (the card's and the allowed RPC origins) get the plan's
/// credentials; requests anywhere else get none.
#[derive(Debug, Clone)]
pub struct CredentialsLayer {
    plan: CredentialPlan,
    origins: Arc<[Origin]>,
}

impl CredentialsLayer {
    /// `plan`'s credentials, sent to `origins` only.
    pub fn new(plan: CredentialPlan, origins: impl IntoIterator<Item = Origin>) -> Self {
        Self {
            plan,
            origins: origins.into_iter().collect(),
        }
    }

    /// The plan.
    pub fn plan(&self) -> &CredentialPlan {
        &self.plan
    }

    /// Whether requests to `origin` get the credentials.
    pub fn reaches(&self, origin: &Origin) -> bool {
        self.origins.contains(origin)
    }

    /// Places the plan's OAuth 2.0 token (fetched or cached through `http`)
    /// on `req` when its origin is one of the layer's; the token placed,
    /// if any. `stale` is a token the agent refused: a new one is fetched.
    pub(crate) async fn authorize<S: crate::client::HttpService, B>(
        &self,
        http: S,
        req: &mut Request<B>,
        stale: Option<&http::HeaderValue>,
    ) -> Result<Option<http::HeaderValue>, crate::A2aError> {
        let Some(tokens) = self.plan.tokens() else {
            return Ok(None);
        };
        if !Origin::of(req.uri()).is_some_and(|o| self.reaches(&o)) {
            return Ok(None);
        }
        let value = tokens.authorization(http, stale).await?;
        req.headers_mut()
            .insert(http::header::AUTHORIZATION, value.clone());
        Ok(Some(value))
    }

    /// Places the credentials on `req` when its URI's origin is one of the
    /// layer's.
    pub fn apply<B>(&self, req: &mut Request<B>) {
        if Origin::of(req.uri()).is_some_and(|o| self.reaches(&o)) {
            self.plan.apply(req);
        }
    }
}

impl<S> tower_layer::Layer<S> for CredentialsLayer {
    type Service = CredentialsService<S>;

    fn layer(&self, inner: S) -> CredentialsService<S> {
        CredentialsService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`CredentialsLayer`].
#[derive(Debug, Clone)]
pub struct CredentialsService<S> {
    inner: S,
    layer: CredentialsLayer,
}

impl<S, B> Service<Request<B>> for CredentialsService<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> S::Future {
        self.layer.apply(&mut req);
        self.inner.call(req)
    }
}
