//! The PostgreSQL the tests need: its URL, a fresh schema per test,
//! dropped afterwards even when the test fails, and a log on it.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

/// A log on `schema` of the test database; fails the test when PostgreSQL
/// is unreachable.
pub(crate) async fn connect(schema: &str) -> a2a_tower::log::PostgresTaskLog {
    open(builder(schema)).await
}

/// The settings of a log on `schema` of the test database, for a test to
/// change before [`open`].
pub(crate) fn builder(schema: &str) -> a2a_tower::log::PostgresTaskLogBuilder {
    a2a_tower::log::PostgresTaskLog::builder(url())
        .schema(schema)
        .pool_size(8)
}

/// Opens the log `builder` describes; fails the test when PostgreSQL is
/// unreachable.
pub(crate) async fn open(
    builder: a2a_tower::log::PostgresTaskLogBuilder,
) -> a2a_tower::log::PostgresTaskLog {
    builder
        .connect()
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} is required for this test: {e:?}", url()))
}

/// `A2A_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`.
pub(crate) fn url() -> String {
    std::env::var("A2A_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// Drops `schema`. A test's hosts may still be winding down (a committer or
/// an outbox worker finishing a statement on the schema's tables), and
/// PostgreSQL can then pick the DROP as a deadlock victim: the drop is
/// retried until the stragglers have let go.
pub(crate) async fn drop_schema(schema: &str) -> Result<(), tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(conn);
    let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    let mut tries = 0;
    let out = loop {
        match client.batch_execute(&sql).await {
            Err(e)
                if tries < 20
                    && e.code()
                        == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED) =>
            {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            out => break out,
        }
    };
    drop(client);
    let _ = driver.await;
    out
}

/// Runs `body` with a fresh schema name (`a2a_test_<uuid>`), then drops the
/// schema whatever happened, then re-raises a failure (the body's first).
pub(crate) async fn with_schema<Fut: Future<Output = ()>>(body: impl FnOnce(String) -> Fut) {
    let schema = format!("a2a_test_{}", uuid::Uuid::new_v4().simple());
    let out = AssertUnwindSafe(body(schema.clone())).catch_unwind().await;
    let cleaned = drop_schema(&schema).await;
    if let Err(panic) = out {
        std::panic::resume_unwind(panic);
    }
    cleaned.expect("drop the test schema");
}
