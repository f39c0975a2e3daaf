//! [`RemoteAgentError`]: a remote task was reached and did not complete, as
//! distinct from transport and protocol errors.
//!
//! A task that FAILED, was CANCELED or REJECTED is the cause of a definite
//! [`Failure`](super::Failure); one that is still SUBMITTED or WORKING, or
//! needs authorization (AUTH_REQUIRED), is the source of an
//! [`Incomplete`](super::ToolErrorKind::Incomplete) error, because the task
//! may still advance. The caller gets the remote status text complete; the
//! tool's trace spans carry only the classification.
//!
//! ```
//! use a2a_tower::tool::RemoteAgentError;
//! use a2a_tower::types::TaskState;
//! let e = RemoteAgentError::new("t-1", "c-1", TaskState::Failed, Some("out of stock".into()));
//! assert_eq!(e.to_string(), "the remote task t-1 is TASK_STATE_FAILED: out of stock");
//! assert_eq!(e.status_text(), Some("out of stock"));
//! ```

use std::fmt;

use crate::types::TaskState;

/// A reached remote task that did not complete; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAgentError {
    task_id: String,
    context_id: String,
    state: TaskState,
    status_text: Option<String>,
}

impl RemoteAgentError {
    /// The task `task_id` of `context_id` is in `state`, its status message
    /// reading `status_text`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        state: TaskState,
        status_text: Option<String>,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            state,
            status_text,
        }
    }

    /// The remote task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The remote task's context id.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// The state the task was in.
    pub fn state(&self) -> TaskState {
        self.state
    }

    /// The text of the task's status message, if it had one.
    pub fn status_text(&self) -> Option<&str> {
        self.status_text.as_deref()
    }

    /// The task failed, was canceled or rejected: nothing more will happen.
    pub fn is_definite(&self) -> bool {
        matches!(
            self.state,
            TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }
}

impl fmt::Display for RemoteAgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the remote task {} is {}", self.task_id, self.state)?;
        if self.state == TaskState::AuthRequired {
            f.write_str(" (the host must handle the authorization)")?;
        } else if !self.state.is_terminal() {
            f.write_str(" (it may still advance)")?;
        }
        match self.status_text.as_deref() {
            Some(t) if !t.is_empty() => write!(f, ": {t}"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for RemoteAgentError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_task_state_and_remote_text() {
        let e = RemoteAgentError::new("t", "c", TaskState::AuthRequired, None);
        assert_eq!(
            e.to_string(),
            "the remote task t is TASK_STATE_AUTH_REQUIRED (the host must handle the authorization)"
        );
        assert!(!e.is_definite());
        let e = RemoteAgentError::new("t", "c", TaskState::Working, Some("busy".into()));
        assert_eq!(
            e.to_string(),
            "the remote task t is TASK_STATE_WORKING (it may still advance): busy"
        );
        let e = RemoteAgentError::new("t", "c", TaskState::Rejected, Some(String::new()));
        assert_eq!(e.to_string(), "the remote task t is TASK_STATE_REJECTED");
        assert!(e.is_definite());
        assert_eq!((e.task_id(), e.context_id()), ("t", "c"));
        assert_eq!(e.state(), TaskState::Rejected);
    }
}
