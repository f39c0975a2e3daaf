//! [`Authority`]: which slice of the task log a call may see.

use std::fmt;
use std::sync::Arc;

use crate::{A2aError, CallContext, ErrorKind};

type AuthorityFn = dyn Fn(&CallContext) -> Result<String, A2aError> + Send + Sync;

/// Derives the authority of a call from its context (the seed's
/// `Authority(ctx, tenant)`): every task-log access is scoped by it, and a task
/// of another authority looks exactly like a task that does not exist.
///
/// The function sees the whole [`CallContext`]: the tenant, headers, and the
/// request extensions where a host auth layer put the authenticated principal.
/// Return a stable, server-authorized scope; never return the untrusted tenant
/// verbatim. An `Err` answers the call with that error (for example
/// [`ErrorKind::Unauthenticated`]).
///
/// The default of [`TaskLayer`](super::TaskLayer) is [`Authority::public`]:
/// every caller shares one authority named `"public"`, which suits an
/// unauthenticated example and nothing else.
///
/// ```
/// use a2a_tower::CallContext;
/// use a2a_tower::engine::Authority;
///
/// #[derive(Clone)]
/// struct User(String);
///
/// let auth = Authority::principal(|u: &User, tenant: &str| format!("{}/{tenant}", u.0));
/// let mut ctx = CallContext::default();
/// assert!(auth.resolve(&ctx).is_err(), "no principal: unauthenticated");
/// ctx.extensions.insert(User("alice".into()));
/// ctx.tenant = "acme".into();
/// assert_eq!(auth.resolve(&ctx).unwrap(), "alice/acme");
/// assert_eq!(Authority::public().resolve(&ctx).unwrap(), "public");
/// ```
#[derive(Clone)]
pub struct Authority(Arc<AuthorityFn>);

impl Authority {
    /// Every caller shares the authority `"public"`: the documented default for
    /// unauthenticated examples. A host with authentication replaces it.
    pub fn public() -> Self {
        Self::shared("public")
    }

    /// Every caller shares the given authority.
    pub fn shared(name: impl Into<String>) -> Self {
        let name = name.into();
        Self::from_fn(move |_| Ok(name.clone()))
    }

    /// Any function of the call context.
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn(&CallContext) -> Result<String, A2aError> + Send + Sync + 'static,
    {
        Self(Arc::new(f))
    }

    /// The authority of the principal `P` that a host layer inserted into the
    /// request extensions, given the tenant. Calls without a `P` are answered
    /// with [`ErrorKind::Unauthenticated`].
    pub fn principal<P, F>(f: F) -> Self
    where
        P: Send + Sync + 'static,
        F: Fn(&P, &str) -> String + Send + Sync + 'static,
    {
        Self::from_fn(move |ctx| {
            ctx.extensions
                .get::<P>()
                .map(|p| f(p, &ctx.tenant))
                .ok_or_else(|| A2aError::new(ErrorKind::Unauthenticated))
        })
    }

    /// The authority of a call.
    pub fn resolve(&self, ctx: &CallContext) -> Result<String, A2aError> {
        (self.0)(ctx)
    }
}

impl Default for Authority {
    fn default() -> Self {
        Self::public()
    }
}

impl fmt::Debug for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Authority(..)")
    }
}
