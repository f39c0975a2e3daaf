//! Listening: the committer's connection also LISTENs on the log's channel
//! (one connection per host, not two), and its driver hands every NOTIFY it
//! receives to the hub (payloads: see [`super::notice`]): another host's
//! batch announces the sequence number each of its tasks reached, so that
//! this log's watchers read it from the database rather than from the
//! records this log kept; an older version's payload without a sequence
//! number wakes them the same way; the log's own notifications are skipped,
//! its commits woke their watchers; an empty payload wakes every watcher.
//!
//! PostgreSQL hands a busy connection its notifications between two of its
//! transactions, so a host under load is not woken once more per other
//! host's batch, as a connection that only listens is. After a lost
//! connection the committer reconnects (see `commit::Run::connect`) and
//! wakes every watcher, which then catch up by sequence number, so nothing
//! committed meanwhile is missed.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::oneshot;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

use super::notice::{Notice, parse};
use crate::log::hub::Hub;

/// Connects with `config` and LISTENs on `channel`; the connection's driver
/// hands each notification to `hub` (skipping those of `instance`, this
/// log's). The receiver resolves when the connection is lost.
pub(super) async fn connect(
    config: &Config,
    channel: &str,
    instance: &Arc<str>,
    hub: &Arc<Hub>,
) -> Result<(Client, oneshot::Receiver<()>), tokio_postgres::Error> {
    let (client, mut conn) = config.connect(NoTls).await?;
    let (lost, is_lost) = oneshot::channel();
    let (instance, hub) = (instance.clone(), hub.clone());
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(msg)) = messages.next().await {
            if let AsyncMessage::Notification(n) = msg {
                dispatch(n.payload(), &instance, &hub);
            }
        }
        // The connection first, so that its client reads as closed.
        drop(messages);
        let _ = lost.send(());
    });
    client
        .batch_execute(&format!("LISTEN {}", super::sql::quote(channel)))
        .await?;
    Ok((client, is_lost))
}

/// Wakes the watchers `payload` names (see [`parse`]).
fn dispatch(payload: &str, instance: &str, hub: &Hub) {
    match parse(payload, instance) {
        Notice::All => hub.notify_all(),
        // This log's own: its watchers got the records.
        Notice::Own => {}
        Notice::Tasks(tasks) => {
            for (task_id, seq) in tasks {
                match seq {
                    Some(seq) => hub.announce(task_id, seq),
                    None => hub.notify(task_id),
                }
            }
        }
    }
}
