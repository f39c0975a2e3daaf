//! Handoff: a completed reply that names another agent of the team
//! (`@name`) wakes that agent with a reference to the reply — a new queued
//! task of the same context, normal priority, committed with the run's
//! settlement. Each hop closes only its own task.

use super::core::Core;
use super::entry::Priority;
use super::record::{QueueRecord, QueuedInput};
use super::stream::Slot;
use super::{HANDOFF_FROM_KEY, TARGET_KEY};
use crate::log::{AppendRequest, Record};
use crate::types::{Metadata, Task};

/// At most this many handoffs lead to one input: a chain of agents naming
/// each other stops there.
pub const MAX_HOPS: u32 = 8;

/// The agents of `team` named in `text` as `@name` (a name followed by
/// anything but a name character), other than `from`, in order of first
/// mention.
pub(crate) fn mentions<'a>(
    names: impl Iterator<Item = &'a str>,
    text: &str,
    from: &str,
) -> Vec<String> {
    let mut found: Vec<(usize, String)> = Vec::new();
    for name in names.filter(|n| *n != from) {
        let needle = format!("@{name}");
        let mut start = 0;
        while let Some(i) = text[start..].find(&needle) {
            let at = start + i;
            let end = at + needle.len();
            let next = text[end..].chars().next();
            if !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
                found.push((at, name.to_owned()));
                break;
            }
            start = end;
        }
    }
    found.sort();
    found.into_iter().map(|(_, n)| n).collect()
}

/// The reply's text: its status message when it is the reply, else its
/// artifacts' text.
fn reply_text(task: &Task) -> String {
    match &task.status.message {
        Some(m) if task.artifacts.is_empty() => m.text(),
        _ => task
            .artifacts
            .iter()
            .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
            .collect(),
    }
}

/// The queued tasks (and their entries) the completed run of `agent`
/// (its task `from`) hands off to.
pub(crate) fn handoffs(
    core: &Core,
    slot: &Slot,
    from: &Task,
    agent: &str,
    hops: u32,
) -> Vec<(AppendRequest, QueueRecord)> {
    if hops >= MAX_HOPS {
        return Vec::new();
    }
    let text = reply_text(from);
    mentions(core.team.names(), &text, agent)
        .into_iter()
        .map(|target| {
            let task_id = crate::engine::id_text(uuid::Uuid::now_v7());
            let mut meta = Metadata::new();
            meta.insert(TARGET_KEY.into(), target.clone().into());
            meta.insert(HANDOFF_FROM_KEY.into(), from.id.clone().into());
            let mut created = Record::created(task_id.clone(), slot.context_id.clone());
            if let Record::Created { metadata, .. } = &mut created {
                *metadata = Some(meta);
            }
            let queued = QueuedInput::Handoff {
                task_id: from.id.clone(),
            }
            .record();
            let request = AppendRequest::create(
                slot.authority.clone(),
                task_id.clone(),
                vec![created, queued],
            );
            let entered = QueueRecord::Entered {
                task_id,
                target: Some(target),
                priority: Priority::Normal,
                position: None,
                hops: hops + 1,
            };
            (request, entered)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn mentions_are_whole_names_of_other_agents_in_order() {
        let names = ["echo", "upper", "up"];
        let m = |text: &str| mentions(names.iter().copied(), text, "echo");
        assert_eq!(m("hi @upper"), ["upper"]);
        assert_eq!(m("@up then @upper"), ["up", "upper"]);
        assert_eq!(m("@uppercase"), Vec::<String>::new());
        assert_eq!(m("mail a@upper."), ["upper"]);
        assert_eq!(m("@echo only"), Vec::<String>::new(), "never itself");
        assert_eq!(m("@UPPER"), Vec::<String>::new(), "names are exact");
    }
}
