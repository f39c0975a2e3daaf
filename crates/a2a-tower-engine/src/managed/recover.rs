//! Resuming runs after a crash: each managed run of a host id is taken over
//! with a newer epoch and its program runs again over its journal.

use std::sync::Arc;

use super::admit::spawn;
use super::entry::JournalEntry;
use super::journal::Journal;
use super::pending::PROGRAM_KEY;
use super::run::{Head, Run};
use super::service::Inner;
use crate::engine::{DEFAULT_HOST_ID, Recovered};
use crate::log::{AppendRequest, LogError, LogErrorKind, Record};

const PAGE: usize = 256;

pub(crate) async fn resume(inner: &Arc<Inner>, host: &str) -> Result<Recovered, LogError> {
    let mut out = Recovered::default();
    let prefix = format!("{}/", inner.service);
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let page = inner.engine.live.live_tasks(key, PAGE).await?;
        for task in &page {
            let owner = task.host.as_deref().unwrap_or(DEFAULT_HOST_ID);
            if owner != host
                || task.stream().is_some()
                || !task.authority.starts_with(&prefix)
                || inner.runs.contains(&task.task_id)
            {
                continue;
            }
            match resume_one(inner, &task.authority, &task.task_id).await {
                Ok(true) => out.resumed += 1,
                Ok(false) => out.skipped += 1,
                Err(e) if matches!(e.kind(), LogErrorKind::NotFound) => out.skipped += 1,
                Err(e) => return Err(e),
            }
        }
        match page.last() {
            Some(last) if page.len() >= PAGE => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => break,
        }
    }
    if out.resumed > 0 {
        tracing::info!(
            resumed = out.resumed,
            "resumed managed runs after a restart"
        );
    }
    Ok(out)
}

/// Takes one run over and starts it again; `false` if it is not this
/// service's program, or someone else moved it first.
async fn resume_one(inner: &Arc<Inner>, authority: &str, task_id: &str) -> Result<bool, LogError> {
    let snap = inner.log.snapshot(authority, task_id).await?;
    let program = snap
        .task
        .metadata
        .as_ref()
        .and_then(|m| m.get(PROGRAM_KEY))
        .and_then(|v| v.as_str());
    if program != Some(inner.program.name()) || snap.task.status.state.is_terminal() {
        return Ok(false);
    }
    let records = inner.log.read(authority, task_id, 0).await?;
    let seq = records.last().map_or(snap.seq, |s| s.seq);
    let mut journal = Journal::default();
    let mut input = None;
    let mut all = Vec::with_capacity(records.len());
    for s in &records {
        journal.absorb(s.seq, &s.record);
        if let Some(JournalEntry::RunStarted { input: i, .. }) = JournalEntry::of(&s.record) {
            input = Some(i);
        }
        all.push((*s.record).clone());
    }
    let Some(input) = input else {
        return Ok(false);
    };
    let waits = journal.open_waits(&all);
    let cancel_requested = all
        .iter()
        .any(|r| matches!(r, Record::CancelRequested { .. }));
    // A newer epoch fences the dead writer, if it is in fact alive.
    let epoch = snap.epoch + 1;
    let take_over = AppendRequest::new(
        authority,
        task_id,
        seq,
        epoch,
        vec![Record::ExecutionStarted {
            host: inner.host_id.clone(),
        }],
    );
    let appended = match inner.log.append(take_over).await {
        Ok(a) => a,
        Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    let head = Head {
        seq: appended.seq,
        epoch,
        waits,
    };
    let run = Run::new(
        inner.log.clone(),
        authority.to_owned(),
        task_id.to_owned(),
        snap.task.context_id.clone(),
        inner.program.name().to_owned(),
        inner.policy,
        head,
        journal,
        cancel_requested,
    );
    Ok(spawn(inner, run, input, appended.seq))
}
