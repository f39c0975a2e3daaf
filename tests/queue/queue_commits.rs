//! What the delivery queue commits per message, counted at the log: a
//! blocking message to a quick agent in an idle context is one commit (its
//! task created and ended, its entry, admission and settlement; only a
//! check of the stream's revision when that leaves the queue as it was); to an
//! agent that waits before it commits, two (the admission alone, then the
//! run's end with its settlement); a run that ends while an input waits is
//! settled, and that input admitted, in the commit that ends it (refused,
//! the end is committed alone and the drain does both); a reply that may
//! hand off is settled by the drain with its handoff's input.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput, TaskLayer};
use a2a_tower::log::{AppendRequest, LogError, LogErrorKind, TaskBackend, TaskStore};
use a2a_tower::queue::{AGENT_KEY, QueueRecord, TARGET_KEY, Team, TeamService};
use a2a_tower::types::{Task, TaskState};
use futures_core::Stream;
use support::gated::Gated;
use support::queue::{
    AUTH, Lab, Store, card, echoes, held, input, queue_cases, queue_for, send, settles, until_queue,
};
use support::tasks::until_terminal;

/// One append of a commit: its task (or stream), the sequence number it
/// expects, whether it ends the task, and the queue records it carries.
#[derive(Debug, Clone)]
struct Append {
    task_id: String,
    expected: u64,
    ends: bool,
    queue: Vec<QueueRecord>,
    /// No record at all: a check of the task's (the stream's) position.
    check: bool,
    /// The sequence number it leaves the task at.
    after: u64,
}

/// Every commit made, in order: its appends.
type Commits = Arc<Mutex<Vec<Vec<Append>>>>;

fn appends(requests: &[AppendRequest]) -> Vec<Append> {
    requests
        .iter()
        .map(|r| Append {
            task_id: r.task_id.clone(),
            expected: r.expected,
            ends: r.records.iter().any(|r| r.is_terminal()),
            queue: r.records.iter().filter_map(QueueRecord::of).collect(),
            check: r.records.is_empty(),
            after: r.expected + r.records.len() as u64,
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
    let team = echoes(&lab, names);
    counted_team(store, lab, team).await
}

/// `team` over `store`, and every commit it makes.
async fn counted_team(store: &Store, lab: Lab, team: Team) -> Counted {
    refusing_once(store, lab, team, |_| false).await
}

/// [`counted_team`], the first commit `refuse` picks refused as a lost race
/// (and not counted).
async fn refusing_once(
    store: &Store,
    lab: Lab,
    team: Team,
    refuse: impl Fn(&[Append]) -> bool + Send + Sync + 'static,
) -> Counted {
    let commits = Commits::default();
    let seen = commits.clone();
    let refused = AtomicBool::new(false);
    let log = store.open().await;
    let store = TaskStore::from(log.clone()).map_records(move |inner| {
        Gated::new(inner, move |requests| {
            let made = appends(requests);
            if refuse(&made) && !refused.swap(true, Ordering::SeqCst) {
                return Err(LogError::new(LogErrorKind::Conflict));
            }
            seen.lock().unwrap().push(made);
            Ok(())
        })
    });
    let svc = team.service(TaskLayer::new(card(), store).unwrap());
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

/// A text agent replying with its input: its reply and its end are one
/// commit.
struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

/// A text agent replying with its input in one commit, or failing on
/// `fail`.
struct Quick;

impl Agent for Quick {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let reply = match input.text.as_str() {
            "fail" => Err("it fails".into()),
            _ => Ok(input.text),
        };
        futures_util::stream::iter([reply])
    }
}

/// `queue` is a whole run's records: its entry, its admission and its
/// completed settlement (`what` shown if not).
fn assert_whole_run<Q: std::borrow::Borrow<QueueRecord>>(queue: &[Q], what: &dyn std::fmt::Debug) {
    let queue: Vec<&QueueRecord> = queue.iter().map(Q::borrow).collect();
    assert!(
        matches!(
            queue[..],
            [
                QueueRecord::Entered { .. },
                QueueRecord::Admitted { .. },
                QueueRecord::Settled {
                    completed: true,
                    ..
                }
            ]
        ),
        "{what:?}"
    );
}

/// A team of two [`Quick`] agents, `a` (the default) and `b`.
fn quick_pair() -> Team {
    Team::builder()
        .agent("a", Quick)
        .agent("b", Quick)
        .build()
        .unwrap()
}

/// The agent that ran `t` (its `queue.agent`).
fn agent(t: &Task) -> serde_json::Value {
    t.metadata.as_ref().unwrap()[AGENT_KEY].clone()
}

async fn an_idle_context_costs_one_commit_per_quick_message(store: Store) {
    let team = Team::builder().agent("a", Echo).build().unwrap();
    let Counted { svc, commits, .. } = counted_team(&store, Lab::default(), team).await;
    let ctx = support::queue::context();
    let mut revision = None;
    for text in ["m1", "m2", "m3"] {
        let before = stream_commits(&commits);
        let done = send(&svc, input(&ctx, text, &[])).await.unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        // Created, admitted, ended and settled: one commit of two appends.
        let all = of(&commits, &done.id);
        assert_eq!(all.len(), 1, "{all:?}");
        let (end, settled) = ending(&commits, &done.id);
        assert_eq!(end.len(), 2, "the task and the queue stream: {end:?}");
        assert_eq!(stream_commits(&commits) - before, 1);
        let queue: Vec<&QueueRecord> = end.iter().flat_map(|a| &a.queue).collect();
        let Some(at) = revision else {
            // The first makes `a` the context's last replier: the stream
            // records its entry, admission and settlement.
            assert!(settled, "the run's end carries its settlement: {end:?}");
            assert_whole_run(&queue, &queue);
            revision = Some(end[1].after);
            continue;
        };
        // The next ones leave the queue as they found it (entered, run and
        // settled in one commit, `a` the last replier still): the stream is
        // only checked to be at the revision the first left.
        assert!(end[1].check, "no queue record: {end:?}");
        assert_eq!(end[1].expected, at, "{end:?}");
    }
}

async fn a_quick_message_writes_to_the_stream_only_what_changes_the_queue(store: Store) {
    let Counted {
        log, svc, commits, ..
    } = counted_team(&store, Lab::default(), quick_pair()).await;
    let ctx = support::queue::context();
    // The stream's append in the commit that ended `t`.
    let stream_append = |t: &Task| {
        let (end, _) = ending(&commits, &t.id);
        end.into_iter()
            .find(|a| a2a_tower::log::is_stream(&a.task_id))
            .expect("the queue stream's append")
    };
    let first = send(&svc, input(&ctx, "m1", &[])).await.unwrap();
    assert_eq!(agent(&first), "a");
    assert!(!stream_append(&first).check);
    // To `a` again: nothing changes.
    let same = send(&svc, input(&ctx, "m2", &[])).await.unwrap();
    let checked = stream_append(&same);
    assert!(checked.check, "{checked:?}");
    // To `b`, which completes: the last replier changes, so it is recorded.
    let to_b = send(&svc, input(&ctx, "m3", &[(TARGET_KEY, "b")]))
        .await
        .unwrap();
    assert_eq!(agent(&to_b), "b");
    let recorded = stream_append(&to_b);
    assert_eq!(recorded.expected, checked.expected, "{recorded:?}");
    assert_whole_run(&recorded.queue, &recorded);
    // A failed reply (to `b`, the last replier) leaves it so: a check, at
    // the revision `m3` left.
    let failed = send(&svc, input(&ctx, "fail", &[])).await.unwrap();
    assert_eq!(failed.status.state, TaskState::Failed);
    let after_fail = stream_append(&failed);
    assert!(after_fail.check, "{after_fail:?}");
    assert_eq!(after_fail.expected, recorded.after);
    // Another host reads the stream: `b` is the last replier; its message
    // leaves the revision where the checks found it.
    let other = support::queue::serve(log.clone(), quick_pair()).await;
    let next = send(&other, input(&ctx, "m5", &[])).await.unwrap();
    assert_eq!(agent(&next), "b", "the last replier the stream records");
    assert_eq!(next.status.state, TaskState::Completed);
    let stream = log.read(AUTH, &after_fail.task_id, 0).await.unwrap();
    let revision = stream.last().map(|r| r.seq);
    assert_eq!(revision, Some(after_fail.expected), "the queue as it was");
}

// A check refused because another host changed the last replier meanwhile
// is made again on the caught-up view, where the message now changes the
// queue: that request carries the entry, admission and settlement whole.
async fn a_check_made_again_on_a_changed_queue_records_its_entry(store: Store) {
    let ctx = support::queue::context();
    let other: Arc<std::sync::OnceLock<TeamService>> = Arc::default();
    let (host, at) = (other.clone(), ctx.clone());
    // The first check of this host: before it reaches the log, the other
    // host makes `b` the last replier, then the check is refused.
    let refuse = move |commit: &[Append]| {
        let checks = commit.iter().any(|a| a.check);
        if checks && let Some(other) = host.get() {
            let (other, at) = (other.clone(), at.clone());
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async move {
                    let to_b = input(&at, "to b", &[(TARGET_KEY, "b")]);
                    let done = send(&other, to_b).await.unwrap();
                    assert_eq!(agent(&done), "b");
                })
            });
        }
        checks
    };
    let Counted {
        log, svc, commits, ..
    } = refusing_once(&store, Lab::default(), quick_pair(), refuse).await;
    send(&svc, input(&ctx, "m1", &[])).await.unwrap();
    let _ = other.set(support::queue::serve(log.clone(), quick_pair()).await);
    let to_a = input(&ctx, "m2", &[(TARGET_KEY, "a")]);
    let done = tokio::spawn(async move { send(&svc, to_a).await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(agent(&done), "a");
    let (end, settled) = ending(&commits, &done.id);
    assert!(settled, "made again, it records: {end:?}");
    let queue: Vec<&QueueRecord> = end.iter().flat_map(|a| &a.queue).collect();
    assert_whole_run(&queue, &queue);
}

// Two hosts send quick messages into one context at once, some naming `b`:
// those that leave the queue as they found it only check its revision (both
// hosts' checks may pass together), those that change the last replier
// record it, and a check the other host's records moved past is refused and
// made again. Every message completes with its own reply, each on the agent
// it named, and the context is left idle: a last message runs at once.
async fn two_hosts_quick_messages_into_one_context_all_complete(store: Store) {
    let Counted {
        log, svc, commits, ..
    } = counted_team(&store, Lab::default(), quick_pair()).await;
    let other = support::queue::serve(log.clone(), quick_pair()).await;
    let ctx = support::queue::context();
    send(&svc, input(&ctx, "m0", &[])).await.unwrap();
    let sends: Vec<_> = (1..=24)
        .map(|i| {
            let host = if i % 2 == 0 {
                svc.clone()
            } else {
                other.clone()
            };
            let ctx = ctx.clone();
            tokio::spawn(async move {
                let text = format!("m{i}");
                let to_b: &[(&str, &str)] = if i % 3 == 0 {
                    &[(TARGET_KEY, "b")]
                } else {
                    &[]
                };
                let done = send(&host, input(&ctx, &text, to_b)).await.unwrap();
                (i, text, done)
            })
        })
        .collect();
    let mut ids = std::collections::HashSet::new();
    for sent in sends {
        let (i, text, done) = sent.await.unwrap();
        assert_eq!(done.status.state, TaskState::Completed, "{text}");
        assert_eq!(support::queue::output(&done), std::slice::from_ref(&text));
        if i % 3 == 0 {
            assert_eq!(agent(&done), "b", "{text} named b");
        }
        assert!(ids.insert(done.id.clone()), "{text}: one task each");
    }
    let checked = commits
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .filter(|a| a.check)
        .count();
    assert!(checked > 0, "this host checked the stream at least once");
    for host in [&svc, &other] {
        let last = send(host, input(&ctx, "last", &[])).await.unwrap();
        assert_eq!(last.status.state, TaskState::Completed);
    }
}

async fn quick_messages_sent_at_once_are_admitted_one_by_one(store: Store) {
    let team = Team::builder().agent("a", Echo).build().unwrap();
    let Counted { svc, commits, .. } = counted_team(&store, Lab::default(), team).await;
    let ctx = support::queue::context();
    // Sent together: the first may open the context's stream, the rest
    // wait for the context's lock as one batch.
    let sends: Vec<_> = (0..8)
        .map(|i| {
            let (svc, ctx) = (svc.clone(), ctx.clone());
            tokio::spawn(async move { send(&svc, input(&ctx, &format!("m{i}"), &[])).await })
        })
        .collect();
    for sent in sends {
        let done = sent.await.unwrap().unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        // Each finds the context idle as the one before it ended: created,
        // admitted, ended and settled in one commit, as if sent alone
        // (queued together, each would be entered, admitted and ended
        // apart).
        let all = of(&commits, &done.id);
        assert_eq!(all.len(), 1, "{all:?}");
        let (end, settled) = ending(&commits, &done.id);
        let checked = end.iter().any(|a| a.check);
        assert!(
            settled || checked,
            "the run's end carries its settlement, or checks a queue it leaves as it was: {end:?}"
        );
        assert!(end.len() <= 2, "the task and the queue stream: {end:?}");
    }
}

async fn a_run_that_waits_first_is_admitted_alone_then_settled_at_its_end(store: Store) {
    let Counted {
        lab, svc, commits, ..
    } = counted(&store, &["a"]).await;
    let ctx = support::queue::context();
    let before = stream_commits(&commits);
    let sent = {
        let svc = svc.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move { send(&svc, input(&ctx, "hold:slow", &[])).await })
    };
    let run = lab.started("hold:slow").await;
    // The agent waits before it emits anything: its admission is committed
    // alone (the task WORKING, the stream's entry and admission).
    let admitted = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let all = of(&commits, &run.task_id);
            if !all.is_empty() {
                return all;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the admission committed");
    assert_eq!(admitted.len(), 1, "{admitted:?}");
    assert!(admitted[0].iter().all(|a| !a.ends), "{admitted:?}");
    let queue: Vec<&QueueRecord> = admitted[0].iter().flat_map(|a| &a.queue).collect();
    assert!(
        matches!(
            queue[..],
            [QueueRecord::Entered { .. }, QueueRecord::Admitted { .. }]
        ),
        "{queue:?}"
    );
    lab.release("slow");
    let done = sent.await.unwrap().unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let (end, settled) = ending(&commits, &done.id);
    assert!(settled, "the run's end carries its settlement: {end:?}");
    // The queue stream: the admission's commit and the end's.
    assert_eq!(stream_commits(&commits) - before, 2);
}

// The caller of a blocking send drives its run admitted at once; a caller
// that goes away leaves the run going on its own, to its end and settlement.
async fn a_caller_that_goes_away_leaves_its_run_going(store: Store) {
    let Counted { lab, log, svc, .. } = counted(&store, &["a"]).await;
    let ctx = support::queue::context();
    let sent = {
        let svc = svc.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move { send(&svc, input(&ctx, "hold:gone", &[])).await })
    };
    let run = lab.started("hold:gone").await;
    sent.abort();
    assert!(sent.await.unwrap_err().is_cancelled());
    // The agent waits: its admission is committed alone, at once.
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while log.snapshot(AUTH, &run.task_id).await.is_err() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the admission committed");
    lab.release("gone");
    let done = until_terminal(&*log, AUTH, &run.task_id).await;
    assert_eq!(done.status.state, TaskState::Completed);
    until_queue(&*log, &ctx, "the run settled", |recs| {
        recs.iter().any(settles(&run.task_id))
    })
    .await;
    // The context is free for the next message.
    let next = send(&svc, input(&ctx, "next", &[])).await.unwrap();
    assert_eq!(next.status.state, TaskState::Completed);
}

// A blocking caller is answered once its run asks for input, though the
// agent goes on running after asking.
async fn a_caller_is_answered_when_its_run_asks_for_input(store: Store) {
    let Counted { lab, svc, .. } = counted(&store, &["a"]).await;
    let ctx = support::queue::context();
    let asked = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        send(&svc, input(&ctx, "ask then hold:on", &[])),
    )
    .await
    .expect("answered while the agent still runs")
    .unwrap();
    assert_eq!(asked.status.state, TaskState::InputRequired);
    lab.release("on");
}

// The commit that ends a run while an input waits for its agent settles it
// and admits that input: one commit on the queue's critical path per
// message.
async fn a_run_ending_while_an_input_waits_admits_it_in_its_closing_commit(store: Store) {
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
    assert!(settled, "settled by its closing commit: {end:?}");
    let queue: Vec<&QueueRecord> = end.iter().flat_map(|a| &a.queue).collect();
    assert!(
        queue.iter().any(|r| support::queue::admits(&second)(r)),
        "which admits the next input: {end:?}"
    );
    assert!(end.iter().any(|a| a.task_id == second), "{end:?}");
    let admissions = commits
        .lock()
        .unwrap()
        .iter()
        .filter(|c| {
            c.iter()
                .flat_map(|a| &a.queue)
                .any(support::queue::admits(&second))
        })
        .count();
    assert_eq!(admissions, 1, "{:?}", commits.lock().unwrap());
    // With nothing queued behind it, the second's end settles it.
    let done = until_terminal(&*log, AUTH, &second).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert!(ending(&commits, &second).1);
}

// A closing commit whose carried admission is refused (the queue or the
// head's task moved meanwhile) ends the run alone; the drain then settles
// it and admits the head, which it reads again.
async fn a_refused_closing_admission_is_left_to_the_drain(store: Store) {
    let lab = Lab::default();
    let team = echoes(&lab, &["a"]);
    let carries = |made: &[Append]| {
        made.iter().any(|a| a.ends)
            && made
                .iter()
                .flat_map(|a| &a.queue)
                .any(|r| matches!(r, QueueRecord::Admitted { .. }))
    };
    let Counted {
        lab,
        log,
        svc,
        commits,
    } = refusing_once(&store, lab, team, carries).await;
    let ctx = support::queue::context();
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let second = queue_for(&svc, &ctx, "a", "second").await;
    lab.release("first");
    let done = until_terminal(&*log, AUTH, &second).await;
    assert_eq!(done.status.state, TaskState::Completed);
    let (end, settled) = ending(&commits, &first);
    assert!(!settled, "the end committed alone: {end:?}");
    let by_drain = commits.lock().unwrap().iter().any(|c| {
        let queue: Vec<&QueueRecord> = c.iter().flat_map(|a| &a.queue).collect();
        !c.iter().any(|a| a.ends)
            && queue.iter().any(|r| settles(&first)(r))
            && queue.iter().any(|r| support::queue::admits(&second)(r))
    });
    assert!(by_drain, "{:?}", commits.lock().unwrap());
}

// A blocking message without a context id whose run ends in the commit that
// creates its task keeps no queue stream: one commit of one append, as on
// the engine alone. The context's next message naming no agent still goes
// to the agent that replied, on this host and on another (which finds it
// among the context's tasks), and the stream that message creates starts
// with that replier, so a third host reading the stream agrees.
async fn a_one_message_context_keeps_no_stream(store: Store) {
    let quick = quick_pair;
    let Counted {
        log, svc, commits, ..
    } = counted_team(&store, Lab::default(), quick()).await;
    let to_b = [(TARGET_KEY, "b")];
    let first = send(&svc, input("", "hello", &to_b)).await.unwrap();
    assert_eq!(first.status.state, TaskState::Completed);
    {
        let made = commits.lock().unwrap();
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(made[0].len(), 1, "the task alone: {made:?}");
        assert!(made[0][0].queue.is_empty(), "{made:?}");
    }
    // On this host.
    let again = send(&svc, input(&first.context_id, "again", &[]))
        .await
        .unwrap();
    assert_eq!(agent(&again), "b", "the replier, not the default agent");
    // On another host: a context with no stream, its replier read from its
    // tasks; its message fails, so `b` stays the last replier.
    let lone = send(&svc, input("", "hello", &to_b)).await.unwrap();
    assert_eq!(
        stream_commits(&commits),
        1,
        "the second context kept none either"
    );
    let other = support::queue::serve(log.clone(), quick()).await;
    let failed = send(&other, input(&lone.context_id, "fail", &[]))
        .await
        .unwrap();
    assert_eq!(failed.status.state, TaskState::Failed);
    assert_eq!(agent(&failed), "b");
    // A third host reads the stream the failed message created.
    let third = support::queue::serve(log.clone(), quick()).await;
    let next = send(&third, input(&lone.context_id, "next", &[]))
        .await
        .unwrap();
    assert_eq!(agent(&next), "b", "the stream starts with the replier");
}

// A head that another agent can run, behind the input a closing commit
// admits, runs at once too (the drain's), not after the admitted run.
async fn a_head_behind_the_closing_admission_runs_if_its_agent_is_free(store: Store) {
    let Counted {
        lab,
        log,
        svc,
        commits,
    } = counted(&store, &["a", "b"]).await;
    let ctx = support::queue::context();
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let second = queue_for(&svc, &ctx, "a", "hold:second").await;
    let third = queue_for(&svc, &ctx, "b", "third").await;
    lab.release("first");
    let done = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        until_terminal(&*log, AUTH, &third),
    )
    .await
    .expect("the third ran while the second holds its agent");
    assert_eq!(done.status.state, TaskState::Completed);
    let (end, _) = ending(&commits, &first);
    let admitted = end
        .iter()
        .flat_map(|a| &a.queue)
        .any(support::queue::admits(&second));
    assert!(admitted, "the second rode the first's end: {end:?}");
    lab.release("second");
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

queue_cases! {
    every: [
        an_idle_context_costs_one_commit_per_quick_message,
        a_quick_message_writes_to_the_stream_only_what_changes_the_queue,
        two_hosts_quick_messages_into_one_context_all_complete,
        a_check_made_again_on_a_changed_queue_records_its_entry,
        quick_messages_sent_at_once_are_admitted_one_by_one,
        a_run_that_waits_first_is_admitted_alone_then_settled_at_its_end,
        a_caller_that_goes_away_leaves_its_run_going,
        a_caller_is_answered_when_its_run_asks_for_input,
        a_run_ending_while_an_input_waits_admits_it_in_its_closing_commit,
        a_one_message_context_keeps_no_stream,
        a_refused_closing_admission_is_left_to_the_drain,
        a_head_behind_the_closing_admission_runs_if_its_agent_is_free,
        a_reply_that_may_hand_off_is_settled_with_the_handoff,
    ],
    durable: [],
}
