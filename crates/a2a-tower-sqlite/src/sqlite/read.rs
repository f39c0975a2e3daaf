//! The read side: a small pool of read-only connections and the queries.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::log::stored::{
    clamp_nanos, decode_entry, decode_projection, decode_task, from_i64, to_i64, with_heads,
};
use crate::log::{
    ListPage, ListQuery, LiveTask, LogError, LogErrorKind, PageCursor, Projection, Sequenced,
    Snapshot,
};
use crate::types::TaskState;

/// At most `max` read-only connections: a call waits for a permit, then
/// takes an idle connection (or opens one, while fewer than `max` exist) on
/// a blocking thread and gives it back afterwards. Without the bound, reads
/// beyond the idle connections would each open (and then close) one, which
/// under load costs more than the reads themselves.
#[derive(Debug)]
pub(crate) struct Readers {
    path: PathBuf,
    idle: Arc<Mutex<Vec<Connection>>>,
    permits: Arc<tokio::sync::Semaphore>,
    max_idle: usize,
    busy: Duration,
}

impl Readers {
    pub(crate) fn new(path: PathBuf, max: usize, busy: Duration) -> Self {
        let max = max.max(1);
        Self {
            path,
            idle: Arc::default(),
            permits: Arc::new(tokio::sync::Semaphore::new(max)),
            max_idle: max,
            busy,
        }
    }

    /// Runs `f` on a reader connection on tokio's blocking pool.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, LogError> + Send + 'static,
    ) -> impl Future<Output = Result<T, LogError>> + Send + 'static {
        let idle = self.idle.clone();
        let path = self.path.clone();
        let (max_idle, busy) = (self.max_idle, self.busy);
        let permits = self.permits.clone();
        async move {
            let permit = permits.acquire_owned().await.map_err(LogError::backend)?;
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let pooled = idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let conn = match pooled {
                    Some(c) => c,
                    None => super::read_only(&path, busy)?,
                };
                let out = f(&conn);
                let mut idle = idle.lock().unwrap_or_else(|p| p.into_inner());
                if idle.len() < max_idle {
                    idle.push(conn);
                }
                out
            })
            .await
            .map_err(LogError::backend)?
        }
    }
}

fn not_found() -> LogError {
    LogError::new(LogErrorKind::NotFound)
}

/// A task row: its head and where its latest snapshot is stored.
pub(crate) struct Row {
    pub(crate) authority: String,
    pub(crate) seq: u64,
    pub(crate) epoch: u64,
    pub(crate) snapshot_seq: u64,
}

/// The row of `task_id`, if any (any authority).
///
/// Two plain statements rather than one join: with the query planner's
/// STAT4 (compiled into the bundled SQLite), a join on the bound task id is
/// recompiled at every execution, which cost more than the query itself.
pub(crate) fn row(c: &Connection, task_id: &str) -> Result<Option<Row>, LogError> {
    let row = c
        .prepare_cached("SELECT authority, seq, epoch, snapshot_seq FROM tasks WHERE task_id = ?1")
        .and_then(|mut st| {
            st.query_row([task_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .optional()
        })
        .map_err(LogError::backend)?;
    let Some((authority, seq, epoch, snapshot_seq)) = row else {
        return Ok(None);
    };
    Ok(Some(Row {
        authority,
        seq: from_i64(seq)?,
        epoch: from_i64(epoch)?,
        snapshot_seq: from_i64(snapshot_seq)?,
    }))
}

impl Row {
    /// The task's projection at the row's `seq`: the stored snapshot plus
    /// the entries after it. Read without a transaction, the entries may be
    /// gone by now (a retention sweep, a stream's compaction): a backend
    /// error then, which readers retry in one ([`whole_or_gone`]).
    pub(crate) fn projection(&self, c: &Connection, task_id: &str) -> Result<Projection, LogError> {
        let snapshot = stored_snapshot(c, task_id, self.snapshot_seq)?;
        replay(c, task_id, snapshot.as_deref(), self.snapshot_seq, self.seq)
    }
}

/// The snapshot stored with the entry ending at `seq` (none when 0).
fn stored_snapshot(c: &Connection, task_id: &str, seq: u64) -> Result<Option<String>, LogError> {
    if seq == 0 {
        return Ok(None);
    }
    let seq = to_i64(seq)?;
    c.prepare_cached("SELECT snapshot FROM entries WHERE task_id = ?1 AND seq = ?2")
        .and_then(|mut st| st.query_row(params![task_id, seq], |r| r.get(0)).optional())
        .map_err(LogError::backend)
        .map(Option::flatten)
}

/// The projection at `seq` from a snapshot stored at `snapshot_seq` (none
/// when 0) and the entries up to `seq`.
fn replay(
    c: &Connection,
    task_id: &str,
    snapshot: Option<&str>,
    snapshot_seq: u64,
    seq: u64,
) -> Result<Projection, LogError> {
    let mut p = match (snapshot_seq, snapshot) {
        (0, _) => Projection::default(),
        (_, Some(json)) => decode_projection(json)?,
        (_, None) => return Err(LogError::backend("stored snapshot missing")),
    };
    if seq > snapshot_seq {
        let records = entries(c, task_id, snapshot_seq, seq)?;
        if records.last().map(|r| r.seq) != Some(seq) {
            return Err(LogError::backend("task entries missing"));
        }
        for r in &records {
            p.apply(&r.record);
        }
    }
    Ok(p)
}

/// The task's snapshot, whole or NotFound (see [`whole_or_gone`]).
pub(crate) fn snapshot(
    c: &Connection,
    authority: &str,
    task_id: &str,
) -> Result<Snapshot, LogError> {
    whole_or_gone(c, |c| snapshot_unlocked(c, authority, task_id))
}

/// `read` without a transaction, and again inside one if that failed with
/// a backend error. Entries are immutable, so a task's row and its entries
/// need no transaction to agree; but retention deletes whole tasks, and a
/// deletion committed between the read of the row and that of its entries
/// leaves the entries missing (a backend error). In one read transaction
/// the task is whole or gone, and the common path pays nothing for it.
fn whole_or_gone<T>(
    c: &Connection,
    read: impl Fn(&Connection) -> Result<T, LogError>,
) -> Result<T, LogError> {
    match read(c) {
        Err(e) if e.kind() == LogErrorKind::Backend => {
            let tx = c.unchecked_transaction().map_err(LogError::backend)?;
            read(&tx)
        }
        out => out,
    }
}

fn snapshot_unlocked(c: &Connection, authority: &str, task_id: &str) -> Result<Snapshot, LogError> {
    let row = row(c, task_id)?
        .filter(|r| r.authority == authority)
        .ok_or_else(not_found)?;
    let projection = row.projection(c, task_id)?;
    Ok(Snapshot::new(row.seq, row.epoch, projection))
}

/// The records after `after`: the task's authority checked on its row, then
/// its entries (immutable once written) read after it.
pub(crate) fn records(
    c: &Connection,
    authority: &str,
    task_id: &str,
    after: u64,
) -> Result<Vec<Sequenced>, LogError> {
    let owner: Option<String> = c
        .prepare_cached("SELECT authority FROM tasks WHERE task_id = ?1")
        .and_then(|mut st| st.query_row([task_id], |r| r.get(0)).optional())
        .map_err(LogError::backend)?;
    if owner.as_deref() != Some(authority) {
        return Err(not_found());
    }
    Ok(with_heads(entries(c, task_id, after, u64::MAX)?))
}

/// At most about `page` records after `after` (whole entries: the last one
/// read may pass `page`), each with the task's head, for a watch reading
/// page by page.
pub(crate) fn records_page(
    c: &Connection,
    authority: &str,
    task_id: &str,
    after: u64,
    page: usize,
) -> Result<Vec<Sequenced>, LogError> {
    let owner: Option<(String, i64)> = c
        .prepare_cached("SELECT authority, seq FROM tasks WHERE task_id = ?1")
        .and_then(|mut st| {
            st.query_row([task_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(LogError::backend)?;
    let head = match owner {
        Some((owner, head)) if owner == authority => from_i64(head)?,
        _ => return Err(not_found()),
    };
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut st = c.prepare_cached(ENTRIES).map_err(LogError::backend)?;
    let mut rows = st
        .query(params![task_id, clamp(after), clamp(head)])
        .map_err(LogError::backend)?;
    let mut out = Vec::new();
    while out.len() < page {
        let Some(row) = rows.next().map_err(LogError::backend)? else {
            break;
        };
        let first: i64 = row.get(0).map_err(LogError::backend)?;
        let json: String = row.get(1).map_err(LogError::backend)?;
        decode_entry(first, &json, after, &mut out)?;
    }
    for r in &mut out {
        r.head = head;
    }
    Ok(out)
}

/// The statement behind [`entries`].
const ENTRIES: &str =
    "SELECT first, records FROM entries WHERE task_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq";

/// The records of `task_id` numbered after `after` and up to `upto`, from
/// the entries that hold them.
fn entries(
    c: &Connection,
    task_id: &str,
    after: u64,
    upto: u64,
) -> Result<Vec<Sequenced>, LogError> {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut st = c.prepare_cached(ENTRIES).map_err(LogError::backend)?;
    let mut rows = st
        .query(params![task_id, clamp(after), clamp(upto)])
        .map_err(LogError::backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(LogError::backend)? {
        let first: i64 = row.get(0).map_err(LogError::backend)?;
        let json: String = row.get(1).map_err(LogError::backend)?;
        decode_entry(first, &json, after, &mut out)?;
    }
    Ok(out)
}

/// The filters of a list after the table, on `?1`..`?6` (authority,
/// context, state, status timestamp lower bound, cursor); a stream's row
/// (its id starts with U+0001, see `log::stream_id`) is never listed.
const FILTERS: &str = "authority = ?1 AND unicode(task_id) IS NOT 1 AND (?3 IS NULL OR state = ?3) AND (?4 IS NULL OR status_ts >= ?4) \
                       AND (?5 IS NULL OR status_ts < ?5 OR (status_ts = ?5 AND task_id > ?6))";

/// The number of matching tasks (the cursor ignored).
fn count_sql(context: bool) -> String {
    let filters = FILTERS.replace(
        " AND (?5 IS NULL OR status_ts < ?5 OR (status_ts = ?5 AND task_id > ?6))",
        "",
    );
    if context {
        format!(
            "SELECT count(*) FROM tasks INDEXED BY tasks_context WHERE context_id = ?2 AND {filters}"
        )
    } else {
        format!("SELECT count(*) FROM tasks WHERE {filters}")
    }
}

/// One page of at most `?7` tasks after the cursor, newest status first.
///
/// With a context, `tasks_context` finds the context's tasks, which are then
/// sorted (the index is named: with no statistics the planner would rather
/// walk `tasks_list` in order through every task of the authority). Without
/// one, the rested tasks come in order from `tasks_list` and the live ones
/// (few: those running now) from `tasks_live`, merged.
fn page_sql(context: bool) -> String {
    if context {
        format!(
            "SELECT {COLUMNS} FROM tasks INDEXED BY tasks_context WHERE context_id = ?2 AND {FILTERS} \
             {ORDER} LIMIT ?7"
        )
    } else {
        format!(
            "SELECT * FROM ({}) \
             UNION ALL \
             SELECT * FROM (SELECT {COLUMNS} FROM tasks INDEXED BY tasks_live WHERE live = 1 AND {FILTERS}) \
             {ORDER} LIMIT ?7",
            rested_sql()
        )
    }
}

/// The columns of a listed task.
const COLUMNS: &str = "status_ts, task_id, seq, snapshot_seq";
/// The order of a list: newest status first, ties by id.
const ORDER: &str = "ORDER BY status_ts DESC, task_id ASC";

/// One page of rested tasks, read in order from `tasks_list` (backwards:
/// the index is kept in the order tasks come to rest).
fn rested_sql() -> String {
    format!(
        "SELECT {COLUMNS} FROM tasks INDEXED BY tasks_list WHERE live = 0 AND {FILTERS} {ORDER} LIMIT ?7"
    )
}

pub(crate) fn list(c: &Connection, authority: &str, q: &ListQuery) -> Result<ListPage, LogError> {
    let size = q.page_size.max(1);
    let state = q.state.map(TaskState::number);
    let after_ts = q.status_after.map(|t| clamp_nanos(t.unix_nanos()));
    let (cur_ts, cur_id) = match &q.after {
        Some(c) => (
            Some(clamp_nanos(c.timestamp_nanos)),
            Some(c.task_id.as_str()),
        ),
        None => (None, None),
    };
    let limit = i64::try_from(size + 1).unwrap_or(i64::MAX);
    let context = q.context_id.is_some();
    // One read transaction: the count and the page see the same data.
    c.execute_batch("BEGIN").map_err(LogError::backend)?;
    let out = (|| {
        let total: i64 = c
            .prepare_cached(&count_sql(context))
            .and_then(|mut st| {
                st.query_row(params![authority, q.context_id, state, after_ts], |r| {
                    r.get(0)
                })
            })
            .map_err(LogError::backend)?;
        let mut st = c
            .prepare_cached(&page_sql(context))
            .map_err(LogError::backend)?;
        let mut rows = st
            .query(params![
                authority,
                q.context_id,
                state,
                after_ts,
                cur_ts,
                cur_id,
                limit
            ])
            .map_err(LogError::backend)?;
        let mut page = Vec::new();
        while let Some(row) = rows.next().map_err(LogError::backend)? {
            let ts: i64 = row.get(0).map_err(LogError::backend)?;
            let id: String = row.get(1).map_err(LogError::backend)?;
            let seq = from_i64(row.get(2).map_err(LogError::backend)?)?;
            let at = from_i64(row.get(3).map_err(LogError::backend)?)?;
            page.push((ts, id, seq, at));
        }
        drop(rows);
        // Each task from its stored snapshot (and the entries after it),
        // inside the same read transaction.
        let tasks = page
            .iter()
            .take(size)
            .map(|(_, id, seq, at)| {
                let json = stored_snapshot(c, id, *at)?;
                match json {
                    Some(json) if at == seq => decode_task(&json),
                    json => replay(c, id, json.as_deref(), *at, *seq).map(|p| p.task().clone()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let more = page.len() > size;
        let next = if more {
            page.get(size - 1).map(|(ts, id, ..)| PageCursor {
                timestamp_nanos: i128::from(*ts),
                task_id: id.clone(),
            })
        } else {
            None
        };
        Ok((total, tasks, next))
    })();
    let _ = c.execute_batch("COMMIT");
    let (total, tasks, next) = out?;
    Ok(ListPage {
        tasks,
        next,
        total: usize::try_from(total).unwrap_or(0),
    })
}

pub(crate) fn live(
    c: &Connection,
    after: Option<(String, String)>,
    limit: usize,
) -> Result<Vec<LiveTask>, LogError> {
    let (a, t) = after.unzip();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut st = c
        .prepare_cached(
            "SELECT authority, task_id, context_id, state, seq, epoch, host FROM tasks \
             WHERE live = 1 AND (?1 IS NULL OR authority > ?1 OR (authority = ?1 AND task_id > ?2)) \
             ORDER BY authority, task_id LIMIT ?3",
        )
        .map_err(LogError::backend)?;
    let mut rows = st.query(params![a, t, limit]).map_err(LogError::backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(LogError::backend)? {
        out.push(live_task(row)?);
    }
    Ok(out)
}

/// A [`LiveTask`] from a row of `authority, task_id, context_id, state,
/// seq, epoch, host`.
pub(crate) fn live_task(row: &rusqlite::Row<'_>) -> Result<LiveTask, LogError> {
    let get = |i| row.get::<_, i64>(i).map_err(LogError::backend);
    Ok(LiveTask {
        authority: row.get(0).map_err(LogError::backend)?,
        task_id: row.get(1).map_err(LogError::backend)?,
        context_id: row.get(2).map_err(LogError::backend)?,
        state: TaskState::from_number(get(3)?).unwrap_or_default(),
        seq: from_i64(get(4)?)?,
        epoch: from_i64(get(5)?)?,
        host: row.get(6).map_err(LogError::backend)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The query plans the indexes were chosen for: a missed index is a
    /// scan of every task, which no functional test notices.
    fn plan(c: &Connection, sql: &str) -> String {
        let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let n = st.parameter_count();
        let nulls: Vec<Option<i64>> = vec![None; n];
        let rows = st
            .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
            .unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn queries_use_their_indexes() {
        let mut c = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut c).unwrap();
        let by_context = plan(&c, &page_sql(true));
        assert!(by_context.contains("INDEX tasks_context"), "{by_context}");
        let all = plan(&c, &page_sql(false));
        assert!(all.contains("INDEX tasks_list"), "{all}");
        assert!(all.contains("INDEX tasks_live"), "{all}");
        assert!(!all.contains("SCAN tasks"), "{all}");
        // The rested tasks come in the list's order from the index itself
        // (a backward walk), not through a sort of every rested task.
        let rested = plan(&c, &rested_sql());
        assert!(rested.contains("INDEX tasks_list"), "{rested}");
        assert!(!rested.contains("TEMP B-TREE"), "{rested}");
        let count = plan(&c, &count_sql(true));
        assert!(count.contains("INDEX tasks_context"), "{count}");
        let entries = plan(&c, ENTRIES);
        assert!(entries.contains("INDEX entries_task"), "{entries}");
        let live = plan(
            &c,
            "SELECT authority, task_id FROM tasks WHERE live = 1 AND (?1 IS NULL OR authority > ?1 OR (authority = ?1 AND task_id > ?2)) ORDER BY authority, task_id LIMIT ?3",
        );
        assert!(live.contains("tasks_live"), "{live}");
    }
    /// A task deleted between the read of its row and of its entries (what
    /// a retention sweep beside a reader does) reads as NotFound, never as
    /// a backend error; other errors are kept.
    #[tokio::test]
    async fn a_task_deleted_mid_read_is_gone() {
        use crate::log::{AppendRequest, Record, TaskLog as _};
        use crate::types::TaskStatus;
        let dir = std::env::temp_dir().join(format!("a2a-read-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("tasks.db");
        let log = super::super::SqliteTaskLog::open(&db).unwrap();
        let created = vec![Record::created("t1", "c1")];
        log.append(AppendRequest::create("a", "t1", created))
            .await
            .unwrap();
        let records = vec![Record::status(TaskStatus::new(TaskState::Working))];
        log.append(AppendRequest::new("a", "t1", 1, 1, records))
            .await
            .unwrap();
        let reader = super::super::read_only(&db, Duration::from_secs(1)).unwrap();
        let writer = Connection::open(&db).unwrap();
        let reads = std::cell::Cell::new(0);
        let got = whole_or_gone(&reader, |c| {
            reads.set(reads.get() + 1);
            let row = row(c, "t1")?.ok_or_else(not_found)?;
            if reads.get() == 1 {
                writer
                    .execute_batch(
                        "BEGIN; DELETE FROM entries WHERE task_id = 't1'; \
                         DELETE FROM tasks WHERE task_id = 't1'; COMMIT;",
                    )
                    .unwrap();
            }
            row.projection(c, "t1")
        });
        assert_eq!(reads.get(), 2);
        assert_eq!(got.unwrap_err().kind(), LogErrorKind::NotFound);
        let err = whole_or_gone(&reader, |c| {
            c.execute_batch("SELECT * FROM no_such_table")
                .map_err(LogError::backend)
        });
        assert_eq!(err.unwrap_err().kind(), LogErrorKind::Backend);
        drop((log, reader, writer));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
