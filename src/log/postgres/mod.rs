//! [`PostgresTaskLog`]: a [`TaskLog`] in PostgreSQL, shared by several hosts.

mod listen;
mod schema;

use std::sync::{Arc, Mutex};

use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

use super::hub::{self, Fetch, Hub};
use super::stored::{
    Current, Plan, ProjectionCache, clamp_nanos, decode_projection, decode_record, decode_task,
    from_i64, with_heads,
};
use super::{
    AppendRequest, Appended, ListPage, ListQuery, LiveTask, LogError, LogErrorKind, LogFuture,
    PageCursor, Sequenced, Snapshot, TaskLog, Watch,
};
use crate::types::TaskState;

/// Quotes an SQL identifier.
pub(crate) fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Builder of [`PostgresTaskLog`].
#[derive(Debug, Clone)]
#[must_use]
pub struct PostgresTaskLogBuilder {
    url: String,
    schema: String,
    pool_size: usize,
}

impl PostgresTaskLogBuilder {
    /// The schema holding the tables (default `a2a`), created if missing.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// At most this many pooled connections (default 16), plus one for
    /// LISTEN.
    pub fn pool_size(mut self, n: usize) -> Self {
        self.pool_size = n;
        self
    }

    /// Connects, migrates the schema and starts listening.
    pub async fn connect(self) -> Result<PostgresTaskLog, LogError> {
        if self.schema.is_empty()
            || self.schema.len() > 50
            || self.schema.contains(['$', '\0'])
            || self.pool_size == 0
        {
            return Err(LogError::backend(crate::ConfigError::new(
                "postgres task log: schema must be 1..=50 bytes without '$' or NUL, and pool_size positive",
            )));
        }
        let config: tokio_postgres::Config = self.url.parse().map_err(LogError::backend)?;
        let mgr = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(mgr)
            .max_size(self.pool_size)
            .build()
            .map_err(LogError::backend)?;
        {
            let mut client = pool.get().await.map_err(LogError::backend)?;
            schema::migrate(&mut client, &self.schema).await?;
        }
        let channel = format!("a2a_log_{}", self.schema);
        let hub = Arc::new(Hub::default());
        let (ready, is_ready) = tokio::sync::oneshot::channel();
        // Marks this log's notifications, which its listener then skips (it
        // woke its own watchers at commit).
        let instance = uuid::Uuid::new_v4().simple().to_string();
        let listener = tokio::spawn(listen::run(
            config,
            channel.clone(),
            instance.clone(),
            hub.clone(),
            ready,
        ));
        is_ready
            .await
            .map_err(|_| LogError::backend("postgres listener stopped"))??;
        Ok(PostgresTaskLog {
            inner: Arc::new(Inner {
                sql: Sql::new(&quote(&self.schema)),
                pool,
                channel,
                instance,
                hub,
                cache: Mutex::default(),
                listener,
            }),
        })
    }
}

/// A [`TaskLog`] in PostgreSQL, shared by several hosts.
///
/// - **Conditional appends in the database**: an append after the sequence
///   number this log last committed for the task (or a creation) is one
///   statement that updates the row and inserts the records only if the row
///   is still at that sequence number, of the same authority, with no newer
///   epoch (creation: `INSERT … ON CONFLICT DO NOTHING`); any other append,
///   or one whose condition failed, is a transaction that locks the row
///   (`SELECT … FOR UPDATE`), checks the epoch and sequence number against
///   it and writes. Records are keyed `(task_id, seq)`. Two hosts can never
///   both commit the same sequence number, and a host with an older epoch is
///   fenced.
/// - **Watches across hosts**: after its commit, each append wakes this
///   log's own watchers and sends `NOTIFY` with the task id, in a transaction
///   of its own without a WAL flush (inside the append, PostgreSQL would
///   serialize every notifying commit behind the previous one's fsync); one
///   dedicated connection per log LISTENs and wakes the watchers of other
///   hosts' appends. Woken watchers read the new records back by sequence
///   number, so a record is never missed between two notifications.
/// - **Readers** use pooled connections (`deadpool-postgres`) and never take
///   an epoch.
/// - **Schema**: created and migrated by the crate in its own schema
///   (default `a2a`), with a `schema_version` table.
///
/// ```no_run
/// use a2a_tower::log::{PostgresTaskLog, TaskLog};
/// # async fn f() -> Result<(), a2a_tower::log::LogError> {
/// let log = PostgresTaskLog::builder("postgres://postgres@127.0.0.1:5432/test")
///    .schema("a2a")
///    .pool_size(16)
///    .connect()
///    .await?;
/// assert!(log.live_tasks(None, 100).await?.is_empty());
/// # Ok(()) }
/// ```
///
/// Cloning shares the pool and the listener; the listener stops with the
/// last clone.
#[derive(Debug, Clone)]
pub struct PostgresTaskLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sql: Sql,
    pool: Pool,
    channel: String,
    /// This log's mark on its notifications (`<instance>:<task id>`).
    instance: String,
    hub: Arc<Hub>,
    cache: Mutex<ProjectionCache>,
    listener: JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The statements, qualified with the schema.
#[derive(Debug)]
struct Sql {
    head: String,
    snapshot_only: String,
    snapshot: String,
    /// Creation and its records in one statement (see `Inner::append_once`).
    create_once: String,
    /// A conditional update and its records in one statement.
    update_once: String,
    records: String,
    count: String,
    page: String,
    live: String,
}

const FILTER: &str = "authority = $1 AND ($2::text IS NULL OR context_id = $2) \
                      AND ($3::integer IS NULL OR state = $3) AND ($4::bigint IS NULL OR status_ts >= $4)";

impl Sql {
    fn new(s: &str) -> Self {
        Self {
            head: format!(
                "SELECT authority, seq, epoch FROM {s}.tasks WHERE task_id = $1 FOR UPDATE"
            ),
            snapshot_only: format!("SELECT snapshot FROM {s}.tasks WHERE task_id = $1"),
            snapshot: format!(
                "SELECT authority, seq, epoch, snapshot FROM {s}.tasks WHERE task_id = $1"
            ),
            create_once: format!(
                "WITH t AS (INSERT INTO {s}.tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot, host) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (task_id) DO NOTHING RETURNING 1), \
                 r AS (INSERT INTO {s}.records (task_id, seq, authority, epoch, record) \
                 SELECT $1, u.seq, $2, $8, u.record FROM unnest($11::bigint[], $12::text[]) AS u(seq, record) \
                 WHERE EXISTS (SELECT 1 FROM t)) \
                 SELECT count(*) FROM t"
            ),
            update_once: format!(
                "WITH t AS (UPDATE {s}.tasks SET context_id = $2, state = $3, status_ts = $4, live = $5, seq = $6, \
                 epoch = $7, snapshot = $8, host = $10, updated_at = now() \
                 WHERE task_id = $1 AND seq = $9 AND epoch <= $7 AND authority = $11 RETURNING 1), \
                 r AS (INSERT INTO {s}.records (task_id, seq, authority, epoch, record) \
                 SELECT $1, u.seq, $11, $7, u.record FROM unnest($12::bigint[], $13::text[]) AS u(seq, record) \
                 WHERE EXISTS (SELECT 1 FROM t)) \
                 SELECT count(*) FROM t"
            ),
            records: format!(
                "SELECT t.authority, r.seq, r.record FROM {s}.tasks t \
                 LEFT JOIN {s}.records r ON r.task_id = t.task_id AND r.seq > $2 \
                 WHERE t.task_id = $1 ORDER BY r.seq"
            ),
            count: format!("SELECT count(*) FROM {s}.tasks WHERE {FILTER}"),
            page: format!(
                "SELECT snapshot, status_ts, task_id FROM {s}.tasks WHERE {FILTER} \
                 AND ($5::bigint IS NULL OR status_ts < $5 OR (status_ts = $5 AND task_id > $6::text)) \
                 ORDER BY status_ts DESC, task_id ASC LIMIT $7"
            ),
            live: format!(
                "SELECT authority, task_id, context_id, state, seq, epoch, host FROM {s}.tasks \
                 WHERE live AND ($1::text IS NULL OR (authority, task_id) > ($1::text, $2::text)) \
                 ORDER BY authority, task_id LIMIT $3"
            ),
        }
    }
}

/// The NOTIFY of an append to `task_id`, as one simple-protocol batch (one
/// round trip) in its own transaction with `synchronous_commit` off.
///
/// Not inside the append's transaction: PostgreSQL serializes the commits
/// of every transaction that notified (a database-wide lock held until the
/// commit record is flushed), which would make each durable append wait
/// for every other's fsync instead of sharing one. A wake-up needs no
/// durability. The payload is `<instance>:<task id>`, dollar-quoted (the
/// channel cannot hold a `$`); a task id that cannot be quoted so, or is
/// over NOTIFY's 8000-byte payload limit, sends an empty payload, which
/// wakes every watcher instead.
fn notify_sql(channel: &str, instance: &str, task_id: &str) -> String {
    const TAG: &str = "$a2a_notify$";
    let payload = if task_id.len() < 7000 && !task_id.contains(['$', '\0']) {
        format!("{instance}:{task_id}")
    } else {
        String::new()
    };
    format!(
        "BEGIN; SET LOCAL synchronous_commit = off; \
         SELECT pg_notify({TAG}{channel}{TAG}, {TAG}{payload}{TAG}); COMMIT"
    )
}

fn db(e: tokio_postgres::Error) -> LogError {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        return LogError::new(LogErrorKind::Conflict);
    }
    LogError::backend(e)
}

fn not_found() -> LogError {
    LogError::new(LogErrorKind::NotFound)
}

impl PostgresTaskLog {
    /// A builder for the log at `url` (`postgres://user@host:port/db`).
    pub fn builder(url: impl Into<String>) -> PostgresTaskLogBuilder {
        PostgresTaskLogBuilder {
            url: url.into(),
            schema: "a2a".into(),
            pool_size: 16,
        }
    }

    /// The schema version this crate writes.
    pub const SCHEMA_VERSION: i64 = schema::VERSION;
}

impl Inner {
    fn cache(&self) -> std::sync::MutexGuard<'_, ProjectionCache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn append(&self, req: AppendRequest) -> Result<Appended, LogError> {
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        let out = match self.append_once(&client, &req).await? {
            Some(out) => out,
            None => self.append_locked(&mut client, &req).await?,
        };
        // Watchers in this process are woken at once; other hosts' by a
        // NOTIFY sent after the commit (see [`notify_sql`]).
        self.hub.notify(&req.task_id);
        let notify = notify_sql(&self.channel, &self.instance, &req.task_id);
        if let Err(e) = client.batch_execute(&notify).await {
            // The append is committed: say so. Remote watchers catch up at
            // the task's next notification (or their listener's reconnect).
            // A batch that failed after its BEGIN leaves the pooled session
            // in an aborted transaction: end it.
            let _ = client.batch_execute("ROLLBACK").await;
            tracing::warn!(target: "a2a_tower::log", kind = %e.code().map_or("io", |c| c.code()), "postgres notify failed");
        }
        Ok(out)
    }

    /// The append as one statement (one round trip, its own transaction),
    /// when it can be planned without reading the row: a creation, or an
    /// append after the sequence number this log last committed for the task
    /// (its projection is in the cache). The statement writes only if the
    /// row is still at that sequence number, of the same authority, with no
    /// newer epoch; `Ok(None)` when it was not (or could not be planned so):
    /// [`append_locked`](Self::append_locked) then reads the row and gives
    /// the exact answer.
    async fn append_once(
        &self,
        client: &deadpool_postgres::Client,
        req: &AppendRequest,
    ) -> Result<Option<Appended>, LogError> {
        let (current, base) = if req.expected == 0 {
            (None, crate::log::Projection::default())
        } else {
            let Some(base) = self.cache().take(&req.task_id, req.expected) else {
                return Ok(None);
            };
            // Stands for the row the statement checks.
            let row = Current {
                authority: req.authority.clone(),
                seq: req.expected,
                epoch: req.epoch,
            };
            (Some(row), base)
        };
        let plan = Plan::new(req, current, |_| Ok(base))?;
        let written = self.write_planned(client, req, &plan).await?;
        match (written, plan.create) {
            (1, _) => {
                let out = plan.appended();
                self.cache().put(&req.task_id, plan.seq, plan.projection);
                Ok(Some(out))
            }
            // The task exists already (any authority): as the locked path.
            (_, true) => Err(LogError::new(LogErrorKind::Conflict)),
            _ => Ok(None),
        }
    }

    /// Writes a planned append in one statement: the task row (created, or
    /// updated only if still at `req.expected`, of `req.authority`, with no
    /// newer epoch) and the records, all or nothing. Returns the number of
    /// task rows written: 0 when the condition did not hold.
    async fn write_planned(
        &self,
        client: &impl GenericClient,
        req: &AppendRequest,
        plan: &Plan,
    ) -> Result<i64, LogError> {
        let (seq, epoch) = (plan.seq as i64, plan.epoch as i64);
        let row = &plan.row;
        let snapshot = plan.snapshot_json()?;
        let (seqs, jsons) = plan.record_rows(req)?;
        let row = if plan.create {
            let st = client
                .prepare_cached(&self.sql.create_once)
                .await
                .map_err(db)?;
            client
                .query_one(
                    &st,
                    &[
                        &req.task_id,
                        &req.authority,
                        &row.context_id,
                        &row.state,
                        &row.status_ts,
                        &row.live,
                        &seq,
                        &epoch,
                        &snapshot,
                        &row.host,
                        &seqs,
                        &jsons,
                    ],
                )
                .await
        } else {
            let st = client
                .prepare_cached(&self.sql.update_once)
                .await
                .map_err(db)?;
            let expected = req.expected as i64;
            client
                .query_one(
                    &st,
                    &[
                        &req.task_id,
                        &row.context_id,
                        &row.state,
                        &row.status_ts,
                        &row.live,
                        &seq,
                        &epoch,
                        &snapshot,
                        &expected,
                        &row.host,
                        &req.authority,
                        &seqs,
                        &jsons,
                    ],
                )
                .await
        };
        Ok(row.map_err(db)?.get(0))
    }

    /// The append in a transaction that locks the row first: reads it,
    /// checks and plans against it, writes.
    async fn append_locked(
        &self,
        client: &mut deadpool_postgres::Client,
        req: &AppendRequest,
    ) -> Result<Appended, LogError> {
        let tx = client.transaction().await.map_err(db)?;
        let head = tx.prepare_cached(&self.sql.head).await.map_err(db)?;
        let current = match tx.query_opt(&head, &[&req.task_id]).await.map_err(db)? {
            Some(r) => Some(Current {
                authority: r.get(0),
                seq: from_i64(r.get(1))?,
                epoch: from_i64(r.get(2))?,
            }),
            None => None,
        };
        let cached = current
            .as_ref()
            .and_then(|c| self.cache().take(&req.task_id, c.seq));
        let stored = match (&current, cached) {
            (_, Some(p)) => Some(Ok(p)),
            (Some(c), None) if c.authority == req.authority && req.expected == c.seq => {
                let st = tx
                    .prepare_cached(&self.sql.snapshot_only)
                    .await
                    .map_err(db)?;
                let row = tx.query_one(&st, &[&req.task_id]).await.map_err(db)?;
                Some(decode_projection(row.get(0)))
            }
            _ => None,
        };
        let plan = Plan::new(req, current, |_| {
            stored.unwrap_or_else(|| Err(LogError::backend("task row vanished")))
        })?;
        if self.write_planned(&tx, req, &plan).await? != 1 {
            // Another host created the task first (or the row moved on).
            return Err(LogError::new(LogErrorKind::Conflict));
        }
        tx.commit().await.map_err(db)?;
        let out = plan.appended();
        self.cache().put(&req.task_id, plan.seq, plan.projection);
        Ok(out)
    }

    async fn snapshot(&self, authority: &str, task_id: &str) -> Result<Snapshot, LogError> {
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.sql.snapshot)
            .await
            .map_err(db)?;
        let row = client
            .query_opt(&st, &[&task_id])
            .await
            .map_err(db)?
            .filter(|r| r.get::<_, &str>(0) == authority)
            .ok_or_else(not_found)?;
        Ok(Snapshot::new(
            from_i64(row.get(1))?,
            from_i64(row.get(2))?,
            decode_projection(row.get(3))?,
        ))
    }

    async fn read(
        &self,
        authority: &str,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<Sequenced>, LogError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client.prepare_cached(&self.sql.records).await.map_err(db)?;
        let rows = client.query(&st, &[&task_id, &after]).await.map_err(db)?;
        if rows.is_empty() || rows.iter().any(|r| r.get::<_, &str>(0) != authority) {
            return Err(not_found());
        }
        rows.iter()
            .filter_map(|r| {
                r.get::<_, Option<i64>>(1)
                    .map(|seq| decode_record(seq, r.get(2)))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(with_heads)
    }

    async fn list(&self, authority: &str, q: &ListQuery) -> Result<ListPage, LogError> {
        let size = q.page_size.max(1);
        let state = q.state.map(TaskState::number);
        let after_ts = q.status_after.map(|t| clamp_nanos(t.unix_nanos()));
        let cur_ts = q.after.as_ref().map(|c| clamp_nanos(c.timestamp_nanos));
        let cur_id = q.after.as_ref().map(|c| c.task_id.as_str());
        let limit = i64::try_from(size + 1).unwrap_or(i64::MAX);
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        // One snapshot for the count and the page.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(db)?;
        let count = tx.prepare_cached(&self.sql.count).await.map_err(db)?;
        let total: i64 = tx
            .query_one(&count, &[&authority, &q.context_id, &state, &after_ts])
            .await
            .map_err(db)?
            .get(0);
        let page = tx.prepare_cached(&self.sql.page).await.map_err(db)?;
        let rows = tx
            .query(
                &page,
                &[
                    &authority,
                    &q.context_id,
                    &state,
                    &after_ts,
                    &cur_ts,
                    &cur_id,
                    &limit,
                ],
            )
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        let more = rows.len() > size;
        let rows = &rows[..rows.len().min(size)];
        let next = if more {
            rows.last().map(|r| PageCursor {
                timestamp_nanos: i128::from(r.get::<_, i64>(1)),
                task_id: r.get(2),
            })
        } else {
            None
        };
        let tasks = rows
            .iter()
            .map(|r| decode_task(r.get(0)))
            .collect::<Result<_, _>>()?;
        Ok(ListPage {
            tasks,
            next,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    async fn live(
        &self,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<LiveTask>, LogError> {
        let (a, t) = after.unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client.prepare_cached(&self.sql.live).await.map_err(db)?;
        let rows = client.query(&st, &[&a, &t, &limit]).await.map_err(db)?;
        rows.iter()
            .map(|r| {
                Ok(LiveTask {
                    authority: r.get(0),
                    task_id: r.get(1),
                    context_id: r.get(2),
                    state: TaskState::from_number(i64::from(r.get::<_, i32>(3)))
                        .unwrap_or_default(),
                    seq: from_i64(r.get(4))?,
                    epoch: from_i64(r.get(5))?,
                    host: r.get(6),
                })
            })
            .collect()
    }
}

impl TaskLog for PostgresTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        Box::pin(self.inner.append(request))
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        Box::pin(self.inner.snapshot(authority, task_id))
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        Box::pin(self.inner.read(authority, task_id, after))
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        Box::pin(async move {
            // Subscribe first: a commit after this point wakes the stream.
            let sub = self.inner.hub.subscribe(task_id);
            let snapshot = self.inner.snapshot(authority, task_id).await?;
            let inner = self.inner.clone();
            let (a, t): (Arc<str>, Arc<str>) = (authority.into(), task_id.into());
            let fetch: Fetch = Arc::new(move |after| {
                let (inner, a, t) = (inner.clone(), a.clone(), t.clone());
                Box::pin(async move { inner.read(&a, &t, after).await })
            });
            hub::watch(sub, snapshot, after, fetch).await
        })
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        Box::pin(self.inner.list(authority, query))
    }

    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        Box::pin(self.inner.live(after, limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_marked_and_quoted() {
        let sql = notify_sql("a2a_log_a2a", "i1", "t-1");
        assert_eq!(
            sql,
            "BEGIN; SET LOCAL synchronous_commit = off; \
             SELECT pg_notify($a2a_notify$a2a_log_a2a$a2a_notify$, $a2a_notify$i1:t-1$a2a_notify$); COMMIT"
        );
        // What cannot be dollar-quoted wakes everyone instead.
        for odd in ["t$a2a_notify$; DROP TABLE x; --", "t\0", &"x".repeat(7000)] {
            assert!(
                notify_sql("c", "i1", odd).contains("$a2a_notify$$a2a_notify$)"),
                "{odd:?}"
            );
        }
    }
}
