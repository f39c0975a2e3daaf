//! Ownership of a database file: one [`SqliteTaskLog`](super::SqliteTaskLog)
//! at a time, in any process, holds an exclusive advisory lock on a sidecar
//! file (`<database>-lock`, next to SQLite's own `-wal` and `-shm`).
//!
//! The log keeps the heads of the tasks it writes in memory and serves reads
//! from them, which is only right while nobody else writes the file. The
//! operating system releases the lock when its holder exits, however it
//! exits (a SIGKILL included), so a restarted server opens the file at once.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::log::LogError;

/// The held lock; dropping it releases the file.
#[derive(Debug)]
pub(crate) struct Owner {
    _file: File,
}

/// The sidecar path of `db`.
fn sidecar(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-lock");
    PathBuf::from(name)
}

impl Owner {
    /// Takes the lock of `db`, waiting up to `patience` for a previous owner
    /// (one just dropped in this process, say) to release it.
    pub(crate) fn acquire(db: &Path, patience: Duration) -> Result<Self, LogError> {
        let path = sidecar(db);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(LogError::backend)?;
        let deadline = Instant::now() + patience;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(LogError::backend(format!(
                        "{} is in use by another task log (lock file {})",
                        db.display(),
                        path.display()
                    )));
                }
                Err(TryLockError::Error(e)) => return Err(LogError::backend(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_owner_at_a_time() {
        let dir = std::env::temp_dir().join(format!("a2a-lock-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("tasks.db");
        let first = Owner::acquire(&db, Duration::ZERO).unwrap();
        let err = Owner::acquire(&db, Duration::from_millis(30)).unwrap_err();
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(cause.contains("in use"), "{cause}");
        drop(first);
        Owner::acquire(&db, Duration::ZERO).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
