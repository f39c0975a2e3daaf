//! [`A2aResponse`]: what the core answers, and [`EventStream`] for streaming operations.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::A2aError;
use crate::types::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageResponse,
    StreamResponse, Task, TaskPushNotificationConfig,
};

/// The answer of the core to one [`A2aRequest`](crate::A2aRequest).
#[non_exhaustive]
pub enum A2aResponse {
    /// SendMessage: a task or a direct message.
    SendMessage(SendMessageResponse),
    /// GetTask, CancelTask: the task.
    Task(Task),
    /// ListTasks: a page of tasks.
    Tasks(ListTasksResponse),
    /// Create/GetTaskPushNotificationConfig: the config.
    PushConfig(TaskPushNotificationConfig),
    /// ListTaskPushNotificationConfigs: a page of configs.
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    /// DeleteTaskPushNotificationConfig: nothing.
    Empty,
    /// GetExtendedAgentCard: the card.
    AgentCard(Box<AgentCard>),
    /// SendStreamingMessage, SubscribeToTask: the events.
    Stream(EventStream),
    /// An extension method: its JSON result (the JSON-RPC `result`, the
    /// HTTP+JSON response body).
    Extension(serde_json::Value),
}

impl fmt::Debug for A2aResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SendMessage(r) => f.debug_tuple("SendMessage").field(r).finish(),
            Self::Task(t) => f.debug_tuple("Task").field(t).finish(),
            Self::Tasks(t) => f.debug_tuple("Tasks").field(t).finish(),
            Self::PushConfig(c) => f.debug_tuple("PushConfig").field(c).finish(),
            Self::PushConfigs(c) => f.debug_tuple("PushConfigs").field(c).finish(),
            Self::Empty => f.write_str("Empty"),
            Self::AgentCard(c) => f.debug_tuple("AgentCard").field(c).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
            Self::Extension(v) => f.debug_tuple("Extension").field(v).finish(),
        }
    }
}

/// A stream of events; an `Err` item ends it (nothing is read after it).
///
/// ```
/// use a2a_tower::EventStream;
/// use a2a_tower::types::{Message, StreamResponse};
/// let s = EventStream::from_iter(vec![Ok(StreamResponse::Message(Message::agent("m", "hi")))]);
/// # let _ = s;
/// ```
pub struct EventStream(Pin<Box<dyn Stream<Item = Result<StreamResponse, A2aError>> + Send>>);

impl EventStream {
    /// Wraps any stream of events.
    pub fn new<S>(stream: S) -> Self
    where
        S: Stream<Item = Result<StreamResponse, A2aError>> + Send + 'static,
    {
        Self(Box::pin(stream))
    }

    /// A stream of the given items.
    #[allow(clippy::should_implement_trait)]
    pub fn from_iter<I>(items: I) -> Self
    where
        I: IntoIterator<Item = Result<StreamResponse, A2aError>>,
        I::IntoIter: Send + 'static,
    {
        Self::new(futures_util::stream::iter(items))
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventStream(..)")
    }
}

impl Stream for EventStream {
    type Item = Result<StreamResponse, A2aError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.as_mut().poll_next(cx)
    }
}
