//! Per-key scheduling of tool calls: [`Concurrency`] declarations enforced
//! with one fair reader-writer lock per live key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

use crate::tool::Concurrency;

/// The locks of the keys in use. A call that may overlap takes its key's lock
/// shared, an exclusive one takes it exclusive, so two calls with the same key
/// overlap only when both say they may. Tokio's lock is fair (first come,
/// first served), so a stream of overlapping calls cannot starve an exclusive
/// one. A key's lock lives while a call holds or awaits it.
#[derive(Default)]
pub(super) struct KeyLocks {
    keys: Mutex<HashMap<String, Weak<RwLock<()>>>>,
}

/// A held key lock (shared or exclusive); released on drop.
pub(super) struct Permit {
    _shared: Option<OwnedRwLockReadGuard<()>>,
    _exclusive: Option<OwnedRwLockWriteGuard<()>>,
}

impl KeyLocks {
    /// Waits until a call declared by `concurrency` may run.
    pub(super) async fn acquire(&self, concurrency: &Concurrency) -> Permit {
        let lock = self.lock_of(&concurrency.key);
        if concurrency.concurrent {
            Permit {
                _shared: Some(lock.read_owned().await),
                _exclusive: None,
            }
        } else {
            Permit {
                _shared: None,
                _exclusive: Some(lock.write_owned().await),
            }
        }
    }

    fn lock_of(&self, key: &str) -> Arc<RwLock<()>> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lock) = keys.get(key).and_then(Weak::upgrade) {
            return lock;
        }
        // A new key: forget the keys no call holds any more.
        keys.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::new(RwLock::new(()));
        keys.insert(key.to_owned(), Arc::downgrade(&lock));
        lock
    }

    #[cfg(test)]
    fn live_keys(&self) -> usize {
        let keys = self.keys.lock().unwrap();
        keys.values().filter(|lock| lock.strong_count() > 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn blocks(locks: &KeyLocks, held: &Concurrency, next: &Concurrency) -> bool {
        let _held = locks.acquire(held).await;
        tokio::time::timeout(Duration::from_millis(50), locks.acquire(next))
            .await
            .is_err()
    }

    #[tokio::test]
    async fn exclusive_calls_with_one_key_wait_for_each_other() {
        let locks = KeyLocks::default();
        let k = Concurrency::exclusive("k");
        assert!(blocks(&locks, &k, &k).await);
        assert!(blocks(&locks, &k, &Concurrency::concurrent("k")).await);
        assert!(blocks(&locks, &Concurrency::concurrent("k"), &k).await);
    }

    #[tokio::test]
    async fn calls_overlap_when_both_may_or_keys_differ() {
        let locks = KeyLocks::default();
        let c = Concurrency::concurrent("k");
        assert!(!blocks(&locks, &c, &c).await);
        let a = Concurrency::exclusive("a");
        assert!(!blocks(&locks, &a, &Concurrency::exclusive("b")).await);
    }

    #[tokio::test]
    async fn released_keys_are_forgotten() {
        let locks = KeyLocks::default();
        drop(locks.acquire(&Concurrency::exclusive("a")).await);
        let _b = locks.acquire(&Concurrency::exclusive("b")).await;
        assert_eq!(locks.live_keys(), 1);
        assert_eq!(locks.keys.lock().unwrap().len(), 1);
    }
}
