//! Byte accounting for the memory bound of
//! [`MemoryTaskLog`](super::MemoryTaskLog): the estimates an append and a
//! task entry are counted at.

use std::mem::size_of;

use super::entry::Entry;
use crate::projection::{artifact_bytes, map_bytes, message_bytes};
use crate::{Record, Sequenced};

/// The bytes a task entry costs besides its task and records.
pub(super) const ENTRY_OVERHEAD: usize = size_of::<Entry>() + 64;

/// What a kept record costs besides its payload: its place in the entry's
/// records and its `Arc` allocation (with the counts).
const RECORD_OVERHEAD: usize = size_of::<Sequenced>() + size_of::<Record>() + 16;

/// An estimate of a record's size, payload included.
pub(super) fn record_bytes(r: &Record) -> usize {
    RECORD_OVERHEAD + payload_bytes(r)
}

/// An estimate of a record's payload: at most what applying it adds to its
/// task's projection (an artifact chunk reports what it added itself, see
/// `Projection::apply_chunk`).
pub(super) fn payload_bytes(r: &Record) -> usize {
    match r {
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
        Record::PushConfigDeleted { id } => id.len(),
        Record::ExecutionStarted { host } => host.len(),
        Record::MetadataChanged { metadata } => map_bytes(metadata),
        Record::Feature(f) => f.approx_bytes(),
    }
}
