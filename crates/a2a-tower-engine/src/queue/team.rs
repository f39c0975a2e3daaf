//! [`Team`]: the named agents one endpoint hosts, and the dispatcher that
//! hands each execution to the agent its task was admitted for.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::ServiceExt as _;
use tower::util::BoxCloneSyncService;
use tower_service::Service;

use super::AGENT_KEY;
use crate::engine::{Agent, AgentExecutor, Execution, Executor, ExecutorService};
use crate::{BoxError, ConfigError};

type Member = BoxCloneSyncService<Execution, (), BoxError>;

/// Several named agents behind one endpoint and one card, with a default
/// agent (the fallback of an input that names none in an idle context).
/// Each is an [`Agent`] or an [`Executor`] (or any `Service<Execution>`).
///
/// ```
/// use a2a_tower::engine::{Agent, AgentInput};
/// use a2a_tower::queue::Team;
/// use futures_core::Stream;
///
/// struct Upper;
/// impl Agent for Upper {
///     fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, a2a_tower::BoxError>> + Send {
///         futures_util::stream::iter([Ok(input.text.to_uppercase())])
///     }
/// }
///
/// let team = Team::builder().agent("upper", Upper).default_agent("upper").build()?;
/// assert_eq!(team.names().collect::<Vec<_>>(), ["upper"]);
/// assert!(Team::builder().build().is_err(), "a team needs an agent");
/// # Ok::<(), a2a_tower::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct Team {
    members: Arc<BTreeMap<String, Member>>,
    default: Arc<str>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("agents", &self.members.keys().collect::<Vec<_>>())
            .field("default", &self.default)
            .finish()
    }
}

/// Builds a [`Team`].
#[derive(Default)]
#[must_use]
pub struct TeamBuilder {
    members: Vec<(String, Member)>,
    default: Option<String>,
}

impl std::fmt::Debug for TeamBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamBuilder")
            .field(
                "agents",
                &self.members.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Team {
    /// A builder with no agents.
    pub fn builder() -> TeamBuilder {
        TeamBuilder::default()
    }

    /// The agents' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(String::as_str)
    }

    /// The default agent.
    pub fn default_agent(&self) -> &str {
        &self.default
    }

    /// The team hosts an agent of this name.
    pub fn has(&self, name: &str) -> bool {
        self.members.contains_key(name)
    }
}

impl TeamBuilder {
    /// Adds a text [`Agent`] named `name`.
    pub fn agent<A: Agent>(self, name: impl Into<String>, agent: A) -> Self {
        self.executor_service(name, AgentExecutor::service(agent))
    }

    /// Adds an [`Executor`] named `name`.
    pub fn executor<E: Executor>(self, name: impl Into<String>, executor: E) -> Self {
        self.executor_service(name, ExecutorService::new(executor))
    }

    /// Adds an executor reached as a `Service<Execution>` named `name`.
    pub fn executor_service<X>(mut self, name: impl Into<String>, executor: X) -> Self
    where
        X: Service<Execution, Response = ()> + Clone + Send + Sync + 'static,
        X::Error: Into<BoxError>,
        X::Future: Send + 'static,
    {
        let svc = executor.map_err(Into::into);
        self.members
            .push((name.into(), BoxCloneSyncService::new(svc)));
        self
    }

    /// The default agent (default: the first added).
    pub fn default_agent(mut self, name: impl Into<String>) -> Self {
        self.default = Some(name.into());
        self
    }

    /// The team; names must be non-empty, unique, without `@` or
    /// whitespace, and the default must be one of them.
    pub fn build(self) -> Result<Team, ConfigError> {
        let mut members = BTreeMap::new();
        let first = self.members.first().map(|(n, _)| n.clone());
        for (name, member) in self.members {
            if name.is_empty() || name.chars().any(|c| c == '@' || c.is_whitespace()) {
                return Err(ConfigError::new(
                    "agent names must be non-empty, without '@' or whitespace",
                ));
            }
            if members.insert(name, member).is_some() {
                return Err(ConfigError::new("two agents of a team share a name"));
            }
        }
        let default = self
            .default
            .or(first)
            .ok_or_else(|| ConfigError::new("a team needs at least one agent"))?;
        if !members.contains_key(&default) {
            return Err(ConfigError::new("the default agent is not in the team"));
        }
        Ok(Team {
            members: Arc::new(members),
            default: Arc::from(default),
        })
    }
}

/// The team as the engine's inner service: each execution goes to the
/// agent its task was admitted for (the task's `queue.agent` metadata).
#[derive(Clone, Debug)]
pub(crate) struct Dispatch {
    pub(crate) team: Team,
}

impl Service<Execution> for Dispatch {
    type Response = ();
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;

    /// Ready: each member is made ready for its own call.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, execution: Execution) -> Self::Future {
        let agent = execution
            .task
            .metadata
            .as_ref()
            .and_then(|m| m.get(AGENT_KEY))
            .and_then(|v| v.as_str())
            .and_then(|name| self.team.members.get(name))
            .cloned();
        Box::pin(async move {
            match agent {
                Some(member) => member.oneshot(execution).await,
                // Admission checked the agent; a task that names none (or
                // one this host does not have) cannot run here.
                None => Err("no agent of this team for the task".into()),
            }
        })
    }
}
