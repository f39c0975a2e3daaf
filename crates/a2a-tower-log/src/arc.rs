//! `Arc<L>` is a [`TaskLog`], [`LiveTaskScan`] or [`DeliveryLog`] when `L`
//! is: a shared log is passed on as is.

use std::sync::Arc;

use super::{
    Advance, AppendRequest, Appended, DeliveryCursor, DeliveryLog, ListPage, ListQuery, LiveTask,
    LiveTaskScan, LogFuture, PendingDelivery, Sequenced, Snapshot, TaskLog, Watch,
};

impl<L: TaskLog + ?Sized> TaskLog for Arc<L> {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        (**self).append(request)
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        (**self).append_all(requests)
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        (**self).snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        (**self).read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        (**self).watch(authority, task_id, after)
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        (**self).list(authority, query)
    }

    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        (**self).cached_head(authority, task_id)
    }
}

impl<L: LiveTaskScan + ?Sized> LiveTaskScan for Arc<L> {
    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        (**self).live_tasks(after, limit)
    }
}

impl<L: DeliveryLog + ?Sized> DeliveryLog for Arc<L> {
    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>> {
        (**self).delivery_cursors(authority, task_id)
    }

    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>> {
        (**self).pending_deliveries(after, limit)
    }

    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> LogFuture<'a, bool> {
        (**self).claim_deliveries(authority, task_id, holder, ttl)
    }

    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()> {
        (**self).release_deliveries(authority, task_id, holder)
    }

    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool> {
        (**self).advance_delivery(advance)
    }
}
