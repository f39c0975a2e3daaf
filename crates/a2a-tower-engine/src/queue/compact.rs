//! [`QueueStreams`]: what stream compaction needs of the queue. A context
//! with nothing queued and nothing running keeps one fact, its last replier;
//! its queue stream is restated as one [`QueueRecord::Restated`] at the
//! revision read (a host holding an older view then loses its next commit
//! and catches up from the restatement) and the records before it are
//! dropped, the revision going on from there.
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::log::{MemoryTaskLog, RetentionPolicy};
//! use a2a_tower::queue::QueueStreams;
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! // Terminal tasks older than a day deleted, and the queue streams of
//! // contexts idle for a day compacted.
//! let policy = RetentionPolicy::new(Duration::from_secs(86_400)).compact_streams(QueueStreams);
//! let swept = policy.sweep(&log).await.unwrap();
//! assert_eq!((swept.deleted, swept.compacted), (0, 0));
//! # });
//! ```

use super::record::{QUEUE_FEATURE, QueueRecord};
use super::state::ContextQueue;
use crate::log::{Record, Restate, Sequenced};

/// The delivery queue's streams, for [`RetentionPolicy::compact_streams`](crate::log::RetentionPolicy::compact_streams)
/// and [`StreamCompaction`](crate::log::StreamCompaction): restated when
/// nothing is queued and nothing runs in the context.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueStreams;

impl Restate for QueueStreams {
    fn feature(&self) -> &str {
        QUEUE_FEATURE
    }

    fn restate(&self, records: &[Sequenced]) -> Option<Record> {
        let mut queue = ContextQueue::unmetered();
        for r in records {
            match QueueRecord::of(&r.record) {
                Some(q) => queue.apply(r.seq, &q),
                // A queue record this version cannot read: keep it.
                None if QueueRecord::is_queue(&r.record) => return None,
                None => {}
            }
        }
        let last_replier = queue.last_replier().map(str::to_owned);
        queue
            .is_idle()
            .then(|| QueueRecord::Restated { last_replier }.record())
    }

    fn restates(&self, record: &Record) -> bool {
        matches!(QueueRecord::of(record), Some(QueueRecord::Restated { .. }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::log::FeatureRecord;

    fn records(rs: &[QueueRecord]) -> Vec<Sequenced> {
        let mut out = vec![Record::created("q", "c")];
        out.extend(rs.iter().map(QueueRecord::record));
        out.into_iter()
            .enumerate()
            .map(|(i, r)| Sequenced {
                seq: i as u64 + 1,
                head: rs.len() as u64 + 1,
                record: Arc::new(r),
            })
            .collect()
    }

    fn entered(id: &str) -> QueueRecord {
        QueueRecord::Entered {
            task_id: id.into(),
            target: None,
            priority: crate::queue::Priority::Normal,
            position: None,
            hops: 0,
        }
    }

    fn admitted(id: &str) -> QueueRecord {
        QueueRecord::Admitted {
            task_id: id.into(),
            agent: "a".into(),
            hops: 0,
        }
    }

    fn settled(id: &str, agent: &str) -> QueueRecord {
        QueueRecord::Settled {
            task_id: id.into(),
            agent: agent.into(),
            completed: true,
        }
    }

    #[test]
    fn only_an_idle_queue_is_restated_with_its_last_replier() {
        let q = QueueStreams;
        // Queued, then running: not idle.
        assert!(q.restate(&records(&[entered("t1")])).is_none());
        assert!(
            q.restate(&records(&[entered("t1"), admitted("t1")]))
                .is_none()
        );
        let done = [entered("t1"), admitted("t1"), settled("t1", "a")];
        let restated = q.restate(&records(&done)).unwrap();
        assert_eq!(
            QueueRecord::of(&restated),
            Some(QueueRecord::Restated {
                last_replier: Some("a".into())
            })
        );
        assert!(q.restates(&restated));
        assert!(!q.restates(&settled("t1", "a").record()));
        // The restatement holds the stream, as the first record does.
        let Record::Feature(f) = &restated else {
            panic!("a feature record")
        };
        assert_eq!(f.hold().map(|h| h.by.as_str()), Some(QUEUE_FEATURE));
        // From a restatement on: it is the state.
        let later = [
            QueueRecord::Restated {
                last_replier: Some("b".into()),
            },
            entered("t2"),
            QueueRecord::Removed {
                task_id: "t2".into(),
            },
        ];
        let again = q.restate(&records(&later)).unwrap();
        assert_eq!(
            QueueRecord::of(&again),
            Some(QueueRecord::Restated {
                last_replier: Some("b".into())
            })
        );
        // A queue record of a later version: left alone.
        let mut unknown = records(&done);
        let future = FeatureRecord::new("queue", &serde_json::json!({"paused": {}})).unwrap();
        unknown.push(Sequenced {
            seq: 5,
            head: 5,
            record: Arc::new(Record::Feature(future)),
        });
        assert!(q.restate(&unknown).is_none());
    }
}
