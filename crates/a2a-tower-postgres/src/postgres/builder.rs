//! [`PostgresTaskLogBuilder`]: the settings of a [`PostgresTaskLog`],
//! checked before anything is opened, then the connection: the pool, the
//! schema's migration and the committer (whose connection listens).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::commit::{Committer, NOTIFY_INTERVAL};
use super::sql::{Sql, quote};
use super::{Inner, PostgresTaskLog, schema};
use crate::ConfigError;
use crate::log::LogError;
use crate::log::hub::Hub;

/// Builder of [`PostgresTaskLog`].
#[derive(Debug, Clone)]
#[must_use]
pub struct PostgresTaskLogBuilder {
    url: String,
    schema: String,
    pool_size: usize,
    notify_interval: Duration,
}

impl PostgresTaskLogBuilder {
    /// The default settings for the log at `url`.
    pub(super) fn new(url: String) -> Self {
        Self {
            url,
            schema: "a2a".into(),
            pool_size: 16,
            notify_interval: NOTIFY_INTERVAL,
        }
    }

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

    /// The least time between two notifications this log sends the other
    /// hosts of its schema (default 2 ms). A notification names every task
    /// committed since the last one; the first after a quiet interval is
    /// sent right after its commit, so only a host committing more often
    /// than this holds its announcements back, by at most this long.
    /// Longer: fewer notifications for PostgreSQL to commit and every
    /// host's connection to read, later wake-ups for the other hosts'
    /// watchers; zero: one notification per committed batch. This log's
    /// own watchers are woken at commit either way.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_tower_postgres::PostgresTaskLog;
    ///
    /// let builder = PostgresTaskLog::builder("host=127.0.0.1 user=postgres dbname=test")
    ///     .notify_interval(Duration::from_millis(5));
    /// # drop(builder);
    /// ```
    pub fn notify_interval(mut self, interval: Duration) -> Self {
        self.notify_interval = interval;
        self
    }

    /// Checks the settings and parses the URL, before anything is opened.
    fn check(&self) -> Result<tokio_postgres::Config, ConfigError> {
        if self.schema.is_empty() || self.schema.len() > 50 || self.schema.contains(['$', '\0']) {
            return Err(ConfigError::new(
                "postgres task log schema must be 1..=50 bytes without '$' or NUL",
            ));
        }
        if self.pool_size == 0 {
            return Err(ConfigError::new(
                "postgres task log pool_size must be positive",
            ));
        }
        // The URL itself is left out of the message: it may hold a password.
        let config: tokio_postgres::Config =
            self.url.parse().map_err(|e: tokio_postgres::Error| {
                let why =
                    std::error::Error::source(&e).map_or_else(|| e.to_string(), |c| c.to_string());
                ConfigError::new(format!(
                    "postgres task log url must be a valid connection string: {why}"
                ))
            })?;
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(ConfigError::new("postgres task log url must name a host"));
        }
        Ok(config)
    }

    /// Connects, migrates the schema and starts listening.
    ///
    /// A bad setting (an empty or odd schema name, a zero pool size, a
    /// malformed URL) fails with [`LogErrorKind::Config`](crate::log::LogErrorKind::Config)
    /// before any connection is made; a failure to connect or migrate with
    /// [`LogErrorKind::Backend`](crate::log::LogErrorKind::Backend).
    pub async fn connect(self) -> Result<PostgresTaskLog, LogError> {
        let config = self.check().map_err(LogError::config)?;
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
        // Marks this log's notifications, which its listener then skips (it
        // woke its own watchers at commit).
        let instance = uuid::Uuid::new_v4().simple().to_string();
        let sql = Arc::new(Sql::new(&quote(&self.schema)));
        // Its connection listens too: open once this returns.
        let committer = Committer::start(
            config,
            &self.schema,
            sql.clone(),
            channel.clone(),
            instance.clone(),
            hub.clone(),
            self.notify_interval,
        )
        .await?;
        Ok(PostgresTaskLog {
            inner: Arc::new(Inner {
                sql,
                committer,
                pool,
                channel,
                instance,
                hub,
                cache: Mutex::default(),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::LogErrorKind;

    /// Nothing listens there: a connection attempt fails with `Backend`.
    const UNREACHABLE: &str = "postgres://postgres@127.0.0.1:1/none";

    #[tokio::test]
    async fn bad_settings_are_config_errors_before_any_connection() {
        let cases = [
            (
                PostgresTaskLog::builder(UNREACHABLE).schema(""),
                "postgres task log schema must be 1..=50 bytes without '$' or NUL",
            ),
            (
                PostgresTaskLog::builder(UNREACHABLE).schema("a$b"),
                "postgres task log schema must be 1..=50 bytes without '$' or NUL",
            ),
            (
                PostgresTaskLog::builder(UNREACHABLE).schema("s".repeat(51)),
                "postgres task log schema must be 1..=50 bytes without '$' or NUL",
            ),
            (
                PostgresTaskLog::builder(UNREACHABLE).pool_size(0),
                "postgres task log pool_size must be positive",
            ),
            (
                PostgresTaskLog::builder("postgres://postgres@127.0.0.1:1/none?connect_timeout=x"),
                "postgres task log url must be a valid connection string: invalid value for option `connect_timeout`",
            ),
            (
                PostgresTaskLog::builder("postgres:///none"),
                "postgres task log url must name a host",
            ),
        ];
        for (builder, message) in cases {
            let err = builder.connect().await.unwrap_err();
            assert_eq!(err.kind(), LogErrorKind::Config, "{message}");
            let config = err.config_error().expect("a ConfigError");
            assert!(config.message().starts_with(message), "{config}");
        }
    }

    #[tokio::test]
    async fn a_server_that_cannot_be_reached_is_a_backend_error() {
        let err = PostgresTaskLog::builder(UNREACHABLE)
            .connect()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Backend);
        assert!(err.config_error().is_none());
    }
}
