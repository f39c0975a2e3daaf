//! [`MemoryTaskLogBuilder`] and the [`Eviction`] policy.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use foldhash::fast::RandomState;

use super::shards::Shard;
use super::{Inner, MemoryTaskLog};
use crate::ConfigError;

/// What [`MemoryTaskLog`] does when a new task would pass its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Eviction {
    /// Evict terminal tasks, oldest terminal first (per shard: tasks are
    /// spread over the shards by hash, and at the bound each shard is kept
    /// within about an eighth of its share of the tasks, so that its oldest
    /// ended about as long ago as any other shard's), never a non-terminal
    /// one. If only non-terminal tasks are left, the append fails with
    /// [`LogErrorKind::Full`](crate::LogErrorKind::Full).
    #[default]
    OldestTerminal,
    /// Never evict: fail with [`LogErrorKind::Full`](crate::LogErrorKind::Full) at the bound.
    Never,
}

/// Builder of [`MemoryTaskLog`].
#[derive(Debug, Clone)]
#[must_use]
pub struct MemoryTaskLogBuilder {
    pub(super) max_tasks: usize,
    pub(super) max_bytes: usize,
    pub(super) eviction: Eviction,
    pub(super) shards: usize,
    pub(super) compact_terminal: bool,
    pub(super) window: usize,
}

impl Default for MemoryTaskLogBuilder {
    fn default() -> Self {
        Self {
            max_tasks: 100_000,
            max_bytes: 256 * 1024 * 1024,
            eviction: Eviction::OldestTerminal,
            shards: 1024,
            compact_terminal: true,
            window: 131_072,
        }
    }
}

impl MemoryTaskLogBuilder {
    /// At most this many tasks (default 100 000).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n;
        self
    }

    /// At most about this many bytes of task data, estimated (default 256 MiB).
    /// The bound is enforced when a task is created or grows; a terminal
    /// status is always accepted so that tasks can end.
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }

    /// The eviction policy (default [`Eviction::OldestTerminal`]).
    pub fn eviction(mut self, eviction: Eviction) -> Self {
        self.eviction = eviction;
        self
    }

    /// The number of independently locked shards (default 1024). More shards
    /// keep each shard's table small, which bounds the pause of a rehash (a
    /// shard of n tasks rehashes in O(n) while it holds its lock).
    pub fn shards(mut self, n: usize) -> Self {
        self.shards = n;
        self
    }

    /// Fold the records of a terminal task into its snapshot once nobody
    /// watches it, and keep that task as its ProtoJSON (written side by side
    /// with the tasks packed before it, in chunks), decoded again on each
    /// read (default on: about a third of the memory of the wire structs).
    /// Reading records of a compacted task before its last sequence number
    /// fails with [`LogErrorKind::Compacted`](crate::LogErrorKind::Compacted).
    pub fn compact_terminal(mut self, on: bool) -> Self {
        self.compact_terminal = on;
        self
    }

    /// How many records of a live task the log keeps for readers (default
    /// 131,072): the task's projection holds everything, and older records
    /// are dropped as new ones come, so a long task's records stop growing;
    /// its projection grows by the text of each appended text chunk (which
    /// continues the artifact's last text part, see
    /// [`Projection`](crate::Projection)), not by a part per chunk. A
    /// one-word chunk's record is estimated at about 770 bytes, so the
    /// default window is about 100 MiB of the default 256 MiB bound for a
    /// task that long. A reader whose cursor falls
    /// behind the window gets [`LogErrorKind::Compacted`](crate::LogErrorKind::Compacted)
    /// (see [`TaskLog::read`](crate::TaskLog::read)) and continues from a
    /// snapshot. Tasks with push delivery cursors and a feature's streams
    /// keep every record.
    pub fn window(mut self, records: usize) -> Self {
        self.window = records;
        self
    }

    /// Builds the log; a bad setting (a zero bound, a shard count outside
    /// 1..=65536) is a [`ConfigError`].
    pub fn build(self) -> Result<MemoryTaskLog, ConfigError> {
        if self.max_tasks == 0 || self.max_bytes == 0 || self.window == 0 {
            return Err(ConfigError::new("memory task log bounds must be positive"));
        }
        if self.shards == 0 || self.shards > 65_536 {
            return Err(ConfigError::new("memory task log shards must be 1..=65536"));
        }
        let shards = (0..self.shards)
            .map(|_| Mutex::new(Shard::default()))
            .collect();
        Ok(MemoryTaskLog {
            inner: Arc::new(Inner {
                shards,
                hasher: RandomState::default(),
                cfg: self,
                tasks: AtomicUsize::new(0),
                bytes: AtomicUsize::new(0),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_config_errors() {
        let bounds = "memory task log bounds must be positive";
        let shards = "memory task log shards must be 1..=65536";
        for (builder, message) in [
            (MemoryTaskLog::builder().max_tasks(0), bounds),
            (MemoryTaskLog::builder().max_bytes(0), bounds),
            (MemoryTaskLog::builder().shards(0), shards),
            (MemoryTaskLog::builder().shards(65_537), shards),
        ] {
            assert_eq!(builder.build().unwrap_err(), ConfigError::new(message));
        }
        assert!(MemoryTaskLog::builder().shards(65_536).build().is_ok());
    }
}
