//! [`PostgresTaskLogBuilder`]: the settings of a [`PostgresTaskLog`] and
//! the connection: the pool, the schema's migration and the listener.

use std::sync::{Arc, Mutex};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::sql::{Sql, quote};
use super::{Inner, PostgresTaskLog, listen, schema};
use crate::log::LogError;
use crate::log::hub::Hub;

/// Builder of [`PostgresTaskLog`].
#[derive(Debug, Clone)]
#[must_use]
pub struct PostgresTaskLogBuilder {
    url: String,
    schema: String,
    pool_size: usize,
}

impl PostgresTaskLogBuilder {
    /// The default settings for the log at `url`.
    pub(super) fn new(url: String) -> Self {
        Self {
            url,
            schema: "a2a".into(),
            pool_size: 16,
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
