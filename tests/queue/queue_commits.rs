//! What the delivery queue commits per message, counted at the log: a
//! blocking message into an idle context is two commits (its enqueue with
//! its admission, and its run's end with its settlement); a run that ends
//! while an input waits is settled with that input's admission; a reply
//! that may hand off is settled by the drain with its handoff's input.

use crate::support;

use std::sync::{Arc, Mutex};

use a2a_tower::engine::TaskLayer;
use a2a_tower::log::{AppendRequest, TaskBackend, TaskStore};
use a2a_tower::queue::{QueueRecord, TARGET_KEY, TeamService};
use a2a_tower::types::TaskState;
use support::gated::Gated;
use support::queue::{
    AUTH, Lab, Store, card, echoes, held, input, queue_for, send, settles, until_queue,
};
use support::tasks::until_terminal;

/// One append of a commit: its task (or stream), whether it ends the task,
/// and the queue records it carries.
#[derive(Debug, Clone)]
struct Append {
    task_id: String,
    ends: bool,
    queue: Vec<QueueRecord>,
}

/// Every commit made, in order: its appends.
type Commits = Arc<Mutex<Vec<Vec<Append>>>>;

fn appends(requests: &[AppendRequest]) -> Vec<Append> {
    requests
        .iter()
        .map(|r| Append {
            task_id: r.task_id.clone(),
            ends: r.records.iter().any(|r| r.is_terminal()),
            queue: r.records.iter().filter_map(QueueRecord::of).collect(),
        })
        .collect()
}

/// A team of echo probes named `names` over `store`.
struct Counted {
    lab: Lab,
    log: Arc<dyn TaskBackend>,
    svc: TeamService,
    /// Every commit it made.
    commits: Commits,
}

async fn counted(store: &Store, names: &[&str]) -> Counted {
    let lab = Lab::default();
    let commits = Commits::default();
    let seen = commits.clone();
    let log = store.open().await;
    let store = TaskStore::from(log.clone()).map_records(move |inner| {
        Gated::new(inner, move |requests| {
            seen.lock().unwrap().push(appends(requests));
            Ok(())
        })
    });
    let svc = echoes(&lab, names).service(TaskLayer::new(card(), store).unwrap());
    svc.recover().await.unwrap();
    Counted {
        lab,
        log,
        svc,
        commits,
    }
}

/// The commits that touch the task `id`.
fn of(commits: &Commits, id: &str) -> Vec<Vec<Append>> {
    commits
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.iter().any(|a| a.task_id == id))
        .cloned()
        .collect()
}

/// The commit that ended `id`, and whether it settled `id` too.
fn ending(commits: &Commits, id: &str) -> (Vec<Append>, bool) {
    let commit = of(commits, id)
        .into_iter()
        .find(|c| c.iter().any(|a| a.task_id == id && a.ends))
        .expect("the task's end was committed");
    let settled = commit.iter().flat_map(|a| &a.queue).any(settles(id));
    (commit, settled)
}

/// How many commits appended to the queue stream.
fn stream_commits(commits: &Commits) -> usize {
    let all = commits.lock().unwrap();
    all.iter()
        .filter(|c| c.iter().any(|a| a2a_tower::log::is_stream(&a.task_id)))
        .count()
}

async fn an_idle_context_costs_two_commits_per_message(store: Store) {
    let Counted { svc, commits, .. } = counted(&store, &["a"]).await;
    let ctx = support::queue::context();
    for text in ["m1", "m2", "m3"] {
        let before = stream_commits(&commits);
        let done = send(&svc, input(&ctx, text, &[])).await.unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        // Its settlement is committed by the time its answer is seen.
        let (end, settled) = ending(&commits, &done.id);
        assert!(settled, "the run's end carries its settlement: {end:?}");
        assert_eq!(end.len(), 2, "the task and the queue stream: {end:?}");
        // Admitted in its enqueue's commit, settled in its end's: two.
        let by_queue: Vec<_> = of(&commits, &done.id)
            .into_iter()
            .filter(|c| c.iter().any(|a| !a.queue.is_empty()))
            .collect();
        assert_eq!(by_queue.len(), 2, "{by_queue:?}");
        assert_eq!(stream_commits(&commits) - before, 2);
    }
}

async fn a_run_ending_while_an_input_waits_is_settled_with_its_admission(store: Store) {
    let Counted {
        lab,
        log,
        svc,
        commits,
    } = counted(&store, &["a"]).await;
    let ctx = support::queue::context();
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let second = queue_for(&svc, &ctx, "a", "second").await;
    lab.release("first");
    until_queue(&*log, &ctx, "the second settled", |recs| {
        recs.iter().any(settles(&second))
    })
    .await;
    let (end, settled) = ending(&commits, &first);
    assert!(!settled, "settled with the next admission: {end:?}");
    let with_admission = commits.lock().unwrap().iter().any(|c| {
        let queue: Vec<&QueueRecord> = c.iter().flat_map(|a| &a.queue).collect();
        queue.iter().any(|r| settles(&first)(r))
            && queue.iter().any(|r| support::queue::admits(&second)(r))
    });
    assert!(with_admission, "{:?}", commits.lock().unwrap());
    until_terminal(&*log, AUTH, &second).await;
}

async fn a_reply_that_may_hand_off_is_settled_with_the_handoff(store: Store) {
    let Counted {
        lab,
        log,
        svc,
        commits,
    } = counted(&store, &["a", "b"]).await;
    let ctx = support::queue::context();
    let done = send(&svc, input(&ctx, "over to @b", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    let recs = until_queue(&*log, &ctx, "a settled", |recs| {
        recs.iter().any(settles(&done.id))
    })
    .await;
    let (end, settled) = ending(&commits, &done.id);
    assert!(!settled, "the drain settles it: {end:?}");
    let with_handoff = commits.lock().unwrap().iter().any(|c| {
        let queue: Vec<&QueueRecord> = c.iter().flat_map(|a| &a.queue).collect();
        queue.iter().any(|r| settles(&done.id)(r))
            && queue
                .iter()
                .any(|r| matches!(r, QueueRecord::Entered { hops: 1, .. }))
    });
    assert!(with_handoff, "{recs:?}");
    // The input it hands off runs (its reply names only `b`, itself).
    lab.until("b ran", |b| (b.texts("b").len() == 1).then_some(()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_context_costs_two_commits_per_message_on_memory() {
    an_idle_context_costs_two_commits_per_message(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_context_costs_two_commits_per_message_on_sqlite() {
    an_idle_context_costs_two_commits_per_message(Store::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ending_while_an_input_waits_is_settled_with_its_admission_on_memory() {
    a_run_ending_while_an_input_waits_is_settled_with_its_admission(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ending_while_an_input_waits_is_settled_with_its_admission_on_sqlite() {
    a_run_ending_while_an_input_waits_is_settled_with_its_admission(Store::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_may_hand_off_is_settled_with_the_handoff_on_memory() {
    a_reply_that_may_hand_off_is_settled_with_the_handoff(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_may_hand_off_is_settled_with_the_handoff_on_sqlite() {
    a_reply_that_may_hand_off_is_settled_with_the_handoff(Store::sqlite()).await;
}
