//! The watch stream of [`MemoryTaskLog`](super::MemoryTaskLog): reads the
//! records after a cursor under the shard lock, then waits for the next
//! commit, so no record is ever missed.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Inner, WATCH_BATCH, not_found};
use crate::log::{LogError, Sequenced};

/// Decrements the watcher count when a watch stream is dropped, and compacts
/// a terminal task once its last watcher is gone.
pub(super) struct WatchGuard {
    pub(super) inner: Arc<Inner>,
    pub(super) key: Arc<str>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let mut shard = self.inner.lock(self.inner.shard_of(&self.key));
        if let Some(e) = shard.map.get_mut(&self.key) {
            e.watchers = e.watchers.saturating_sub(1);
            if e.watchers == 0 && e.is_terminal() && self.inner.cfg.compact_terminal {
                e.compact(&self.inner);
            }
        }
    }
}

pub(super) struct WatchState {
    pub(super) guard: WatchGuard,
    pub(super) authority: Arc<str>,
    pub(super) cursor: u64,
    pub(super) rx: watch::Receiver<u64>,
    pub(super) buf: VecDeque<Sequenced>,
    pub(super) done: bool,
    pub(super) sender_gone: bool,
}

impl WatchState {
    /// Records after the cursor, and whether the task is terminal.
    fn fetch(&mut self) -> Result<(Vec<Sequenced>, bool), LogError> {
        let inner = &self.guard.inner;
        let mut shard = inner.lock(inner.shard_of(&self.guard.key));
        let e = shard
            .map
            .get_mut(&*self.guard.key)
            .filter(|e| *e.authority == *self.authority)
            .ok_or_else(not_found)?;
        self.rx.borrow_and_update();
        let records = e.after_at_most(self.cursor, WATCH_BATCH)?;
        let caught_up = records.last().is_none_or(|r| r.seq == e.seq);
        Ok((records, caught_up && e.is_terminal()))
    }

    pub(super) async fn next(mut self) -> Option<(Result<Sequenced, LogError>, Self)> {
        loop {
            if let Some(r) = self.buf.pop_front() {
                return Some((Ok(r), self));
            }
            if self.done {
                return None;
            }
            match self.fetch() {
                Err(e) => {
                    self.done = true;
                    return Some((Err(e), self));
                }
                Ok((recs, terminal)) if !recs.is_empty() => {
                    self.cursor = recs.last().map_or(self.cursor, |r| r.seq);
                    self.buf.extend(recs);
                    self.done = terminal;
                }
                Ok((_, true)) => return None,
                Ok(_) if self.sender_gone => {
                    self.done = true;
                    return Some((Err(not_found()), self));
                }
                Ok(_) => {
                    if self.rx.changed().await.is_err() {
                        self.sender_gone = true;
                    }
                }
            }
        }
    }
}
