//! [`Runs`]: the managed runs of this host.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::run::Run;

/// The runs of this host, by task id.
#[derive(Default)]
pub(crate) struct Runs(Mutex<HashMap<String, Arc<Run>>>);

impl Runs {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Run>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `run` unless one runs the task here already.
    pub(crate) fn claim(&self, run: &Arc<Run>) -> bool {
        let mut map = self.lock();
        if map.contains_key(&run.task_id) {
            return false;
        }
        map.insert(run.task_id.clone(), run.clone());
        true
    }

    /// The run of the task on this host, if any.
    pub(crate) fn get(&self, task_id: &str) -> Option<Arc<Run>> {
        self.lock().get(task_id).cloned()
    }

    pub(crate) fn contains(&self, task_id: &str) -> bool {
        self.lock().contains_key(task_id)
    }

    pub(crate) fn remove(&self, run: &Arc<Run>) {
        let mut map = self.lock();
        if map.get(&run.task_id).is_some_and(|r| Arc::ptr_eq(r, run)) {
            map.remove(&run.task_id);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
