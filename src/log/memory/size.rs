//! Byte accounting for the memory bound of
//! [`MemoryTaskLog`](super::MemoryTaskLog): the estimates an append and a
//! task entry are counted at.

use std::mem::size_of;

use super::entry::Entry;
use crate::log::projection::{artifact_bytes, map_bytes, message_bytes, value_bytes};
use crate::log::{Record, Sequenced};

/// The bytes a task entry costs besides its task and records.
pub(super) const ENTRY_OVERHEAD: usize = size_of::<Entry>() + 64;

/// An estimate of a record's size, payload included.
pub(super) fn record_bytes(r: &Record) -> usize {
    size_of::<Sequenced>()
        + size_of::<Record>()
        + 16
        + match r {
            Record::Created {
                task_id,
                context_id,
                metadata,
                ..
            } => task_id.len() + context_id.len() + metadata.as_ref().map_or(0, map_bytes),
            Record::MessageAdmitted { message } | Record::Replied { message, .. } => {
                message_bytes(message)
            }
            Record::StatusChanged { status } => status.message.as_ref().map_or(0, message_bytes),
            Record::ArtifactChunk { artifact, .. } => artifact_bytes(artifact),
            Record::CancelRequested { .. } => 0,
            Record::PushConfigSet { config } => {
                config.url.len() + config.token.len() + config.id.len() + 64
            }
            Record::PushConfigDeleted { id } | Record::ExecutionStarted { host: id } => id.len(),
            Record::MetadataChanged { metadata } => map_bytes(metadata),
            Record::RunStarted {
                program,
                root,
                input,
            } => program.len() + root.len() + value_bytes(input),
            Record::StepRecorded {
                process,
                name,
                output,
            } => process.len() + name.len() + value_bytes(output),
            Record::WaitOpened {
                process,
                key,
                question,
                schema,
            } => {
                process.len()
                    + key.len()
                    + question.as_ref().map_or(0, value_bytes)
                    + schema.as_ref().map_or(0, value_bytes)
            }
            Record::SignalAdmitted {
                process,
                key,
                answer,
                message,
            } => process.len() + key.len() + value_bytes(answer) + message_bytes(message),
            Record::ChildStarted { parent, process } => parent.len() + process.len(),
            Record::ProcessExited { process, output } => {
                process.len() + output.as_ref().map_or(0, value_bytes)
            }
            Record::InputQueued { input } => match input {
                crate::queue::QueuedInput::Message { message } => message_bytes(message),
                crate::queue::QueuedInput::Handoff { task_id } => task_id.len(),
            },
            // The queue's records are small and bounded but for their ids.
            Record::Queue(q) => serde_json::to_string(q).map_or(64, |s| s.len()),
        }
}
