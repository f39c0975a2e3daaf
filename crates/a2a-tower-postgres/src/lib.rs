//! The PostgreSQL task log of [`a2a-tower`](https://docs.rs/a2a-tower):
//! [`PostgresTaskLog`], a task log for several hosts sharing tasks,
//! implementing the `TaskLog`, `LiveTaskScan` and `DeliveryLog` traits of
//! [`a2a_tower_log`].
//!
//! Conditional appends are enforced in the database (two hosts never commit
//! the same sequence number; an older writer is fenced), watches cross hosts
//! through LISTEN/NOTIFY, delivery leases are timed by the database's clock,
//! and the schema is created and migrated by the crate in a schema of its
//! own. Applications use it through the `a2a-tower` facade (feature
//! `postgres`) as `a2a_tower::log::PostgresTaskLog`.
//!
//! Upgrading hosts that share a schema: a host migrates the schema when it
//! connects, and a host of an older version refuses to start on a schema
//! newer than its own. Schema 6 (one entry row per append) and schema 7 (one
//! notification per commit batch, which hosts of schema 6 cannot read) are
//! not rolling upgrades: stop every host of the previous version before the
//! first host of the new one starts.
//!
//! A bad setting is refused before any connection is made:
//!
//! ```
//! use a2a_tower::log::{LogErrorKind, PostgresTaskLog};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let err = PostgresTaskLog::builder("postgres://postgres@127.0.0.1:5432/test")
//!     .pool_size(0)
//!     .connect()
//!     .await
//!     .unwrap_err();
//! assert_eq!(err.kind(), LogErrorKind::Config);
//! # });
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod postgres;

// The backend's code was the module `log::postgres` of the facade: these
// make the paths it names (`super::…` for the log's items, `crate::log::…`,
// `crate::types::…`, `crate::ConfigError`) resolve unchanged.
use a2a_tower_core::{ConfigError, types};
use a2a_tower_log as log;
use a2a_tower_log::*;

pub use postgres::{PostgresTaskLog, PostgresTaskLogBuilder};
