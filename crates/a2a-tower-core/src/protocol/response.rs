//! [`A2aResponse`]: what the core answers, and [`EventStream`] for streaming operations.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::types::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageResponse,
    StreamResponse, Task, TaskPushNotificationConfig,
};
use crate::{A2aError, LastEventId};

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

/// An event of a stream with its resume cursor, if the core gave one.
pub type IdentifiedEvent = (StreamResponse, Option<LastEventId>);

type Inner = Pin<Box<dyn Stream<Item = Result<IdentifiedEvent, A2aError>> + Send>>;

/// A stream of events; an `Err` item ends it (nothing is read after it).
///
/// As a [`Stream`] it yields the events; a core whose events can be resumed
/// gives each its [`LastEventId`] ([`with_ids`](Self::with_ids)), which the
/// JSON bindings send as the SSE `id:` field and
/// [`poll_next_with_id`](Self::poll_next_with_id) reads.
///
/// ```
/// use a2a_tower::{EventStream, LastEventId};
/// use a2a_tower::types::{Message, StreamResponse};
/// let s = EventStream::from_iter(vec![Ok(StreamResponse::Message(Message::agent("m", "hi")))]);
/// # let _ = s;
/// let event = StreamResponse::Message(Message::agent("m", "hi"));
/// let mut s = EventStream::with_ids(futures_util::stream::iter(vec![Ok((event, LastEventId::from_seq(3)))]));
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (_, id) = s.next_with_id().await.unwrap().unwrap();
/// assert_eq!(id, Some(LastEventId::from_seq(3)));
/// # });
/// ```
pub struct EventStream(Inner);

impl EventStream {
    /// Wraps any stream of events (without ids).
    pub fn new<S>(stream: S) -> Self
    where
        S: Stream<Item = Result<StreamResponse, A2aError>> + Send + 'static,
    {
        use futures_util::StreamExt as _;
        Self(Box::pin(stream.map(|r| r.map(|e| (e, None)))))
    }

    /// Wraps a stream of events, each with its resume cursor.
    pub fn with_ids<S>(stream: S) -> Self
    where
        S: Stream<Item = Result<(StreamResponse, LastEventId), A2aError>> + Send + 'static,
    {
        use futures_util::StreamExt as _;
        Self(Box::pin(stream.map(|r| r.map(|(e, id)| (e, Some(id))))))
    }

    /// Wraps a stream of events, each with its resume cursor if it has one.
    pub fn from_identified<S>(stream: S) -> Self
    where
        S: Stream<Item = Result<IdentifiedEvent, A2aError>> + Send + 'static,
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

    /// The next event with its id (`None` when the core gave none).
    pub fn poll_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<IdentifiedEvent, A2aError>>> {
        self.0.as_mut().poll_next(cx)
    }

    /// The next event with its id (`None` when the core gave none).
    pub async fn next_with_id(&mut self) -> Option<Result<IdentifiedEvent, A2aError>> {
        std::future::poll_fn(|cx| self.poll_next_with_id(cx)).await
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
        self.0
            .as_mut()
            .poll_next(cx)
            .map(|item| item.map(|r| r.map(|(event, _)| event)))
    }
}
