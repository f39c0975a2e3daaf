//! [`SealedPushSecrets`]: the records of a backend with push secrets sealed
//! on the way in and opened on the way out.

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt as _;

use super::PushSecretKey;
use crate::{
    AppendRequest, Appended, ListPage, ListQuery, LogError, LogFuture, Record, Sequenced, Snapshot,
    TaskLog, Watch,
};

/// The records of `inner` with the `token` and `credentials` of every push
/// config sealed by `key` when appended and opened when read (see the
/// [module docs](super)). Built by
/// [`TaskStore::seal_push_secrets`](crate::TaskStore::seal_push_secrets).
pub struct SealedPushSecrets {
    inner: Arc<dyn TaskLog>,
    key: PushSecretKey,
}

impl fmt::Debug for SealedPushSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedPushSecrets")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl SealedPushSecrets {
    /// `inner`'s records, sealed with `key`.
    pub fn new(inner: Arc<dyn TaskLog>, key: PushSecretKey) -> Self {
        Self { inner, key }
    }

    fn seal(&self, mut request: AppendRequest) -> AppendRequest {
        for record in &mut request.records {
            if let Record::PushConfigSet { config } = record {
                self.key.seal(config);
            }
        }
        request
    }

    fn open_snapshot(key: &PushSecretKey, mut snapshot: Snapshot) -> Result<Snapshot, LogError> {
        for config in snapshot.projection.push_configs_mut() {
            key.open(config)?;
        }
        Ok(snapshot)
    }

    fn open_record(key: &PushSecretKey, mut s: Sequenced) -> Result<Sequenced, LogError> {
        if let Record::PushConfigSet { config } = &*s.record {
            let mut config = config.clone();
            key.open(&mut config)?;
            s.record = Arc::new(Record::PushConfigSet { config });
        }
        Ok(s)
    }

    fn open_appended(key: &PushSecretKey, a: Appended) -> Result<Appended, LogError> {
        Ok(Appended {
            seq: a.seq,
            snapshot: Self::open_snapshot(key, a.snapshot)?,
            // Push configs are not part of the task.
            task_json: a.task_json,
        })
    }
}

impl TaskLog for SealedPushSecrets {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let append = self.inner.append(self.seal(request));
        Box::pin(async move { Self::open_appended(&self.key, append.await?) })
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        let requests = requests.into_iter().map(|r| self.seal(r)).collect();
        let append = self.inner.append_all(requests);
        Box::pin(async move {
            append
                .await?
                .into_iter()
                .map(|a| Self::open_appended(&self.key, a))
                .collect()
        })
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        Box::pin(async move {
            let snapshot = self.inner.snapshot(authority, task_id).await?;
            Self::open_snapshot(&self.key, snapshot)
        })
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        Box::pin(async move {
            self.inner
                .read(authority, task_id, after)
                .await?
                .into_iter()
                .map(|s| Self::open_record(&self.key, s))
                .collect()
        })
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        Box::pin(async move {
            let watch = self.inner.watch(authority, task_id, after).await?;
            let key = self.key.clone();
            let records = watch
                .records
                .map(move |item| item.and_then(|s| Self::open_record(&key, s)));
            Ok(Watch {
                snapshot: Self::open_snapshot(&self.key, watch.snapshot)?,
                records: Box::pin(records),
            })
        })
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        self.inner.list(authority, query)
    }
}
