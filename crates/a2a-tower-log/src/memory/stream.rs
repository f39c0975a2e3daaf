//! The watch stream of [`MemoryTaskLog`](super::MemoryTaskLog): reads the
//! records after a cursor under the shard lock, then waits for the next
//! commit, so no record is ever missed.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Inner, not_found};
use crate::{LogError, RecordStream, Sequenced, Watch};

/// Records a watch copies out per lock.
const WATCH_BATCH: usize = 256;

/// Starts a watch of the task: its snapshot, then its records after `after`
/// (default: the snapshot's), live as they are committed.
pub(super) fn watch(
    inner: &Arc<Inner>,
    authority: &str,
    task_id: &str,
    after: Option<u64>,
) -> Result<Watch, LogError> {
    let out = inner.with_entry(authority, task_id, |e| {
        let snapshot = e.snapshot()?;
        let cursor = after.unwrap_or(e.seq);
        let buf: VecDeque<Sequenced> = e.after_at_most(cursor, WATCH_BATCH)?.into();
        let rx = e
            .watch
            .get_or_insert_with(|| watch::Sender::new(e.seq))
            .subscribe();
        e.watchers += 1;
        let caught_up = buf.back().is_none_or(|r| r.seq == e.seq);
        Ok((
            snapshot,
            buf,
            rx,
            caught_up && e.is_terminal(),
            e.authority.clone(),
        ))
    });
    out.map(|(snapshot, buf, rx, terminal, authority)| {
        let state = WatchState {
            guard: WatchGuard {
                inner: inner.clone(),
                key: Arc::from(task_id),
            },
            authority,
            cursor: buf.back().map_or(after.unwrap_or(snapshot.seq), |r| r.seq),
            rx,
            buf,
            done: terminal,
            sender_gone: false,
        };
        let records: RecordStream = Box::pin(futures_util::stream::unfold(state, WatchState::next));
        Watch { snapshot, records }
    })
}

/// Decrements the watcher count when a watch stream is dropped, and compacts
/// a terminal task once its last watcher is gone.
struct WatchGuard {
    inner: Arc<Inner>,
    key: Arc<str>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let mut shard = self.inner.lock(self.inner.shard_of(&self.key));
        if let Some(e) = shard.map.get_mut(&self.key) {
            e.watchers = e.watchers.saturating_sub(1);
            if !e.keeps_records() && e.is_terminal() && self.inner.cfg.compact_terminal {
                e.compact(&self.inner);
            }
        }
    }
}

struct WatchState {
    guard: WatchGuard,
    authority: Arc<str>,
    cursor: u64,
    rx: watch::Receiver<u64>,
    buf: VecDeque<Sequenced>,
    done: bool,
    sender_gone: bool,
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

    async fn next(mut self) -> Option<(Result<Sequenced, LogError>, Self)> {
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
