//! The read side: a small pool of read-only connections and the queries.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::log::stored::{
    clamp_nanos, decode_projection, decode_record, decode_task, from_i64, with_heads,
};
use crate::log::{
    ListPage, ListQuery, LiveTask, LogError, LogErrorKind, PageCursor, Sequenced, Snapshot,
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

pub(crate) fn snapshot(
    c: &Connection,
    authority: &str,
    task_id: &str,
) -> Result<Snapshot, LogError> {
    let row = c
        .prepare_cached("SELECT authority, seq, epoch, snapshot FROM tasks WHERE task_id = ?1")
        .and_then(|mut st| {
            st.query_row([task_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .optional()
        })
        .map_err(LogError::backend)?;
    let (_, seq, epoch, json) = row.filter(|r| r.0 == authority).ok_or_else(not_found)?;
    Ok(Snapshot::new(
        from_i64(seq)?,
        from_i64(epoch)?,
        decode_projection(&json)?,
    ))
}

/// The records after `after`, in one statement (one read snapshot): the
/// task row joined with its later records.
pub(crate) fn records(
    c: &Connection,
    authority: &str,
    task_id: &str,
    after: u64,
) -> Result<Vec<Sequenced>, LogError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let mut st = c
        .prepare_cached(
            "SELECT t.authority, r.seq, r.record FROM tasks t \
             LEFT JOIN records r ON r.task_id = t.task_id AND r.seq > ?2 \
             WHERE t.task_id = ?1 ORDER BY r.seq",
        )
        .map_err(LogError::backend)?;
    let mut rows = st
        .query(params![task_id, after])
        .map_err(LogError::backend)?;
    let mut out = Vec::new();
    let mut found = false;
    while let Some(row) = rows.next().map_err(LogError::backend)? {
        let a: String = row.get(0).map_err(LogError::backend)?;
        if a != authority {
            return Err(not_found());
        }
        found = true;
        let seq: Option<i64> = row.get(1).map_err(LogError::backend)?;
        if let Some(seq) = seq {
            let json: String = row.get(2).map_err(LogError::backend)?;
            out.push(decode_record(seq, &json)?);
        }
    }
    if !found {
        return Err(not_found());
    }
    Ok(with_heads(out))
}

const FILTER: &str = "authority = ?1 AND (?2 IS NULL OR context_id = ?2) AND (?3 IS NULL OR state = ?3) \
                      AND (?4 IS NULL OR status_ts >= ?4)";

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
    // One read transaction: the count and the page see the same data.
    c.execute_batch("BEGIN").map_err(LogError::backend)?;
    let out = (|| {
        let total: i64 = c
            .prepare_cached(&format!("SELECT count(*) FROM tasks WHERE {FILTER}"))
            .and_then(|mut st| {
                st.query_row(params![authority, q.context_id, state, after_ts], |r| {
                    r.get(0)
                })
            })
            .map_err(LogError::backend)?;
        let mut st = c
            .prepare_cached(&format!(
                "SELECT snapshot, status_ts, task_id FROM tasks WHERE {FILTER} \
                 AND (?5 IS NULL OR status_ts < ?5 OR (status_ts = ?5 AND task_id > ?6)) \
                 ORDER BY status_ts DESC, task_id ASC LIMIT ?7"
            ))
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
            let json: String = row.get(0).map_err(LogError::backend)?;
            let ts: i64 = row.get(1).map_err(LogError::backend)?;
            let id: String = row.get(2).map_err(LogError::backend)?;
            page.push((ts, id, json));
        }
        Ok((total, page))
    })();
    let _ = c.execute_batch("COMMIT");
    let (total, mut page) = out?;
    let more = page.len() > size;
    page.truncate(size);
    let next = if more {
        page.last().map(|(ts, id, _)| PageCursor {
            timestamp_nanos: i128::from(*ts),
            task_id: id.clone(),
        })
    } else {
        None
    };
    let tasks = page
        .iter()
        .map(|(_, _, json)| decode_task(json))
        .collect::<Result<_, _>>()?;
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
        let get = |i| row.get::<_, i64>(i).map_err(LogError::backend);
        out.push(LiveTask {
            authority: row.get(0).map_err(LogError::backend)?,
            task_id: row.get(1).map_err(LogError::backend)?,
            context_id: row.get(2).map_err(LogError::backend)?,
            state: TaskState::from_number(get(3)?).unwrap_or_default(),
            seq: from_i64(get(4)?)?,
            epoch: from_i64(get(5)?)?,
            host: row.get(6).map_err(LogError::backend)?,
        });
    }
    Ok(out)
}
