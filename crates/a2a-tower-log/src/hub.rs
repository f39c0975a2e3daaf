//! The watch side of the durable backends: a hub of per-task wake-ups (fed
//! after each commit, in-process or by NOTIFY) and a record stream that
//! catches up from the database on every wake-up, so no record is missed
//! between two wake-ups.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use super::{LogError, LogFuture, RecordStream, Sequenced};

/// Per-task wake-up counters, one entry per watched task, with the records
/// this process committed to the task since it was first watched (the last
/// `RECENT`), so that watchers woken by an in-process commit need not read
/// them back from the database.
#[derive(Debug, Default)]
pub struct Hub {
    map: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    tx: watch::Sender<u64>,
    recent: VecDeque<Sequenced>,
    /// The highest sequence number another process announced
    /// ([`announce`](Hub::announce)): kept records below it are not the
    /// task's head.
    announced: u64,
}

/// How many published records a watched task keeps in memory.
const RECENT: usize = 64;

impl Hub {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the watchers of `task_id` after an in-process commit of
    /// `records` (sequence numbers from `first`), keeping them for
    /// [`recent`](Self::recent). Called in commit order. Records nobody
    /// watches are handed back, for the caller to free.
    pub fn publish(
        &self,
        task_id: &str,
        first: u64,
        records: Vec<super::Record>,
    ) -> Option<Vec<super::Record>> {
        let mut map = self.lock();
        let Some(e) = map.get_mut(task_id) else {
            return Some(records);
        };
        let head = first + records.len() as u64 - 1;
        if e.recent.back().is_some_and(|r| r.seq + 1 != first) {
            // A commit this hub did not see (another process): start over.
            e.recent.clear();
        }
        for (i, record) in records.into_iter().enumerate() {
            if e.recent.len() == RECENT {
                e.recent.pop_front();
            }
            e.recent.push_back(Sequenced {
                seq: first + i as u64,
                head,
                record: Arc::new(record),
            });
        }
        for r in &mut e.recent {
            r.head = head;
        }
        e.tx.send_modify(|n| *n = n.wrapping_add(1));
        None
    }

    /// The published records of `task_id` after `after`, when memory holds
    /// all of them (the record right after `after` is kept); `None` means
    /// read the database. Every publish wakes the watchers after the records
    /// are kept, so a reader woken by it finds them here.
    pub fn recent(&self, task_id: &str, after: u64) -> Option<Vec<Sequenced>> {
        let map = self.lock();
        let e = map.get(task_id)?;
        let recent = &e.recent;
        let front = recent.front()?;
        let back = recent.back()?;
        if front.seq > after + 1 || back.seq < after || back.seq < e.announced {
            return None;
        }
        Some(recent.iter().filter(|r| r.seq > after).cloned().collect())
    }

    /// Registers interest in `task_id`; every commit notified afterwards
    /// wakes the subscription.
    pub fn subscribe(self: &Arc<Self>, task_id: &str) -> Subscription {
        let rx = self
            .lock()
            .entry(task_id.to_owned())
            .or_insert_with(|| Entry {
                tx: watch::Sender::new(0),
                recent: VecDeque::new(),
                announced: 0,
            })
            .tx
            .subscribe();
        Subscription {
            rx,
            _guard: Guard {
                hub: self.clone(),
                task_id: task_id.to_owned(),
            },
        }
    }

    /// Wakes the watchers of `task_id` after a commit that was not
    /// published (by another host): the task's kept records are dropped, so
    /// that [`recent`](Self::recent) sends its readers to the database
    /// instead of hiding the new records behind the kept ones.
    pub fn notify(&self, task_id: &str) {
        if let Some(e) = self.lock().get_mut(task_id) {
            e.recent.clear();
            e.tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Wakes the watchers of `task_id` after another process committed it up
    /// to `seq`: until this process publishes that far, [`recent`](Self::recent)
    /// sends its readers to the database.
    pub fn announce(&self, task_id: &str, seq: u64) {
        if let Some(e) = self.lock().get_mut(task_id) {
            e.announced = e.announced.max(seq);
            e.tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Wakes every watcher (after a lost connection: they catch up from the
    /// database; every kept record is dropped, as by [`notify`](Self::notify)).
    pub fn notify_all(&self) {
        for e in self.lock().values_mut() {
            e.recent.clear();
            e.tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// A registered interest in one task. Fields drop in order: the receiver
/// first, then the guard removes the entry once nobody else holds one.
pub struct Subscription {
    rx: watch::Receiver<u64>,
    _guard: Guard,
}

struct Guard {
    hub: Arc<Hub>,
    task_id: String,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut map = self.hub.lock();
        if map
            .get(&self.task_id)
            .is_some_and(|e| e.tx.receiver_count() == 0)
        {
            map.remove(&self.task_id);
        }
    }
}

/// How many records a watch reads per page from the database: a reader far
/// behind the task's head catches up page by page, so it holds at most about
/// one page in memory however far behind it is.
pub const PAGE: usize = 1024;

/// Reads the records of the watched task after a sequence number: at most
/// about [`PAGE`] of them (a whole stored entry may pass it); fewer than
/// [`PAGE`] means the read reached the task's head.
pub type Fetch = Arc<dyn Fn(u64) -> LogFuture<'static, Vec<Sequenced>> + Send + Sync>;

struct State {
    sub: Subscription,
    fetch: Fetch,
    cursor: u64,
    buf: VecDeque<Sequenced>,
    done: bool,
    /// The last read filled a page: read on without waiting for a wake-up.
    more: bool,
}

/// A watch from `snapshot`, read after `sub` was registered: the records
/// after `after` (or after the snapshot) up to the snapshot, read with
/// `fetch` only if there are any, then every record committed later. Any
/// commit after the snapshot wakes `sub`, so nothing is missed.
pub async fn watch(
    sub: Subscription,
    snapshot: super::Snapshot,
    after: Option<u64>,
    fetch: Fetch,
) -> Result<super::Watch, LogError> {
    let cursor = after.unwrap_or(snapshot.seq);
    let buf = if cursor >= snapshot.seq {
        Vec::new()
    } else {
        fetch(cursor).await?
    };
    // A terminal task is done once the reads reach its head.
    let done = snapshot.projection.is_terminal() && cursor >= snapshot.seq;
    let records = stream(sub, fetch, cursor, buf, done);
    Ok(super::Watch { snapshot, records })
}

/// The live record stream of a watch: `buf` first (records after `cursor`
/// read when the watch started, after `sub` was registered), then every
/// record committed later, read back from the database on each wake-up.
/// Ends after a terminal record (or at once if `done`).
fn stream(
    sub: Subscription,
    fetch: Fetch,
    cursor: u64,
    buf: Vec<Sequenced>,
    done: bool,
) -> RecordStream {
    let done = done || buf.iter().any(|r| r.record.is_terminal());
    let more = buf.len() >= PAGE;
    let state = State {
        sub,
        fetch,
        cursor: buf.last().map_or(cursor, |r| r.seq),
        buf: buf.into(),
        done,
        more,
    };
    Box::pin(futures_util::stream::unfold(state, next))
}

async fn next(mut s: State) -> Option<(Result<Sequenced, LogError>, State)> {
    loop {
        if let Some(r) = s.buf.pop_front() {
            return Some((Ok(r), s));
        }
        if s.done {
            return None;
        }
        // Read only after a wake-up (one read per commit, not two): `buf`
        // was read after `sub` was registered, and each read below after the
        // wake-up it answers was marked seen, so a commit after any read
        // wakes `sub` again.
        // A reader behind the head reads on page by page first.
        if !std::mem::take(&mut s.more) && s.sub.rx.changed().await.is_err() {
            s.done = true;
            return Some((Err(LogError::backend("task log closed")), s));
        }
        // Mark the current wake-up seen *before* reading, so a commit that
        // lands after the read always wakes us again.
        s.sub.rx.borrow_and_update();
        match (s.fetch)(s.cursor).await {
            Err(e) => {
                s.done = true;
                return Some((Err(e), s));
            }
            Ok(recs) => {
                s.cursor = recs.last().map_or(s.cursor, |r| r.seq);
                s.done = recs.iter().any(|r| r.record.is_terminal());
                s.more = recs.len() >= PAGE;
                s.buf.extend(recs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    fn records(n: usize) -> Vec<Record> {
        (0..n).map(|_| Record::created("t", "c")).collect()
    }

    fn seqs(r: Option<Vec<Sequenced>>) -> Option<Vec<u64>> {
        r.map(|v| v.iter().map(|s| s.seq).collect())
    }

    #[test]
    fn another_processs_commit_is_never_hidden_behind_kept_records() {
        let hub = Arc::new(Hub::default());
        let _sub = hub.subscribe("t");
        assert!(hub.publish("t", 1, records(3)).is_none());
        assert_eq!(seqs(hub.recent("t", 1)), Some(vec![2, 3]));
        assert_eq!(seqs(hub.recent("t", 3)), Some(vec![]));
        // Another host committed 4..=5: the kept records are not the head.
        hub.announce("t", 5);
        assert_eq!(seqs(hub.recent("t", 3)), None);
        // Published past it (after reading it), they are again.
        assert!(hub.publish("t", 6, records(1)).is_none());
        assert_eq!(seqs(hub.recent("t", 5)), Some(vec![6]));
        assert_eq!(seqs(hub.recent("t", 3)), None);
        // A commit without a sequence number drops them.
        hub.notify("t");
        assert_eq!(seqs(hub.recent("t", 6)), None);
        // Unwatched tasks keep nothing.
        assert_eq!(hub.publish("u", 1, records(1)).map(|r| r.len()), Some(1));
    }
}
