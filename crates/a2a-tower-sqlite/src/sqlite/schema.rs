//! The SQLite schema and its migrations, applied by the writer connection.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::log::LogError;

/// One migration: SQL, or a rewrite of stored JSON in Rust.
enum Step {
    Sql(&'static str),
    Rust(fn(&Transaction<'_>) -> Result<(), LogError>),
}

/// Migration `i` moves the schema from version `i` to `i + 1`.
const MIGRATIONS: &[Step] = &[
    // 1: tasks (one row per task, the projected snapshot) and records.
    Step::Sql(
        r#"
    CREATE TABLE tasks (
        task_id    TEXT    NOT NULL PRIMARY KEY,
        authority  TEXT    NOT NULL,
        context_id TEXT    NOT NULL,
        state      INTEGER NOT NULL,
        status_ts  INTEGER NOT NULL,
        live       INTEGER NOT NULL,
        seq        INTEGER NOT NULL,
        epoch      INTEGER NOT NULL,
        snapshot   TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX tasks_list ON tasks (authority, status_ts DESC, task_id);
    CREATE INDEX tasks_context ON tasks (authority, context_id, status_ts DESC, task_id);
    CREATE INDEX tasks_live ON tasks (authority, task_id) WHERE live = 1;
    CREATE TABLE records (
        task_id    TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        authority  TEXT    NOT NULL,
        epoch      INTEGER NOT NULL,
        record     TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (task_id, seq)
    ) WITHOUT ROWID;
    "#,
    ),
    // 2: the host of each task's latest execution (start-up recovery).
    Step::Sql("ALTER TABLE tasks ADD COLUMN host TEXT;"),
    // 3: one row per append (`entries`: the JSON array of its records, the
    // first numbered `first`, the last `seq`), appended in rowid order, with
    // the task's snapshot after it when that append stored one; the task row
    // keeps only the indexed columns and `snapshot_seq`, the entry holding
    // the latest stored snapshot (0: none yet; replay from the first record).
    // Rowid order makes every insert an append to the table's last page, and
    // the task rows stay small enough to update in place.
    Step::Sql(
        r#"
    CREATE TABLE entries (
        id         INTEGER PRIMARY KEY,
        task_id    TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        first      INTEGER NOT NULL,
        epoch      INTEGER NOT NULL,
        records    TEXT    NOT NULL,
        snapshot   TEXT,
        created_at INTEGER NOT NULL
    );
    INSERT INTO entries (task_id, seq, first, epoch, records, snapshot, created_at)
        SELECT r.task_id, r.seq, r.seq, r.epoch, '[' || r.record || ']',
               CASE WHEN r.seq = t.seq THEN t.snapshot END, r.created_at
        FROM records r JOIN tasks t ON t.task_id = r.task_id
        ORDER BY r.task_id, r.seq;
    CREATE UNIQUE INDEX entries_task ON entries (task_id, seq);
    DROP TABLE records;
    ALTER TABLE tasks ADD COLUMN snapshot_seq INTEGER NOT NULL DEFAULT 0;
    UPDATE tasks SET snapshot_seq = seq;
    ALTER TABLE tasks DROP COLUMN snapshot;
    "#,
    ),
    // 4: indexes that live tasks' updates leave alone. The context index
    // loses the status timestamp (a task's context never changes, so it is
    // written once per task; a list sorts a context's few tasks), and the
    // list index holds only rested tasks: a list merges in the live ones
    // from `tasks_live`, so status changes of a running task touch neither.
    Step::Sql(
        r#"
    DROP INDEX tasks_context;
    CREATE INDEX tasks_context ON tasks (authority, context_id);
    DROP INDEX tasks_list;
    CREATE INDEX tasks_list ON tasks (authority, status_ts DESC, task_id) WHERE live = 0;
    "#,
    ),
    // 5: the list index in the order tasks come to rest (the status
    // timestamp ascending), so that a new entry lands in its last leaf
    // instead of splitting its first one; a list walks it backwards, which
    // `task_id DESC` makes the order lists want (newest first, ties by id).
    Step::Sql(
        r#"
    DROP INDEX tasks_list;
    CREATE INDEX tasks_list ON tasks (authority, status_ts, task_id DESC) WHERE live = 0;
    "#,
    ),
    // 6: push delivery (see the log's rules): one cursor per push config,
    // the sequence number delivered up to, and one lease per task being
    // delivered (`until`: Unix milliseconds).
    Step::Sql(
        r#"
    CREATE TABLE push_cursors (
        task_id    TEXT    NOT NULL,
        config_id  TEXT    NOT NULL,
        authority  TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        PRIMARY KEY (task_id, config_id)
    ) WITHOUT ROWID;
    CREATE INDEX push_cursors_order ON push_cursors (authority, task_id);
    CREATE TABLE push_leases (
        task_id    TEXT    NOT NULL PRIMARY KEY,
        holder     TEXT    NOT NULL,
        until      INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    ),
    // 7: feature records hold their tasks (a managed run's start, a queued
    // input, a queue stream's records; and stored snapshots): see
    // `log::upgrade`. Rewrites the JSON of the entries that need it.
    Step::Rust(upgrade_holds),
    // 8: the delivery queue's streams are a kind of their own (`log::stream_id`):
    // each moves from the reserved authority to its caller's, under its
    // stream id, with the id rewritten in its records and snapshots.
    Step::Rust(move_queue_streams),
];

/// Migration 8: every row of the old queue authority, moved.
fn move_queue_streams(tx: &Transaction<'_>) -> Result<(), LogError> {
    use crate::log::upgrade::{OLD_QUEUE_AUTHORITY, moved_stream, renamed};
    let ids = tx
        .prepare("SELECT task_id FROM tasks WHERE authority = ?1")
        .and_then(|mut st| {
            st.query_map([OLD_QUEUE_AUTHORITY], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(LogError::backend)?;
    for old in ids {
        let Some((authority, new)) = moved_stream(&old) else {
            return Err(LogError::backend(format!(
                "migration 8: a queue stream id of an unknown form: {old:?}"
            )));
        };
        let entries = tx
            .prepare("SELECT id, records, snapshot FROM entries WHERE task_id = ?1")
            .and_then(|mut st| {
                st.query_map([&old], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(LogError::backend)?;
        for (id, records, snapshot) in entries {
            let records = renamed(&records, &old, &new)?.unwrap_or(records);
            let snapshot = match snapshot {
                Some(s) => Some(renamed(&s, &old, &new)?.unwrap_or(s)),
                None => None,
            };
            tx.execute(
                "UPDATE entries SET task_id = ?2, records = ?3, snapshot = ?4 WHERE id = ?1",
                params![id, new, records, snapshot],
            )
            .map_err(LogError::backend)?;
        }
        for sql in [
            "UPDATE tasks SET task_id = ?2, authority = ?3 WHERE task_id = ?1",
            "UPDATE push_cursors SET task_id = ?2, authority = ?3 WHERE task_id = ?1",
        ] {
            tx.execute(sql, params![old, new, authority])
                .map_err(LogError::backend)?;
        }
        tx.execute(
            "UPDATE push_leases SET task_id = ?2 WHERE task_id = ?1",
            params![old, new],
        )
        .map_err(LogError::backend)?;
    }
    Ok(())
}

/// Migration 7: the entries whose records or snapshot need a hold.
fn upgrade_holds(tx: &Transaction<'_>) -> Result<(), LogError> {
    let mut select = tx
        .prepare(
            "SELECT id, records, snapshot FROM entries \
             WHERE records LIKE '%\"inputQueued\"%' OR records LIKE '%\"runStarted\"%' \
                OR records LIKE '%\"queue\"%' OR snapshot LIKE '%\"queued\"%' \
                OR snapshot LIKE '%scope.program%' OR snapshot LIKE '%queue.authority%'",
        )
        .map_err(LogError::backend)?;
    let rows = select
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(LogError::backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(LogError::backend)?;
    let mut update = tx
        .prepare("UPDATE entries SET records = ?2, snapshot = ?3 WHERE id = ?1")
        .map_err(LogError::backend)?;
    for (id, records, snapshot) in rows {
        let new_records = crate::log::upgrade::records(&records)?;
        let new_snapshot = match &snapshot {
            Some(s) => crate::log::upgrade::snapshot(s)?,
            None => None,
        };
        if new_records.is_none() && new_snapshot.is_none() {
            continue;
        }
        update
            .execute(params![
                id,
                new_records.unwrap_or(records),
                new_snapshot.or(snapshot)
            ])
            .map_err(LogError::backend)?;
    }
    Ok(())
}

/// The schema version this crate writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Creates or migrates the schema in one immediate transaction. A database
/// written by a newer crate (a higher version) is refused.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), LogError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(LogError::backend)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(LogError::backend)?;
    let current: Option<i64> = tx
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .optional()
        .map_err(LogError::backend)?;
    if current.is_none() {
        tx.execute("INSERT INTO schema_version (version) VALUES (0)", [])
            .map_err(LogError::backend)?;
    }
    let current = current.unwrap_or(0);
    if current > VERSION {
        return Err(LogError::backend(format!(
            "task log schema version {current} is newer than this crate's ({VERSION})"
        )));
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        match step {
            Step::Sql(sql) => tx.execute_batch(sql).map_err(LogError::backend)?,
            Step::Rust(f) => f(&tx)?,
        }
        tx.execute("UPDATE schema_version SET version = ?1", [i as i64 + 1])
            .map_err(LogError::backend)?;
    }
    tx.commit().map_err(LogError::backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_once_and_refuses_newer() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let v: i64 = conn
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, VERSION);
        conn.execute("UPDATE schema_version SET version = 99", [])
            .unwrap();
        assert!(migrate(&mut conn).is_err());
    }
}
