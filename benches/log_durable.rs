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

use std::sync::Arc;
use std::time::Instant;

use a2a_tower::log::{AppendRequest, Record, SqliteTaskLog, Synchronous, TaskLog};
use a2a_tower::types::Message;

const WRITERS: usize = 64;
const APPENDS: u64 = 40;

async fn drive(log: Arc<dyn TaskLog>, tag: &str) -> f64 {
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
