//! Automatic resumption of a dropped stream: when the connection of a
//! SendStreamingMessage or SubscribeToTask stream fails (an `Unavailable`
//! error, or the body ends before the task's final event), the client
//! resubscribes to the task with the id of the last event it received as
//! `Last-Event-ID`, and the agent sends exactly the events after it: the
//! caller's stream goes on without a gap or a duplicate. Bounded attempts
//! with doubling backoff (default 5 from 250 ms, see
//! [`ClientBuilder::stream_resume`](super::ClientBuilder::stream_resume));
//! a stream whose events carry no id (an agent without resume) is never
//! resumed, and an answer other than `Unavailable` ends it.

use std::time::Duration;

use http::HeaderMap;

use super::http::HttpService;
use super::service::A2aClient;
use crate::types::{StreamResponse, SubscribeToTaskRequest, TaskState};
use crate::{
    A2aError, A2aRequest, A2aResponse, ErrorKind, EventStream, IdentifiedEvent, LastEventId,
    Operation,
};

/// The default number of reconnection attempts per drop.
pub const DEFAULT_RESUME_ATTEMPTS: u32 = 5;
/// The default wait before the first reconnection (doubling after each).
pub const DEFAULT_RESUME_BACKOFF: Duration = Duration::from_millis(250);

/// How a client resumes a dropped stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resume {
    pub(crate) attempts: u32,
    pub(crate) backoff: Duration,
}

struct State<S> {
    client: A2aClient<S>,
    inner: EventStream,
    tenant: String,
    /// The caller's `A2A-Extensions`, sent again on each resubscription.
    headers: HeaderMap,
    task_id: Option<String>,
    last: Option<LastEventId>,
    resume: Resume,
    /// The final event was delivered, or the stream failed for good.
    finished: bool,
}

/// `events` of a stream opened by `client`, resumed on a drop.
pub(crate) fn resuming<S: HttpService>(
    client: A2aClient<S>,
    events: EventStream,
    tenant: String,
    headers: &HeaderMap,
    resume: Resume,
) -> EventStream {
    let mut kept = HeaderMap::new();
    for v in headers.get_all("a2a-extensions") {
        kept.append("a2a-extensions", v.clone());
    }
    let state = State {
        client,
        inner: events,
        tenant,
        headers: kept,
        task_id: None,
        last: None,
        resume,
        finished: false,
    };
    EventStream::from_identified(futures_util::stream::unfold(state, next))
}

/// The event ends the stream: a message, or a terminal or interrupted state.
fn is_final(event: &StreamResponse) -> bool {
    let done = |s: TaskState| s.is_terminal() || s.is_interrupted();
    match event {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => done(t.status.state),
        StreamResponse::StatusUpdate(u) => done(u.status.state),
        _ => false,
    }
}

fn task_of(event: &StreamResponse) -> Option<&str> {
    match event {
        StreamResponse::Task(t) => Some(&t.id),
        StreamResponse::StatusUpdate(u) => Some(&u.task_id),
        StreamResponse::ArtifactUpdate(u) => Some(&u.task_id),
        _ => None,
    }
}

async fn next<S: HttpService>(
    mut st: State<S>,
) -> Option<(Result<IdentifiedEvent, A2aError>, State<S>)> {
    loop {
        if st.finished {
            return None;
        }
        let dropped = match st.inner.next_with_id().await {
            Some(Ok((event, id))) => {
                if let Some(task) = task_of(&event) {
                    st.task_id.get_or_insert_with(|| task.to_owned());
                }
                if id.is_some() {
                    st.last.clone_from(&id);
                }
                st.finished = is_final(&event);
                return Some((Ok((event, id)), st));
            }
            Some(Err(e)) if e.kind() != ErrorKind::Unavailable => {
                st.finished = true;
                return Some((Err(e), st));
            }
            Some(Err(e)) => Some(e),
            None => None,
        };
        let (Some(task), Some(last)) = (st.task_id.clone(), st.last.clone()) else {
            st.finished = true;
            return dropped.map(|e| (Err(e), st));
        };
        match reconnect(&mut st, task, last).await {
            Ok(events) => st.inner = events,
            Err(e) => {
                st.finished = true;
                return Some((Err(e), st));
            }
        }
    }
}

/// Resubscribes with `Last-Event-ID: last`, retrying while the agent is
/// unreachable.
async fn reconnect<S: HttpService>(
    st: &mut State<S>,
    task: String,
    last: LastEventId,
) -> Result<EventStream, A2aError> {
    let mut wait = st.resume.backoff;
    let mut error = A2aError::new(ErrorKind::Unavailable);
    for _ in 0..st.resume.attempts {
        tokio::time::sleep(wait).await;
        wait = wait.saturating_mul(2);
        let mut req = A2aRequest::new(Operation::SubscribeToTask(SubscribeToTaskRequest {
            tenant: st.tenant.clone(),
            id: task.clone(),
        }));
        req.context.headers = st.headers.clone();
        if let Ok(v) = http::HeaderValue::from_str(last.as_str()) {
            req.context.headers.insert(LastEventId::HEADER, v);
        }
        match st.client.call_once(req).await {
            Ok(A2aResponse::Stream(events)) => return Ok(events),
            Ok(_) => return Err(A2aError::new(ErrorKind::InvalidAgentResponse)),
            Err(e) if e.kind() == ErrorKind::Unavailable => error = e,
            Err(e) => return Err(e),
        }
    }
    Err(error)
}
