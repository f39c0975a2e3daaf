//! [`OutboxLog`]: the task log as the engine sees it, which drives a task's
//! push deliveries after each of its commits.

use std::time::Duration;

use super::Outbox;
use crate::log::{
    Advance, AppendRequest, Appended, DeliveryCursor, ListPage, ListQuery, LiveTask, LogFuture,
    PendingDelivery, Sequenced, Snapshot, TaskLog, Watch,
};
use crate::types::Message;

/// The [`Outbox`]'s log (see [`Outbox::log`]): every call goes to the log
/// the outbox was built on; a commit that leaves its task with push configs
/// (from any writer: executions, cancels, recovery, the queue, the managed
/// layer) then notifies the outbox, which delivers in the background.
/// Commits by other processes are found by the outbox's sweep.
#[derive(Debug, Clone)]
pub struct OutboxLog {
    outbox: Outbox,
}

impl OutboxLog {
    pub(super) fn new(outbox: Outbox) -> Self {
        Self { outbox }
    }

    fn log(&self) -> &dyn TaskLog {
        &*self.outbox.inner.log
    }

    fn committed(&self, authority: &str, appended: &Appended) {
        if !appended.snapshot.projection.push_configs().is_empty() {
            self.outbox.notify(authority, &appended.snapshot.task.id);
        }
    }
}

impl TaskLog for OutboxLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let authority = request.authority.clone();
        let append = self.log().append(request);
        Box::pin(async move {
            let appended = append.await?;
            self.committed(&authority, &appended);
            Ok(appended)
        })
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        let authorities: Vec<String> = requests.iter().map(|r| r.authority.clone()).collect();
        let append = self.log().append_all(requests);
        Box::pin(async move {
            let appended = append.await?;
            for (authority, a) in authorities.iter().zip(&appended) {
                self.committed(authority, a);
            }
            Ok(appended)
        })
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        self.log().snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        self.log().read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        self.log().watch(authority, task_id, after)
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        self.log().list(authority, query)
    }

    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        self.log().live_tasks(after, limit)
    }

    fn fail_live<'a>(
        &'a self,
        task: &'a LiveTask,
        message: Message,
    ) -> LogFuture<'a, Option<Appended>> {
        Box::pin(async move {
            let appended = self.log().fail_live(task, message).await?;
            if let Some(a) = &appended {
                self.committed(&task.authority, a);
            }
            Ok(appended)
        })
    }

    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>> {
        self.log().delivery_cursors(authority, task_id)
    }

    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>> {
        self.log().pending_deliveries(after, limit)
    }

    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: Duration,
    ) -> LogFuture<'a, bool> {
        self.log().claim_deliveries(authority, task_id, holder, ttl)
    }

    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()> {
        self.log().release_deliveries(authority, task_id, holder)
    }

    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool> {
        self.log().advance_delivery(advance)
    }
}
