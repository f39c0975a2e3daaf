//! The listener: one dedicated connection that LISTENs on the log's channel
//! and wakes the hub for each NOTIFY (payload: `<instance>.<seq>:<task id>`,
//! announcing the sequence number another host committed the task to, so
//! that this log's watchers read it from the database rather than from the
//! records this log kept; an older version's `<instance>:<task id>` wakes
//! them the same way without a sequence number; the log's own
//! notifications are skipped, its commits woke their watchers; an empty
//! payload wakes every watcher). After a lost connection it
//! reconnects and wakes every watcher, which then catch up by sequence
//! number, so nothing committed meanwhile is missed.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

use crate::log::LogError;
use crate::log::hub::Hub;

/// Connects and LISTENs; the returned receiver yields each payload and ends
/// when the connection is lost. The client must be kept alive meanwhile.
async fn connect(
    config: &Config,
    channel: &str,
) -> Result<(Client, mpsc::UnboundedReceiver<String>), LogError> {
    let (client, mut conn) = config.connect(NoTls).await.map_err(LogError::backend)?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(msg)) = messages.next().await {
            if let AsyncMessage::Notification(n) = msg
                && tx.send(n.payload().to_owned()).is_err()
            {
                break;
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {}", super::sql::quote(channel)))
        .await
        .map_err(LogError::backend)?;
    Ok((client, rx))
}

/// Runs the listener until aborted; `ready` gets the first connection's
/// outcome (the log is not usable for watches before it LISTENs).
pub(crate) async fn run(
    config: Config,
    channel: String,
    instance: String,
    hub: Arc<Hub>,
    ready: oneshot::Sender<Result<(), LogError>>,
) {
    let mut ready = Some(ready);
    loop {
        match connect(&config, &channel).await {
            Ok((_client, mut rx)) => {
                if let Some(r) = ready.take() {
                    let _ = r.send(Ok(()));
                } else {
                    // Reconnected: commits may have been missed meanwhile.
                    hub.notify_all();
                }
                while let Some(payload) = rx.recv().await {
                    match payload.split_once(':') {
                        _ if payload.is_empty() => hub.notify_all(),
                        Some((from, task_id)) => match from.split_once('.') {
                            // This log's own: its watchers got the records.
                            Some((i, _)) if i == instance => {}
                            Some((_, seq)) => match seq.parse() {
                                Ok(seq) => hub.announce(task_id, seq),
                                Err(_) => hub.notify(task_id),
                            },
                            // An older version's `<instance>:<task id>`.
                            None if from == instance => {}
                            None => hub.notify(task_id),
                        },
                        None => hub.notify(&payload),
                    }
                }
                tracing::warn!(target: "a2a_tower::log", "postgres listener connection lost");
            }
            Err(e) => {
                if let Some(r) = ready.take() {
                    let _ = r.send(Err(e));
                    return;
                }
                tracing::warn!(target: "a2a_tower::log", "postgres listener reconnect failed");
            }
        }
        // Back off before reconnecting (not a wait for an outcome).
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
