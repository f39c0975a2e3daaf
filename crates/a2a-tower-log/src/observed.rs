//! [`Observed`]: a task log that tells a closure of every commit, the
//! commit feed for what follows the log from beside it (the push outbox,
//! counters, a test's probe).

use std::fmt;
use std::sync::Arc;

use super::{
    AppendRequest, Appended, ListPage, ListQuery, LogFuture, Sequenced, Snapshot, TaskLog, Watch,
};

/// The records of `inner`, with `on_commit(authority, appended)` called
/// after each append that commits (once per request of an
/// [`append_all`](TaskLog::append_all), in request order), before the
/// writer hears of it. Refused appends and reads are not reported.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use a2a_tower::log::{AppendRequest, MemoryTaskLog, Observed, Record, TaskLog};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let probe = seen.clone();
/// let log = Observed::new(Arc::new(MemoryTaskLog::new()), move |authority: &str, a: &a2a_tower::log::Appended| {
///     probe.lock().unwrap().push((authority.to_owned(), a.seq));
/// });
/// log.append(AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]))
///     .await
///     .unwrap();
/// assert_eq!(*seen.lock().unwrap(), [("public".to_owned(), 1)]);
/// # });
/// ```
pub struct Observed<F> {
    inner: Arc<dyn TaskLog>,
    on_commit: F,
}

impl<F> fmt::Debug for Observed<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observed").finish_non_exhaustive()
    }
}

impl<F> Observed<F>
where
    F: Fn(&str, &Appended) + Send + Sync + 'static,
{
    /// `inner`'s records, observed by `on_commit`.
    pub fn new(inner: Arc<dyn TaskLog>, on_commit: F) -> Self {
        Self { inner, on_commit }
    }
}

impl<F> TaskLog for Observed<F>
where
    F: Fn(&str, &Appended) + Send + Sync + 'static,
{
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let authority = request.authority.clone();
        let append = self.inner.append(request);
        Box::pin(async move {
            let appended = append.await?;
            (self.on_commit)(&authority, &appended);
            Ok(appended)
        })
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        let authorities: Vec<String> = requests.iter().map(|r| r.authority.clone()).collect();
        let append = self.inner.append_all(requests);
        Box::pin(async move {
            let appended = append.await?;
            for (authority, a) in authorities.iter().zip(&appended) {
                (self.on_commit)(authority, a);
            }
            Ok(appended)
        })
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
