//! [`Gated`]: a log's records with a check before every append, for the
//! tests that inject refusals or watch what is appended (reads go to the log
//! unchanged). Put in with `TaskStore::from(log).map_records(...)`.

use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, Appended, ListPage, ListQuery, LogError, LogFuture, Sequenced, Snapshot,
    TaskLog, Watch,
};

/// The check: `Err` refuses the append (or the whole `append_all`) with that
/// error, before the log sees it.
pub(crate) type Check = dyn Fn(&[AppendRequest]) -> Result<(), LogError> + Send + Sync;

pub(crate) struct Gated {
    inner: Arc<dyn TaskLog>,
    check: Box<Check>,
}

impl Gated {
    pub(crate) fn new(
        inner: Arc<dyn TaskLog>,
        check: impl Fn(&[AppendRequest]) -> Result<(), LogError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner,
            check: Box::new(check),
        }
    }
}

impl TaskLog for Gated {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        match (self.check)(std::slice::from_ref(&request)) {
            Ok(()) => self.inner.append(request),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        match (self.check)(&requests) {
            Ok(()) => self.inner.append_all(requests),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        self.inner.snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        self.inner.read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        self.inner.watch(authority, task_id, after)
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        self.inner.list(authority, query)
    }

    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        self.inner.cached_head(authority, task_id)
    }
}
