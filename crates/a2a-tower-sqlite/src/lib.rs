//! The durable SQLite task log of [`a2a-tower`](https://docs.rs/a2a-tower):
//! [`SqliteTaskLog`], a task log in one SQLite file, implementing the
//! `TaskLog`, `LiveTaskScan` and `DeliveryLog` traits of [`a2a_tower_log`].
//!
//! WAL mode; one writer thread commits appends in groups (one fsync per
//! batch, [`Synchronous::Full`] by default); reads use a small pool of
//! read-only connections on Tokio's blocking threads; the schema is created
//! and migrated by the crate; SQLite is compiled in. Applications use it
//! through the `a2a-tower` facade (feature `sqlite`, on by default) as
//! `a2a_tower::log::SqliteTaskLog`.
//!
//! ```
//! use a2a_tower::log::{AppendRequest, Record, SqliteTaskLog, TaskLog};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("a2a-doc-{}", uuid::Uuid::new_v4()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let log = SqliteTaskLog::builder(dir.join("tasks.db")).open().unwrap();
//! let req = AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]);
//! assert_eq!(log.append(req).await.unwrap().seq, 1);
//! assert_eq!(log.snapshot("public", "t-1").await.unwrap().seq, 1);
//! # drop(log);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # });
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod sqlite;

// The backend's code was the module `log::sqlite` of the facade: these make
// the paths it names (`super::…` for the log's items, `crate::log::…`,
// `crate::types::…`, `crate::ConfigError`) resolve unchanged.
use a2a_tower_core::{ConfigError, types};
use a2a_tower_log as log;
use a2a_tower_log::*;

pub use sqlite::{SqliteStats, SqliteTaskLog, SqliteTaskLogBuilder, Synchronous};
