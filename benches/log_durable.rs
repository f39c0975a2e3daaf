//! Append throughput of the durable task logs.
//!
//! `cargo bench --bench log_durable [--features postgres]`
//!
//! W concurrent writers each drive their own task through N conditional
//! appends (one record each, waiting for each commit before the next, as the
//! engine does). SQLite runs with group commit (`max_batch` 256) and without
//! (`max_batch` 1), with both `synchronous` settings; PostgreSQL (feature
//! `postgres`, `A2A_TEST_POSTGRES_URL` or the local default) runs with its
//! pool. Prints appends per second and, for SQLite, the mean batch size.
//!
//! First, the shape of a SendMessage to a text agent, without HTTP, under
//! both `synchronous` settings: C clients each run tasks one after another,
//! each task an admission append (Created, the user's message,
//! ExecutionStarted) and, after its commit, a completion append (WORKING, one
//! artifact chunk, COMPLETED). Prints tasks per second, bytes written by the
//! process per task (Linux `/proc/self/io`), and the writer thread's CPU time
//! per task. `DURABLE_CLIENTS` (default 32), `DURABLE_TASKS` (default 20 000;
//! 0 skips it), `DURABLE_ONLY_ECHO=1` (only this part).

use std::sync::Arc;
use std::time::Instant;

use a2a_tower::log::{AppendRequest, Record, SqliteTaskLog, Synchronous, TaskBackend, TaskLog};
use a2a_tower::types::{Artifact, Message, Part, TaskState, TaskStatus};

const WRITERS: usize = 64;
const APPENDS: u64 = 40;

async fn drive(log: Arc<dyn TaskBackend>, tag: &str) -> f64 {
    let start = Instant::now();
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let log = log.clone();
        let t = format!("{tag}-{w}");
        handles.push(tokio::spawn(async move {
            let mut seq = log
                .append(AppendRequest::create(
                    "bench",
                    &t,
                    vec![Record::created(&t, "c")],
                ))
                .await
                .expect("create")
                .seq;
            for i in 0..APPENDS {
                let message = Message::user(format!("m{i}"), "some text of a message");
                let req = AppendRequest::new(
                    "bench",
                    &t,
                    seq,
                    1,
                    vec![Record::MessageAdmitted { message }],
                );
                seq = log.append(req).await.expect("append").seq;
            }
        }));
    }
    for h in handles {
        h.await.expect("writer");
    }
    let total = WRITERS as f64 * (APPENDS as f64 + 1.0);
    total / start.elapsed().as_secs_f64()
}

async fn sqlite(sync: Synchronous, max_batch: usize) {
    let dir = std::env::temp_dir().join(format!("a2a-bench-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = SqliteTaskLog::builder(dir.join("tasks.db"))
        .synchronous(sync)
        .max_batch(max_batch)
        .open()
        .expect("open");
    let rate = drive(Arc::new(log.clone()), "t").await;
    let stats = log.stats();
    println!(
        "sqlite synchronous={sync:?} max_batch={max_batch:>3}: {rate:>9.0} appends/s, mean batch {:.1}",
        stats.appends as f64 / stats.transactions.max(1) as f64
    );
    drop(log);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One SendMessage-shaped task: admission, then completion.
async fn echo_task(log: &dyn TaskBackend, host: &str) {
    let task = uuid::Uuid::now_v7().to_string();
    let context = uuid::Uuid::now_v7().to_string();
    let mut message = Message::user(uuid::Uuid::new_v4().to_string(), "hello world");
    message.task_id.clone_from(&task);
    message.context_id.clone_from(&context);
    let admitted = log
        .append(AppendRequest::create(
            "public",
            &task,
            vec![
                Record::created(&task, &context),
                Record::MessageAdmitted { message },
                Record::ExecutionStarted { host: host.into() },
            ],
        ))
        .await
        .expect("admission");
    let artifact = Artifact {
        artifact_id: uuid::Uuid::new_v4().to_string(),
        parts: vec![Part::text("hello world")],
        ..Artifact::default()
    };
    log.append(AppendRequest::new(
        "public",
        &task,
        admitted.seq,
        1,
        vec![
            Record::status(TaskStatus::new(TaskState::Working)),
            Record::ArtifactChunk {
                artifact,
                append: false,
                last_chunk: true,
            },
            Record::status(TaskStatus::new(TaskState::Completed)),
        ],
    ))
    .await
    .expect("completion");
}

/// Bytes this process has written so far (`wchar`; 0 off Linux).
fn written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("wchar: ")
                    .and_then(|v| v.trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

/// CPU time (user + system) of the thread named `name`, in clock ticks.
fn thread_ticks(name: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or(vec![], |(_, r)| r.split_whitespace().collect());
            fields
                .get(11..13)
                .map_or(0, |f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
        })
        .sum()
}

async fn echo_pattern(sync: Synchronous) {
    let clients = std::env::var("DURABLE_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32usize);
    let tasks = std::env::var("DURABLE_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000usize);
    if tasks == 0 {
        return;
    }
    let dir = std::env::temp_dir().join(format!("a2a-bench-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = SqliteTaskLog::builder(dir.join("tasks.db"))
        .synchronous(sync)
        .open()
        .expect("open");
    let shared: Arc<dyn TaskBackend> = Arc::new(log.clone());
    let (bytes, ticks) = (written(), thread_ticks("a2a-sqlite-writ"));
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let log = shared.clone();
            let n = tasks / clients + usize::from(c < tasks % clients);
            tokio::spawn(async move {
                for _ in 0..n {
                    echo_task(&*log, "bench-host").await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("client");
    }
    let secs = start.elapsed().as_secs_f64();
    let stats = log.stats();
    println!(
        "sqlite synchronous={sync:?} echo-shaped tasks, {clients} clients: {:>7.0} tasks/s, {:>6.1} KiB written per task, writer thread {:>5.1} us CPU per task, mean batch {:.1}",
        tasks as f64 / secs,
        (written() - bytes) as f64 / tasks as f64 / 1024.0,
        (thread_ticks("a2a-sqlite-writ") - ticks) as f64 * 10_000.0 / tasks as f64,
        stats.appends as f64 / stats.transactions.max(1) as f64
    );
    drop((shared, log));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
async fn postgres() {
    use a2a_tower::log::PostgresTaskLog;
    let url = std::env::var("A2A_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("a2a_bench_{}", uuid::Uuid::new_v4().simple());
    let log = match PostgresTaskLog::builder(&url)
        .schema(&schema)
        .pool_size(16)
        .connect()
        .await
    {
        Ok(log) => log,
        Err(e) => {
            println!("postgres: not reachable at {url} ({e}); skipped");
            return;
        }
    };
    let rate = drive(Arc::new(log.clone()), "t").await;
    println!("postgres pool_size=16: {rate:>9.0} appends/s");
    drop(log);
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("cleanup connection");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .expect("drop bench schema");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        for sync in [Synchronous::Full, Synchronous::Normal] {
            echo_pattern(sync).await;
        }
        if std::env::var_os("DURABLE_ONLY_ECHO").is_some() {
            return;
        }
        println!("{WRITERS} writers x {} appends each", APPENDS + 1);
        for sync in [Synchronous::Full, Synchronous::Normal] {
            for max_batch in [1, 256] {
                sqlite(sync, max_batch).await;
            }
        }
        #[cfg(feature = "postgres")]
        postgres().await;
    });
}
