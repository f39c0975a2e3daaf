//! The PostgreSQL schema and its migrations, serialized across hosts by a
//! transaction-scoped advisory lock.

use tokio_postgres::{Client, Transaction};

use crate::log::LogError;

/// One migration: SQL, or a rewrite of stored JSON in Rust.
enum Step {
    Sql(&'static str),
    Holds,
    QueueStreams,
}

/// Migration `i` moves the schema from version `i` to `i + 1`. `{s}` is the
/// quoted schema name. Text columns compare byte-wise (`COLLATE "C"`), the
/// order page cursors and live-task keys use.
const MIGRATIONS: &[Step] = &[
    Step::Sql(
        r#"
    CREATE TABLE {s}.tasks (
        task_id    text COLLATE "C" NOT NULL PRIMARY KEY,
        authority  text COLLATE "C" NOT NULL,
        context_id text COLLATE "C" NOT NULL,
        state      integer NOT NULL,
        status_ts  bigint  NOT NULL,
        live       boolean NOT NULL,
        seq        bigint  NOT NULL,
        epoch      bigint  NOT NULL,
        snapshot   text    NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX tasks_list ON {s}.tasks (authority, status_ts DESC, task_id);
    CREATE INDEX tasks_context ON {s}.tasks (authority, context_id, status_ts DESC, task_id);
    CREATE INDEX tasks_live ON {s}.tasks (authority, task_id) WHERE live;
    CREATE TABLE {s}.records (
        task_id    text COLLATE "C" NOT NULL,
        seq        bigint NOT NULL,
        authority  text COLLATE "C" NOT NULL,
        epoch      bigint NOT NULL,
        record     text   NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, seq)
    );
"#,
    ),
    // 2: the host of each task's latest execution (start-up recovery).
    Step::Sql("ALTER TABLE {s}.tasks ADD COLUMN host text;"),
    // 3: push delivery (see the log's rules): one cursor per push config,
    // the sequence number delivered up to, and one lease per task being
    // delivered.
    Step::Sql(
        r#"
    CREATE TABLE {s}.push_cursors (
        task_id    text COLLATE "C" NOT NULL,
        config_id  text COLLATE "C" NOT NULL,
        authority  text COLLATE "C" NOT NULL,
        seq        bigint NOT NULL,
        PRIMARY KEY (task_id, config_id)
    );
    CREATE INDEX push_cursors_order ON {s}.push_cursors (authority, task_id);
    CREATE TABLE {s}.push_leases (
        task_id    text COLLATE "C" NOT NULL PRIMARY KEY,
        holder     text NOT NULL,
        until      timestamptz NOT NULL
    );
"#,
    ),
    // 4: feature records hold their tasks (a managed run's start, a queued
    // input, a queue stream's records; and stored snapshots): see
    // `log::upgrade`. Rewrites the JSON of the rows that need it.
    Step::Holds,
    // 5: the delivery queue's streams are a kind of their own (`log::stream_id`):
    // each moves from the reserved authority to its caller's, under its
    // stream id, with the id rewritten in its records and snapshot.
    Step::QueueStreams,
    // 6: one row per append (`entries`: the JSON array of its records, the
    // first numbered `first`, the last `seq`), as SQLite stores them: one
    // heap tuple and one index entry per append instead of one per record.
    // Each old record row becomes an entry of one. A read after a cursor
    // inside an entry filters its records (`log::stored::decode_entry`);
    // the task's head is always the end of an entry.
    Step::Sql(
        r#"
    CREATE TABLE {s}.entries (
        task_id    text COLLATE "C" NOT NULL,
        seq        bigint NOT NULL,
        first      bigint NOT NULL,
        epoch      bigint NOT NULL,
        records    text   NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, seq)
    );
    INSERT INTO {s}.entries (task_id, seq, first, epoch, records, created_at)
        SELECT task_id, seq, seq, epoch, '[' || record || ']', created_at
        FROM {s}.records ORDER BY task_id, seq;
    DROP TABLE {s}.records;
"#,
    ),
    // 7: no table changes: a committed batch's NOTIFY is one payload naming
    // every task it wrote (`notice::Batch`), which hosts of schema 6 cannot
    // read: the version keeps them from starting on a schema whose other
    // hosts they would not hear (stop them before the first host of this
    // version starts, as for schema 6).
    Step::Sql("SELECT 1"),
];

/// Migration 5: every row of the old queue authority, moved.
async fn move_queue_streams(tx: &Transaction<'_>, s: &str) -> Result<(), LogError> {
    use crate::log::upgrade::{OLD_QUEUE_AUTHORITY, moved_stream, renamed};
    let streams = tx
        .query(
            &format!("SELECT task_id, snapshot FROM {s}.tasks WHERE authority = $1"),
            &[&OLD_QUEUE_AUTHORITY],
        )
        .await
        .map_err(LogError::backend)?;
    for row in streams {
        let (old, snapshot): (String, String) = (row.get(0), row.get(1));
        let Some((authority, new)) = moved_stream(&old) else {
            return Err(LogError::backend(format!(
                "migration 5: a queue stream id of an unknown form: {old:?}"
            )));
        };
        let records = tx
            .query(
                &format!("SELECT seq, record FROM {s}.records WHERE task_id = $1"),
                &[&old],
            )
            .await
            .map_err(LogError::backend)?;
        for r in records {
            let (seq, record): (i64, String) = (r.get(0), r.get(1));
            let record = renamed(&record, &old, &new)?.unwrap_or(record);
            tx.execute(
                &format!(
                    "UPDATE {s}.records SET task_id = $3, authority = $4, record = $5 \
                     WHERE task_id = $1 AND seq = $2"
                ),
                &[&old, &seq, &new, &authority, &record],
            )
            .await
            .map_err(LogError::backend)?;
        }
        let snapshot = renamed(&snapshot, &old, &new)?.unwrap_or(snapshot);
        tx.execute(
            &format!(
                "UPDATE {s}.tasks SET task_id = $2, authority = $3, snapshot = $4 WHERE task_id = $1"
            ),
            &[&old, &new, &authority, &snapshot],
        )
        .await
        .map_err(LogError::backend)?;
        tx.execute(
            &format!("UPDATE {s}.push_cursors SET task_id = $2, authority = $3 WHERE task_id = $1"),
            &[&old, &new, &authority],
        )
        .await
        .map_err(LogError::backend)?;
        tx.execute(
            &format!("UPDATE {s}.push_leases SET task_id = $2 WHERE task_id = $1"),
            &[&old, &new],
        )
        .await
        .map_err(LogError::backend)?;
    }
    Ok(())
}

/// Migration 4: the records and snapshots that need a hold.
async fn upgrade_holds(tx: &Transaction<'_>, s: &str) -> Result<(), LogError> {
    let records = tx
        .query(
            &format!(
                "SELECT task_id, seq, record FROM {s}.records \
                 WHERE record LIKE '{{\"inputQueued\":%' OR record LIKE '{{\"runStarted\":%' \
                    OR record LIKE '{{\"queue\":%'"
            ),
            &[],
        )
        .await
        .map_err(LogError::backend)?;
    let update = format!("UPDATE {s}.records SET record = $3 WHERE task_id = $1 AND seq = $2");
    for row in records {
        let (task_id, seq, record): (String, i64, String) = (row.get(0), row.get(1), row.get(2));
        if let Some(new) = crate::log::upgrade::record(&record)? {
            tx.execute(&update, &[&task_id, &seq, &new])
                .await
                .map_err(LogError::backend)?;
        }
    }
    let tasks = tx
        .query(
            &format!(
                "SELECT task_id, snapshot FROM {s}.tasks \
                 WHERE snapshot LIKE '%\"queued\"%' OR snapshot LIKE '%scope.program%' \
                    OR snapshot LIKE '%queue.authority%'"
            ),
            &[],
        )
        .await
        .map_err(LogError::backend)?;
    let update = format!("UPDATE {s}.tasks SET snapshot = $2 WHERE task_id = $1");
    for row in tasks {
        let (task_id, snapshot): (String, String) = (row.get(0), row.get(1));
        if let Some(new) = crate::log::upgrade::snapshot(&snapshot)? {
            tx.execute(&update, &[&task_id, &new])
                .await
                .map_err(LogError::backend)?;
        }
    }
    Ok(())
}

/// The schema version this crate writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Creates the schema if needed and applies the missing migrations, in one
/// transaction holding an advisory lock so concurrent hosts migrate once.
pub(crate) async fn migrate(client: &mut Client, schema: &str) -> Result<(), LogError> {
    let s = super::sql::quote(schema);
    let tx = client.transaction().await.map_err(LogError::backend)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("a2a-tower:{schema}")],
    )
    .await
    .map_err(LogError::backend)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {s}; \
         CREATE TABLE IF NOT EXISTS {s}.schema_version (version bigint NOT NULL);"
    ))
    .await
    .map_err(LogError::backend)?;
    let row = tx
        .query_opt(&format!("SELECT version FROM {s}.schema_version"), &[])
        .await
        .map_err(LogError::backend)?;
    let current: i64 = match row {
        Some(r) => r.get(0),
        None => {
            tx.execute(&format!("INSERT INTO {s}.schema_version VALUES (0)"), &[])
                .await
                .map_err(LogError::backend)?;
            0
        }
    };
    if current > VERSION {
        return Err(LogError::backend(format!(
            "task log schema version {current} is newer than this crate's ({VERSION})"
        )));
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        match step {
            Step::Sql(sql) => tx
                .batch_execute(&sql.replace("{s}", &s))
                .await
                .map_err(LogError::backend)?,
            Step::Holds => upgrade_holds(&tx, &s).await?,
            Step::QueueStreams => move_queue_streams(&tx, &s).await?,
        }
        tx.execute(
            &format!("UPDATE {s}.schema_version SET version = $1"),
            &[&(i as i64 + 1)],
        )
        .await
        .map_err(LogError::backend)?;
    }
    tx.commit().await.map_err(LogError::backend)
}
