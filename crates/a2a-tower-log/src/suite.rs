//! The `TaskLog` conformance suite (feature `suite`): every backend (memory,
//! SQLite, PostgreSQL, and yours) runs the same cases. Each case takes a
//! fresh `Arc<dyn TaskBackend>` and uses its own authority, so cases stay
//! independent even on a shared database.
//!
//! A test file imports the macro (`use a2a_tower_log::log_suite;`) and
//! instantiates the cases with `log_suite!(run)`, where
//! `async fn run<F, Fut>(case: F)` builds a log, runs `case(log).await`, and
//! cleans up. Each case becomes a `#[tokio::test]` on a multi-threaded
//! runtime, so the test crate needs `tokio` with the features `macros` and
//! `rt-multi-thread`. The cases are also functions of this module, to call
//! one at a time.
//!
//! ```
//! use std::sync::Arc;
//! use a2a_tower::log::{MemoryTaskLog, TaskBackend};
//! use a2a_tower_log::suite;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
//! suite::append_rules(log.clone()).await;
//! suite::epochs_fence(log).await;
//! # });
//! ```
//!
//! In a test file (`tests/my_log.rs`), every case against a log of your own:
//!
//! ```no_run
//! use std::sync::Arc;
//! use a2a_tower::log::{MemoryTaskLog, TaskBackend};
//! use a2a_tower_log::log_suite;
//!
//! async fn run<F, Fut>(case: F)
//! where
//!     F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
//!     Fut: std::future::Future<Output = ()>,
//! {
//!     case(Arc::new(MemoryTaskLog::new())).await;
//! }
//!
//! log_suite!(run);
//! # fn main() {}
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::types::{
    Artifact, Message, Part, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use futures_util::StreamExt;

use crate::{
    AppendRequest, ListQuery, LiveTask, LogErrorKind, PageCursor, Record, Sequenced, TaskBackend,
    TaskLog,
};

mod append;
mod append_all;
mod deliveries;
mod list;
mod live;
mod projection;
mod streams;
mod watch;
pub use append::{
    append_rules, cas_race_has_one_winner, concurrent_tasks, epochs_fence,
    invalid_batches_write_nothing,
};
pub use append_all::{
    append_all_checks_a_task_unchanged, append_all_commits_together,
    append_all_race_one_winner_no_deadlock, append_all_refusal_writes_nothing,
    append_all_same_task_twice_or_none,
};
pub use deliveries::{
    advance, config, deliveries_advance_is_conditional, deliveries_cleanup_after_the_end,
    deliveries_cursors_follow_the_configs, deliveries_lease_is_exclusive_and_expires,
    deliveries_pending_pages,
};
pub use list::{authority_isolation, list_filters_and_pages, list_mixes_running_and_rested};
pub use live::{live_hosts, recovery};
pub use projection::{projection, snapshot_is_the_projection};
pub use streams::{streams_are_no_tasks, streams_compact};
pub use watch::{watch_many, watch_without_gaps};

/// The guard against a watch that never delivers (a failure, not a wait).
pub const GUARD: Duration = Duration::from_secs(10);

/// A unique authority for one case.
pub fn authority() -> String {
    format!("auth-{}", uuid::Uuid::new_v4())
}

/// The admission of the user message `m<i>`.
pub fn msg(i: u64) -> Record {
    Record::MessageAdmitted {
        message: Message::user(format!("m{i}"), "x"),
    }
}

fn uid(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4())
}

fn status(state: TaskState, ms: i64) -> Record {
    Record::status(TaskStatus {
        state,
        message: None,
        timestamp: Some(Timestamp::from_unix_millis(ms)),
    })
}

fn created_at(task: &str, ctx: &str, ms: i64) -> Record {
    Record::Created {
        task_id: task.into(),
        context_id: ctx.into(),
        at: Timestamp::from_unix_millis(ms),
        metadata: None,
    }
}

async fn create(log: &dyn TaskBackend, auth: &str, task: &str, ctx: &str, ms: i64) {
    let out = log
        .append(AppendRequest::create(
            auth,
            task,
            vec![created_at(task, ctx, ms)],
        ))
        .await
        .unwrap();
    assert_eq!(out.seq, 1);
}

fn kind<T: std::fmt::Debug>(r: Result<T, crate::LogError>) -> LogErrorKind {
    r.unwrap_err().kind()
}

async fn next(s: &mut crate::RecordStream) -> Option<Sequenced> {
    tokio::time::timeout(GUARD, s.next())
        .await
        .expect("watch delivered nothing within the guard")
        .map(|r| r.unwrap())
}

/// The live tasks of `auth`, paging `page` at a time through every authority.
pub(crate) async fn live_of<L: crate::LiveTaskScan + ?Sized>(
    log: &L,
    auth: &str,
    page: usize,
) -> Vec<LiveTask> {
    let mut out = Vec::new();
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let batch = log.live_tasks(key, page).await.unwrap();
        assert!(batch.len() <= page);
        let Some(last) = batch.last() else { break };
        after = Some((last.authority.clone(), last.task_id.clone()));
        out.extend(batch.into_iter().filter(|l| l.authority == auth));
    }
    out
}

fn text_chunk(id: &str, text: &str, append: bool) -> Record {
    Record::ArtifactChunk {
        artifact: Artifact {
            artifact_id: id.into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        },
        append,
        last_chunk: false,
    }
}

/// Instantiates every case of the [suite](crate::suite) as a
/// `#[tokio::test(flavor = "multi_thread", worker_threads = 2)]` named after
/// the case, driven by `$run`: an `async fn run<F, Fut>(case: F)` (with
/// `F: FnOnce(Arc<dyn TaskBackend>) -> Fut`) that builds a log, runs
/// `case(log).await`, and cleans up. Expanded in a test crate with `tokio`
/// (features `macros`, `rt-multi-thread`).
#[macro_export]
#[cfg_attr(docsrs, doc(cfg(feature = "suite")))]
macro_rules! log_suite {
    ($run:path) => {
        $crate::log_suite!(@cases $run;
            append_rules, cas_race_has_one_winner, concurrent_tasks, epochs_fence, projection,
            list_filters_and_pages, list_mixes_running_and_rested, authority_isolation, watch_without_gaps, watch_many, recovery, live_hosts,
            invalid_batches_write_nothing, snapshot_is_the_projection, append_all_commits_together,
            append_all_refusal_writes_nothing, append_all_same_task_twice_or_none,
            append_all_race_one_winner_no_deadlock, append_all_checks_a_task_unchanged,
            deliveries_cursors_follow_the_configs,
            deliveries_advance_is_conditional, deliveries_pending_pages,
            deliveries_lease_is_exclusive_and_expires, deliveries_cleanup_after_the_end,
            streams_are_no_tasks);
    };
    (@cases $run:path; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                $run($crate::suite::$case).await;
            }
        )*
    };
}
