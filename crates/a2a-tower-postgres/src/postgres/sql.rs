//! The SQL text of [`PostgresTaskLog`](super::PostgresTaskLog): the
//! statements qualified with its schema, and the NOTIFY an append sends.

/// Quotes an SQL identifier.
pub(super) fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// The statements, qualified with the schema.
#[derive(Debug)]
pub(super) struct Sql {
    pub(super) head: String,
    pub(super) snapshot_only: String,
    /// The entries of a task after a stored snapshot, up to a sequence
    /// number.
    pub(super) replay: String,
    pub(super) snapshot: String,
    /// Creation and its entry in one statement (see `Inner::append_once`).
    pub(super) create_once: String,
    /// The creations of a batch and their entries in one statement over
    /// arrays, one element per task (distinct task ids): answers the ids of
    /// the tasks it created (see `commit::Creates`).
    pub(super) create_many: String,
    /// The NOTIFY of a committed batch: one per payload of the array `$2`
    /// on channel `$1` (see [`super::notice`]), one statement sent alone,
    /// so its own (implicit) transaction, whose commit waits for no WAL
    /// flush (`synchronous_commit` set off for it; see [`notify_sql`]).
    pub(super) notify: String,
    /// A conditional update and its entry in one statement.
    pub(super) update_once: String,
    /// The entries ending after a sequence number, with the task's
    /// authority.
    pub(super) records: String,
    /// A page of entries: those ending after a sequence number (`$2`), up
    /// to the first that reaches `$3`, with the task's authority and head.
    pub(super) records_page: String,
    pub(super) count: String,
    pub(super) page: String,
    pub(super) live: String,
    /// Push delivery progress.
    pub(super) deliveries: super::deliveries::Statements,
    /// Retention: deletes expired terminal tasks with their rows.
    pub(super) purge: String,
    /// Retention: the tasks waiting for their client, for the stale policy.
    pub(super) waiting: String,
    /// Stream compaction: the row locked, its snapshot replaced, the
    /// records before a position deleted.
    pub(super) compact: [String; 3],
}

const FILTER: &str = "authority = $1 AND left(task_id, 1) <> chr(1) AND ($2::text IS NULL OR context_id = $2) \
                      AND ($3::integer IS NULL OR state = $3) AND ($4::bigint IS NULL OR status_ts >= $4)";

impl Sql {
    pub(super) fn new(s: &str) -> Self {
        Self {
            head: format!(
                "SELECT authority, seq, epoch FROM {s}.tasks WHERE task_id = $1 FOR UPDATE"
            ),
            snapshot_only: format!("SELECT snapshot FROM {s}.tasks WHERE task_id = $1"),
            replay: format!(
                "SELECT first, records FROM {s}.entries WHERE task_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq"
            ),
            snapshot: format!(
                "SELECT authority, seq, epoch, snapshot FROM {s}.tasks WHERE task_id = $1"
            ),
            create_once: format!(
                "WITH t AS (INSERT INTO {s}.tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot, host) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (task_id) DO NOTHING RETURNING 1), \
                 r AS (INSERT INTO {s}.entries (task_id, seq, first, epoch, records) \
                 SELECT $1, $7, $11::bigint, $8, $12::text WHERE $12::text IS NOT NULL AND EXISTS (SELECT 1 FROM t)) \
                 SELECT count(*) FROM t"
            ),
            create_many: format!(
                "WITH t AS (INSERT INTO {s}.tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot, host) \
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::boolean[], \
                 $7::bigint[], $8::bigint[], $9::text[], $10::text[]) \
                 ON CONFLICT (task_id) DO NOTHING RETURNING task_id), \
                 r AS (INSERT INTO {s}.entries (task_id, seq, first, epoch, records) \
                 SELECT e.task_id, e.seq, e.first, e.epoch, e.records \
                 FROM unnest($1::text[], $7::bigint[], $11::bigint[], $8::bigint[], $12::text[]) AS e(task_id, seq, first, epoch, records) \
                 WHERE e.records IS NOT NULL AND e.task_id IN (SELECT task_id FROM t)) \
                 SELECT task_id FROM t"
            ),
            notify: "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p \
                     WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL"
                .to_owned(),
            update_once: format!(
                "WITH t AS (UPDATE {s}.tasks SET context_id = $2, state = $3, status_ts = $4, live = $5, seq = $6, \
                 epoch = $7, snapshot = COALESCE($8, snapshot), host = $10, updated_at = now() \
                 WHERE task_id = $1 AND seq = $9 AND epoch <= $7 AND authority = $11 RETURNING 1), \
                 r AS (INSERT INTO {s}.entries (task_id, seq, first, epoch, records) \
                 SELECT $1, $6, $12::bigint, $7, $13::text WHERE $13::text IS NOT NULL AND EXISTS (SELECT 1 FROM t)) \
                 SELECT count(*) FROM t"
            ),
            records: format!(
                "SELECT t.authority, e.first, e.records FROM {s}.tasks t \
                 LEFT JOIN {s}.entries e ON e.task_id = t.task_id AND e.seq > $2 \
                 WHERE t.task_id = $1 ORDER BY e.seq"
            ),
            records_page: format!(
                "SELECT t.authority, t.seq, e.first, e.records FROM {s}.tasks t \
                 LEFT JOIN {s}.entries e ON e.task_id = t.task_id AND e.seq > $2 AND e.seq <= t.seq \
                 AND e.seq <= COALESCE((SELECT min(n.seq) FROM {s}.entries n WHERE n.task_id = $1 AND n.seq >= $3), t.seq) \
                 WHERE t.task_id = $1 ORDER BY e.seq"
            ),
            count: format!("SELECT count(*) FROM {s}.tasks WHERE {FILTER}"),
            page: format!(
                "SELECT snapshot, status_ts, task_id, seq FROM {s}.tasks WHERE {FILTER} \
                 AND ($5::bigint IS NULL OR status_ts < $5 OR (status_ts = $5 AND task_id > $6::text)) \
                 ORDER BY status_ts DESC, task_id ASC LIMIT $7"
            ),
            live: format!(
                "SELECT authority, task_id, context_id, state, seq, epoch, host FROM {s}.tasks \
                 WHERE live AND ($1::text IS NULL OR (authority, task_id) > ($1::text, $2::text)) \
                 ORDER BY authority, task_id LIMIT $3"
            ),
            deliveries: super::deliveries::Statements::new(s),
            purge: super::retention::purge_sql(s),
            waiting: super::retention::waiting_sql(s),
            compact: super::retention::compact_sql(s),
        }
    }
}

/// The NOTIFY of an append to each of `tasks` (task id and the sequence
/// number the append reached), as one simple-protocol
/// batch (one round trip) in its own transaction with `synchronous_commit`
/// off.
///
/// Not inside the append's transaction: PostgreSQL serializes the commits
/// of every transaction that notified (a database-wide lock held until the
/// commit record is flushed), which would make each durable append wait
/// for every other's fsync instead of sharing one. A wake-up needs no
/// durability. The payload is `<instance>.<seq>:<task id>`, dollar-quoted
/// (the channel cannot hold a `$`): a listener of an older version reads
/// `<instance>.<seq>` as the sender's mark and the task id after the first
/// `:`, as before. A task id that cannot be quoted so, or is over NOTIFY's
/// 8000-byte payload limit, sends an empty payload, which wakes every
/// watcher instead.
pub(super) fn notify_sql(channel: &str, instance: &str, tasks: &[(&str, u64)]) -> String {
    use std::fmt::Write;
    const TAG: &str = "$a2a_notify$";
    let each = 40 + 4 * TAG.len() + channel.len() + instance.len();
    let ids: usize = tasks.iter().map(|t| t.0.len() + 21).sum();
    let mut sql = String::with_capacity(60 + each * tasks.len() + ids);
    sql.push_str("BEGIN; SET LOCAL synchronous_commit = off; ");
    for (task_id, seq) in tasks {
        let _ = write!(sql, "SELECT pg_notify({TAG}{channel}{TAG}, {TAG}");
        if !task_id.contains('$') {
            sql.push_str(&super::notice::single(instance, task_id, *seq));
        }
        let _ = write!(sql, "{TAG}); ");
    }
    sql.push_str("COMMIT");
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_marked_and_quoted() {
        let sql = notify_sql("a2a_log_a2a", "i1", &[("t-1", 7)]);
        assert_eq!(
            sql,
            "BEGIN; SET LOCAL synchronous_commit = off; \
             SELECT pg_notify($a2a_notify$a2a_log_a2a$a2a_notify$, $a2a_notify$i1.7:t-1$a2a_notify$); COMMIT"
        );
        // What cannot be dollar-quoted wakes everyone instead.
        for odd in ["t$a2a_notify$; DROP TABLE x; --", "t\0", &"x".repeat(7000)] {
            assert!(
                notify_sql("c", "i1", &[(odd, 1)]).contains("$a2a_notify$$a2a_notify$)"),
                "{odd:?}"
            );
        }
        // One batch for several tasks.
        assert_eq!(
            notify_sql("c", "i1", &[("a", 1), ("b", 12)]),
            "BEGIN; SET LOCAL synchronous_commit = off; \
             SELECT pg_notify($a2a_notify$c$a2a_notify$, $a2a_notify$i1.1:a$a2a_notify$); \
             SELECT pg_notify($a2a_notify$c$a2a_notify$, $a2a_notify$i1.12:b$a2a_notify$); COMMIT"
        );
    }
}
