//! Every rule of the per-context delivery queue (see `a2a_tower::queue`),
//! through a `TeamService` driven with `oneshot`, with agents the test
//! controls (`support::queue::Probe`): refusal before any write, the queued
//! SUBMITTED task, the comparator, the strict head, targets and the
//! fallback, the one admission commit, one terminal in place, the controls
//! (append, steer, cancel, stop), handoff, recovery after a host died,
//! isolation of contexts, and a long queue.
//!
//! Each case runs on the memory log, on SQLite and on PostgreSQL (modules
//! `memory`, `sqlite`, `postgres`); the cases where a host dies run on the
//! durable two. Nothing is timed: a case waits for a condition (a probe's
//! report, a task's committed records, the context's queue stream) within a
//! guard whose expiry fails it.
//!
//! The PostgreSQL cases need PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and FAIL when it is
//! unreachable; each works in its own `a2a_test_<uuid>` schema, dropped
//! afterwards.

use crate::support;

use a2a_tower::engine::{EXECUTOR_FAILED_MESSAGE, RESTARTED_MESSAGE, TaskLayer};
use a2a_tower::log::Record;
use a2a_tower::queue::{
    AGENT_KEY, ERROR_KEY, HANDOFF_FROM_KEY, HANDOFF_KEY, MAX_HOPS, MODE_KEY, PRIORITY_KEY,
    Priority, QueueRecord, QueuedInput, TARGET_KEY, TARGET_UNAVAILABLE_MESSAGE, Team,
};
use a2a_tower::types::{StreamResponse, TaskState};
use a2a_tower::{A2aError, ErrorKind};
use serde_json::json;
use support::calls::{cancel, get, read_events, subscribe};
use support::queue::{
    AUTH, Host, Lab, Probe, Store, admits, context, die, echoes, held, host, how_many, input, list,
    output, position, queue_cases, queue_for, queue_records, send, send_now, send_stream, serve,
    settles, until_queue,
};
use support::tasks::{collected, meta, recorded, records, until, until_terminal};

queue_cases! {
    every: [
        bad_directives_are_refused_before_anything_is_written,
        a_queued_input_is_a_submitted_task_until_admitted,
        urgent_runs_first_then_arrival_order,
        the_head_waits_for_its_agent_and_nothing_skips_it,
        different_agents_run_at_once_in_one_context,
        a_run_waiting_for_input_keeps_its_agent_busy,
        an_input_naming_no_agent_waits_for_an_idle_context,
        an_input_naming_no_agent_goes_to_the_default_without_a_replier,
        admission_is_one_commit_after_the_queued_records,
        a_blocking_input_into_an_idle_context_is_admitted_as_it_is_queued,
        a_failing_run_ends_failed_in_place_with_its_chunks,
        a_canceled_run_ends_canceled_in_place_with_its_chunks,
        append_hands_the_message_to_the_running_execution,
        append_without_a_running_execution_is_unsupported,
        steer_cancels_the_targets_run_and_runs_next,
        cancel_removes_a_queued_input_and_the_rest_run,
        stopping_the_run_lets_the_drain_go_on,
        a_reply_naming_an_agent_hands_off_to_it,
        handoff_chains_stop_at_max_hops,
        contexts_never_wait_for_each_other,
    ],
    durable: [
        a_named_agent_gone_after_a_restart_fails_its_input_visibly,
        recovery_fails_the_interrupted_run_once_and_drains_the_queue,
    ],
}

/// The state of each task, by id.
async fn states(log: &dyn a2a_tower::log::TaskBackend, ids: &[&str]) -> Vec<TaskState> {
    let mut out = Vec::new();
    for id in ids {
        out.push(log.snapshot(AUTH, id).await.unwrap().state());
    }
    out
}

fn texts(messages: &[a2a_tower::types::Message]) -> Vec<String> {
    messages
        .iter()
        .map(a2a_tower::types::Message::text)
        .collect()
}

fn violation(err: &A2aError) -> &str {
    assert_eq!(err.kind(), ErrorKind::InvalidParams, "{}", err.message());
    &err.violations()[0].0
}

// ------------------------------------------------------------ 1. refusal

// An unknown `queue.target`, or a `queue.priority` / `queue.mode` that is
// not one of the names, is InvalidParams, and nothing is written: no task,
// no queue stream, no run.
async fn bad_directives_are_refused_before_anything_is_written(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    let cases = [
        (TARGET_KEY, "nobody"),
        (PRIORITY_KEY, "high"),
        (PRIORITY_KEY, "URGENT"),
        (MODE_KEY, "later"),
    ];
    for (key, value) in cases {
        let err = send_now(&svc, input(&ctx, "hi", &[(key, value)]))
            .await
            .unwrap_err();
        assert_eq!(violation(&err), format!("message.metadata.{key}"));
        // A blocking or streaming send is refused the same way.
        let err = send(&svc, input(&ctx, "hi", &[(key, value)]))
            .await
            .unwrap_err();
        assert_eq!(violation(&err), format!("message.metadata.{key}"));
    }
    assert!(list(&svc, &ctx).await.is_empty());
    assert!(
        log.live_tasks(None, 10).await.unwrap().is_empty(),
        "no task and no queue stream"
    );
    assert!(lab.read(|b| b.runs.is_empty()));
    // The names themselves are accepted.
    let ok = [(TARGET_KEY, "a"), (PRIORITY_KEY, "normal")];
    let done = send(&svc, input(&ctx, "hi", &ok)).await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
}

// ------------------------------------------------- 2. the queued task

// Behind a running input, a new one is a SUBMITTED task of its context:
// `returnImmediately` answers it, GetTask and ListTasks (by context) show
// it, its history is empty; SubscribeToTask and a streaming send start with
// it SUBMITTED and follow it through WORKING to COMPLETED, and then its
// message is in its history.
async fn a_queued_input_is_a_submitted_task_until_admitted(store: Store) {
    let Host { lab, svc, ctx, .. } = host(&store, &["a"]).await;
    let first = held(&svc, &lab, &ctx, "a", "first").await;

    let queued = send_now(&svc, input(&ctx, "second", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(queued.status.state, TaskState::Submitted);
    assert_eq!(queued.context_id, ctx);
    assert!(queued.history.is_empty(), "not admitted yet");
    let got = get(&svc, &queued.id).await.unwrap();
    assert_eq!(got.status.state, TaskState::Submitted);
    assert!(got.history.is_empty());
    let listed = list(&svc, &ctx).await;
    let state_of = |id: &str| {
        let found: Vec<TaskState> = listed
            .iter()
            .filter(|t| t.id == id)
            .map(|t| t.status.state)
            .collect();
        found
    };
    assert_eq!(listed.len(), 2);
    assert_eq!(state_of(&first), [TaskState::Working]);
    assert_eq!(state_of(&queued.id), [TaskState::Submitted]);
    assert!(list(&svc, &context()).await.is_empty(), "by context");

    let subscribed = subscribe(&svc, &queued.id).await.unwrap();
    let streamed = send_stream(&svc, input(&ctx, "third", &[(TARGET_KEY, "a")])).await;
    lab.release("first");

    for (events, text) in [
        (read_events(subscribed).await, "second"),
        (read_events(streamed).await, "third"),
    ] {
        let StreamResponse::Task(start) = &events[0] else {
            panic!("the first event is the task: {events:?}")
        };
        assert_eq!(start.status.state, TaskState::Submitted);
        assert!(start.history.is_empty());
        let states: Vec<TaskState> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::StatusUpdate(u) => Some(u.status.state),
                _ => None,
            })
            .collect();
        assert_eq!(states.first(), Some(&TaskState::Working), "{events:?}");
        assert_eq!(states.last(), Some(&TaskState::Completed), "{events:?}");
        let done = get(&svc, &start.id).await.unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(texts(&done.history), [text], "admitted: in its history");
        assert_eq!(output(&done), [text]);
    }
    assert_eq!(
        lab.read(|b| b.texts("a")),
        ["hold:first", "second", "third"]
    );

    // An input that runs at once (its agent idle) streams from SUBMITTED too.
    for i in 0..20 {
        let text = format!("now{i}");
        let events = read_events(send_stream(&svc, input(&context(), &text, &[])).await).await;
        let StreamResponse::Task(start) = &events[0] else {
            panic!("the first event is the task: {events:?}")
        };
        assert_eq!(start.status.state, TaskState::Submitted);
        let Some(StreamResponse::StatusUpdate(end)) = events.last() else {
            panic!("the last event is a status: {events:?}")
        };
        assert_eq!(end.status.state, TaskState::Completed);
    }
}

// ------------------------------------------------------ 3. comparator

// Behind a running input of agent a, normal and urgent inputs for a run
// urgent first, then normal, each in arrival order.
async fn urgent_runs_first_then_arrival_order(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    held(&svc, &lab, &ctx, "a", "first").await;
    let urgent = |text| input(&ctx, text, &[(TARGET_KEY, "a"), (PRIORITY_KEY, "urgent")]);
    queue_for(&svc, &ctx, "a", "n1").await;
    send_now(&svc, urgent("u1")).await.unwrap();
    let normal = [(TARGET_KEY, "a"), (PRIORITY_KEY, "normal")];
    send_now(&svc, input(&ctx, "n2", &normal)).await.unwrap();
    let last = send_now(&svc, urgent("u2")).await.unwrap().id;
    lab.release("first");
    lab.runs(5).await;
    until_terminal(&*log, AUTH, &last).await;
    assert_eq!(
        lab.read(|b| b.texts("a")),
        ["hold:first", "u1", "u2", "n1", "n2"]
    );
}

// ----------------------------------------------------- 4. strict head

// The head is for agent a, which runs; the next entry is for b, which is
// idle: b's entry waits until a's head is admitted, never skipping it. Then
// it runs at once, beside a's.
async fn the_head_waits_for_its_agent_and_nothing_skips_it(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a", "b"]).await;
    let a1 = held(&svc, &lab, &ctx, "a", "a1").await;
    let a2 = queue_for(&svc, &ctx, "a", "hold:a2").await;
    let b1 = queue_for(&svc, &ctx, "b", "b1").await;
    assert_eq!(
        get(&svc, &b1).await.unwrap().status.state,
        TaskState::Submitted
    );

    lab.release("a1");
    let done = until_terminal(&*log, AUTH, &b1).await;
    assert_eq!(done.status.state, TaskState::Completed);
    let recs = queue_records(&*log, &ctx).await;
    assert!(position(&recs, settles(&a1)) < position(&recs, admits(&a2)));
    assert!(
        position(&recs, admits(&a2)) < position(&recs, admits(&b1)),
        "b's entry was admitted after a's head: {recs:?}"
    );
    assert_eq!(
        get(&svc, &a2).await.unwrap().status.state,
        TaskState::Working,
        "b ran while a's run went on"
    );
    lab.release("a2");
    until_terminal(&*log, AUTH, &a2).await;
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:a1", "hold:a2"]);
}

// While a runs an input of the context, an input for b at the head runs at
// once: agents run concurrently in one context.
async fn different_agents_run_at_once_in_one_context(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a", "b"]).await;
    let a1 = held(&svc, &lab, &ctx, "a", "a1").await;
    let b1 = send(&svc, input(&ctx, "b1", &[(TARGET_KEY, "b")]))
        .await
        .unwrap();
    assert_eq!(b1.status.state, TaskState::Completed);
    assert_eq!(meta(&b1, AGENT_KEY), json!("b"));
    assert_eq!(
        get(&svc, &a1).await.unwrap().status.state,
        TaskState::Working
    );
    lab.release("a1");
    until_terminal(&*log, AUTH, &a1).await;
}

// A run that asks for input keeps its agent busy in the context: an input
// queued for that agent (and one for another agent behind it) waits until
// the answered run ends, then runs.
async fn a_run_waiting_for_input_keeps_its_agent_busy(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a", "b"]).await;
    let asked = send(&svc, input(&ctx, "ask", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let q = queue_for(&svc, &ctx, "a", "q").await;
    // Behind the head for a, an input for the idle b waits too.
    let b1 = queue_for(&svc, &ctx, "b", "b1").await;
    assert_eq!(
        get(&svc, &q).await.unwrap().status.state,
        TaskState::Submitted
    );
    let mut answer = input(&ctx, "answer", &[]);
    answer.task_id.clone_from(&asked.id);
    let answered = send(&svc, answer).await.unwrap();
    assert_eq!(answered.id, asked.id);
    assert_eq!(answered.status.state, TaskState::Completed);
    for id in [&q, &b1] {
        let done = until_terminal(&*log, AUTH, id).await;
        assert_eq!(done.status.state, TaskState::Completed);
    }
    let recs = queue_records(&*log, &ctx).await;
    assert!(
        position(&recs, settles(&asked.id)) < position(&recs, admits(&q)),
        "q waited for the answered run to end: {recs:?}"
    );
    assert!(position(&recs, admits(&q)) < position(&recs, admits(&b1)));
    assert_eq!(lab.read(|b| b.texts("a")), ["ask", "answer", "q"]);
}

// ---------------------------------------------------------- 5. targets

// An input naming no agent waits while any run of the context is going
// (though the default agent b is idle), then goes to the agent that last
// completed a reply in the context (a), not to the default.
async fn an_input_naming_no_agent_waits_for_an_idle_context(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    // b is the default.
    let svc = serve(log.clone(), echoes(&lab, &["b", "a"])).await;
    let ctx = context();
    let a1 = held(&svc, &lab, &ctx, "a", "a1").await;
    let free = send_now(&svc, input(&ctx, "free", &[])).await.unwrap().id;
    lab.release("a1");
    let done = until_terminal(&*log, AUTH, &free).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(meta(&done, AGENT_KEY), json!("a"), "the last replier");
    let recs = queue_records(&*log, &ctx).await;
    assert!(
        position(&recs, settles(&a1)) < position(&recs, admits(&free)),
        "it waited for the context to be idle: {recs:?}"
    );
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:a1", "free"]);
    assert!(lab.read(|b| b.texts("b")).is_empty());
}

// An input naming no agent goes to the default agent in a new context, and
// in a context whose only run failed (a failure is no reply).
async fn an_input_naming_no_agent_goes_to_the_default_without_a_replier(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    let svc = serve(log.clone(), echoes(&lab, &["b", "a"])).await;
    let fresh = send(&svc, input(&context(), "fresh", &[])).await.unwrap();
    assert_eq!(meta(&fresh, AGENT_KEY), json!("b"));
    let ctx = context();
    let failed = send(&svc, input(&ctx, "fail", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(failed.status.state, TaskState::Failed);
    let after = send(&svc, input(&ctx, "after", &[])).await.unwrap();
    assert_eq!(after.status.state, TaskState::Completed);
    assert_eq!(meta(&after, AGENT_KEY), json!("b"));
}

// A durable queue holds an input for x behind x's running input; the host
// dies; a host whose team has no x takes over: the interrupted run is
// FAILED by recovery, the input for x is FAILED visibly (never given to
// another agent), and the entry behind it runs.
async fn a_named_agent_gone_after_a_restart_fails_its_input_visibly(store: Store) {
    let lab = Lab::default();
    let ctx = context();
    let (x1, x2, y1) = die(&store, |log| {
        let (lab, ctx) = (lab.clone(), ctx.clone());
        async move {
            let svc = serve(log, echoes(&lab, &["x", "y"])).await;
            let x1 = queue_for(&svc, &ctx, "x", "hold:x1").await;
            lab.started("hold:x1").await;
            let x2 = queue_for(&svc, &ctx, "x", "x2").await;
            // Behind the head for x: it waits too.
            let y1 = queue_for(&svc, &ctx, "y", "y1").await;
            (x1, x2, y1)
        }
    });
    let log = store.open().await;
    assert_eq!(
        states(&*log, &[&x1, &x2, &y1]).await,
        [
            TaskState::Working,
            TaskState::Submitted,
            TaskState::Submitted
        ]
    );
    let svc = serve(log.clone(), echoes(&lab, &["y"])).await;
    let gone = until_terminal(&*log, AUTH, &x2).await;
    assert_eq!(gone.status.state, TaskState::Failed);
    let status = gone.status.message.as_ref().expect("a status message");
    assert_eq!(status.text(), TARGET_UNAVAILABLE_MESSAGE);
    assert_eq!(
        status.metadata.as_ref().unwrap()[ERROR_KEY],
        json!("TARGET_UNAVAILABLE")
    );
    assert!(gone.history.is_empty(), "never admitted");
    let y = until_terminal(&*log, AUTH, &y1).await;
    assert_eq!(y.status.state, TaskState::Completed);
    assert_eq!(meta(&y, AGENT_KEY), json!("y"));
    let interrupted = get(&svc, &x1).await.unwrap();
    assert_eq!(interrupted.status.state, TaskState::Failed);
    assert_eq!(
        interrupted.status.message.as_ref().unwrap().text(),
        RESTARTED_MESSAGE
    );
    assert_eq!(lab.read(|b| b.texts("x")), ["hold:x1"], "x2 never ran");
    assert_eq!(lab.read(|b| b.texts("y")), ["y1"]);
}

// ------------------------------------------------------- 6. admission

// A queued task has its Created and InputQueued records only; admission
// appends MetadataChanged (`queue.agent`), MessageAdmitted, WORKING and
// ExecutionStarted together, right after them, and nothing else.
async fn admission_is_one_commit_after_the_queued_records(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    held(&svc, &lab, &ctx, "a", "first").await;
    let q = queue_for(&svc, &ctx, "a", "hold:q").await;
    let queued = records(&*log, AUTH, &q).await;
    assert!(
        matches!(
            queued.as_slice(),
            [Record::Created { .. }, input] if QueuedInput::of(input).is_some()
        ),
        "{queued:?}"
    );
    lab.release("first");
    lab.started("hold:q").await;
    let read = log.read(AUTH, &q, 0).await.unwrap();
    let seqs: Vec<u64> = read.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
    let recs: Vec<&Record> = read.iter().map(|s| &*s.record).collect();
    let [_, _, changed, admitted, working, started] = recs.as_slice() else {
        panic!("{recs:?}")
    };
    let Record::MetadataChanged { metadata } = changed else {
        panic!("{changed:?}")
    };
    assert_eq!(metadata[AGENT_KEY], json!("a"));
    let Record::MessageAdmitted { message } = admitted else {
        panic!("{admitted:?}")
    };
    assert_eq!(message.text(), "hold:q");
    assert_eq!(
        (message.task_id.as_str(), message.context_id.as_str()),
        (q.as_str(), ctx.as_str())
    );
    assert_eq!(working.state(), Some(TaskState::Working));
    assert!(matches!(started, Record::ExecutionStarted { host } if &**host == "local"));
    let task = get(&svc, &q).await.unwrap();
    assert_eq!(meta(&task, AGENT_KEY), json!("a"));
    let recs = queue_records(&*log, &ctx).await;
    assert_eq!(how_many(&recs, admits(&q)), 1);
    lab.release("q");
    until_terminal(&*log, AUTH, &q).await;
}

/// The records of a task admitted in the commit that created it: created
/// with its agent (`a`), its message admitted, WORKING, this host's run;
/// no queued input.
fn created_working(recs: &[Record]) {
    let [created, admitted, working, started, ..] = recs else {
        panic!("{recs:?}")
    };
    let Record::Created {
        metadata: Some(metadata),
        ..
    } = created
    else {
        panic!("{created:?}")
    };
    assert_eq!(metadata[AGENT_KEY], json!("a"));
    assert!(matches!(admitted, Record::MessageAdmitted { message } if message.text() == "now"));
    assert_eq!(working.state(), Some(TaskState::Working));
    assert!(matches!(started, Record::ExecutionStarted { .. }));
    assert!(
        recs.iter().all(|r| QueuedInput::of(r).is_none()),
        "never queued: {recs:?}"
    );
}

// A blocking send into a context with nothing queued and its agent free is
// admitted in the commit that queues it: its task is created WORKING for
// the agent (never SUBMITTED with a queued input), and the queue stream
// records its entry and its admission together, so replaying the stream
// still finds every admission of the head. Behind a running input of the
// same agent, a blocking send is queued as before.
async fn a_blocking_input_into_an_idle_context_is_admitted_as_it_is_queued(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a", "b"]).await;
    let done = send(&svc, input(&ctx, "now", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(meta(&done, AGENT_KEY), json!("a"));
    assert_eq!(texts(&done.history), ["now"]);
    let recs = log.read(AUTH, &done.id, 0).await.ok();
    // Its records (a memory log packs a terminal task away: the durable two).
    if let Some(recs) = recs {
        let recs: Vec<Record> = recs.iter().map(|s| (*s.record).clone()).collect();
        created_working(&recs);
    }
    let stream = support::queue::queue_sequenced(&*log, &ctx).await;
    let queue: Vec<(u64, QueueRecord)> = stream
        .iter()
        .filter_map(|r| QueueRecord::of(&r.record).map(|q| (r.seq, q)))
        .collect();
    assert!(
        matches!(
            queue.as_slice(),
            [(entered, QueueRecord::Entered { .. }), (at, QueueRecord::Admitted { agent, .. }), ..]
                if *at == entered + 1 && agent == "a"
        ),
        "{queue:?}"
    );
    assert_eq!(support::queue::admissions(&stream)[0], done.id);

    // Behind a running input of its agent, it is queued first.
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let waits = tokio::spawn({
        let (svc, ctx) = (svc.clone(), ctx.clone());
        async move { send(&svc, input(&ctx, "then", &[(TARGET_KEY, "a")])).await }
    });
    let entered = |r: &QueueRecord| matches!(r, QueueRecord::Entered { .. });
    let recs = until_queue(&*log, &ctx, "the third entry", |recs| {
        how_many(recs, entered) == 3
    })
    .await;
    let Some(QueueRecord::Entered {
        task_id: queued, ..
    }) = recs.iter().rfind(|r| entered(r))
    else {
        unreachable!()
    };
    assert_eq!(
        get(&svc, queued).await.unwrap().status.state,
        TaskState::Submitted
    );
    assert!(
        records(&*log, AUTH, queued)
            .await
            .iter()
            .any(|r| QueuedInput::of(r).is_some())
    );
    lab.release("first");
    let then = waits.await.unwrap().unwrap();
    assert_eq!(&then.id, queued);
    assert_eq!(then.status.state, TaskState::Completed);
    until_terminal(&*log, AUTH, &first).await;
}

// -------------------------------------------- 7. one terminal in place

// A queued input whose agent streams two chunks and fails: the same task
// ends FAILED, with both chunks, and one terminal record.
async fn a_failing_run_ends_failed_in_place_with_its_chunks(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    held(&svc, &lab, &ctx, "a", "first").await;
    let q = queue_for(&svc, &ctx, "a", "fail").await;
    let all = recorded(&*log, AUTH, &q).await;
    lab.release("first");
    let records = collected(all).await;
    assert_eq!(records.iter().filter(|r| r.is_terminal()).count(), 1);
    let done = get(&svc, &q).await.unwrap();
    assert_eq!(done.status.state, TaskState::Failed);
    assert_eq!(
        done.status.message.as_ref().unwrap().text(),
        EXECUTOR_FAILED_MESSAGE
    );
    // Kept, as one text part (appended text chunks continue it).
    assert_eq!(output(&done), ["onetwo"], "the chunks are kept");
    assert_eq!(texts(&done.history), ["fail"]);
    assert_eq!(list(&svc, &ctx).await.len(), 2, "no other task");
}

// A queued input whose run streams two chunks and is canceled: the same
// task ends CANCELED with both chunks.
async fn a_canceled_run_ends_canceled_in_place_with_its_chunks(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    held(&svc, &lab, &ctx, "a", "first").await;
    let q = queue_for(&svc, &ctx, "a", "chunks:q").await;
    let all = recorded(&*log, AUTH, &q).await;
    lab.release("first");
    // Both chunks written: one text part (appended text continues it).
    until(&*log, AUTH, &q, |t| output(t) == ["onetwo"]).await;
    let canceled = cancel(&svc, &q).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let records = collected(all).await;
    assert_eq!(records.iter().filter(|r| r.is_terminal()).count(), 1);
    let done = get(&svc, &q).await.unwrap();
    assert_eq!(done.status.state, TaskState::Canceled);
    assert_eq!(output(&done), ["onetwo"]);
    assert_eq!(list(&svc, &ctx).await.len(), 2);
}

// -------------------------------------------------------- 8. controls

/// A message appended to the running task `task_id`.
fn appended(ctx: &str, task_id: &str, text: &str) -> a2a_tower::types::Message {
    let mut m = input(ctx, text, &[(MODE_KEY, "append")]);
    m.task_id = task_id.into();
    m
}

// `queue.mode: "append"` with the running task's id: the executor gets the
// message through its inputs, it is in the task's history, and no task is
// made.
async fn append_hands_the_message_to_the_running_execution(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    let l = queue_for(&svc, &ctx, "a", "listen").await;
    lab.started("listen").await;
    let t = send(&svc, appended(&ctx, &l, "more")).await.unwrap();
    assert_eq!(t.id, l, "the same task");
    assert_eq!(t.status.state, TaskState::Working);
    lab.until("the appended input", |b| {
        b.appended
            .contains(&(l.clone(), "more".to_owned()))
            .then_some(())
    })
    .await;
    send(&svc, appended(&ctx, &l, "done")).await.unwrap();
    let done = until_terminal(&*log, AUTH, &l).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(texts(&done.history), ["listen", "more", "done"]);
    assert_eq!(
        lab.read(|b| b.appended.clone()),
        [
            (l.clone(), "more".to_owned()),
            (l.clone(), "done".to_owned())
        ]
    );
    assert_eq!(list(&svc, &ctx).await.len(), 1, "no new task");
    assert_eq!(lab.read(|b| b.runs.len()), 1, "no new run");
}

// Appending to a task with no running execution (queued, or ended) is
// UnsupportedOperation and changes nothing; appending without a task id is
// InvalidParams.
async fn append_without_a_running_execution_is_unsupported(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let queued = queue_for(&svc, &ctx, "a", "queued").await;
    let err = send(&svc, appended(&ctx, &queued, "more"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    assert!(get(&svc, &queued).await.unwrap().history.is_empty());
    let err = send(&svc, input(&ctx, "more", &[(MODE_KEY, "append")]))
        .await
        .unwrap_err();
    assert_eq!(violation(&err), format!("message.metadata.{MODE_KEY}"));
    lab.release("first");
    let done = until_terminal(&*log, AUTH, &queued).await;
    let err = send(&svc, appended(&ctx, &first, "late"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    assert_eq!(get(&svc, &queued).await.unwrap().history, done.history);
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:first", "queued"]);
}

// `queue.mode: "steer"` for a while a runs and more inputs for a wait: a's
// run is CANCELED, the steer runs next, then the others in order.
async fn steer_cancels_the_targets_run_and_runs_next(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    let a1 = held(&svc, &lab, &ctx, "a", "a1").await;
    queue_for(&svc, &ctx, "a", "q1").await;
    let q2 = queue_for(&svc, &ctx, "a", "q2").await;
    let steer = [(MODE_KEY, "steer"), (TARGET_KEY, "a")];
    let s = send_now(&svc, input(&ctx, "steer", &steer)).await.unwrap();
    assert_eq!(s.status.state, TaskState::Submitted);
    let done = until_terminal(&*log, AUTH, &q2).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(
        get(&svc, &a1).await.unwrap().status.state,
        TaskState::Canceled
    );
    assert_eq!(
        get(&svc, &s.id).await.unwrap().status.state,
        TaskState::Completed
    );
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:a1", "steer", "q1", "q2"]);
}

// CancelTask on a queued input: CANCELED, it never runs, the rest run.
async fn cancel_removes_a_queued_input_and_the_rest_run(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    held(&svc, &lab, &ctx, "a", "first").await;
    queue_for(&svc, &ctx, "a", "q1").await;
    let q2 = queue_for(&svc, &ctx, "a", "q2").await;
    let q3 = queue_for(&svc, &ctx, "a", "q3").await;
    let canceled = cancel(&svc, &q2).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    lab.release("first");
    let done = until_terminal(&*log, AUTH, &q3).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:first", "q1", "q3"]);
    let q2 = get(&svc, &q2).await.unwrap();
    assert_eq!(q2.status.state, TaskState::Canceled);
    assert!(q2.history.is_empty(), "never admitted");
    let recs = queue_records(&*log, &ctx).await;
    assert_eq!(how_many(&recs, admits(&q2.id)), 0);
    assert_eq!(
        how_many(
            &recs,
            |r| matches!(r, QueueRecord::Removed { task_id } if *task_id == q2.id)
        ),
        1
    );
}

// CancelTask on the running input: CANCELED, and the next one runs.
async fn stopping_the_run_lets_the_drain_go_on(store: Store) {
    let Host { lab, log, svc, ctx } = host(&store, &["a"]).await;
    let a1 = held(&svc, &lab, &ctx, "a", "a1").await;
    let q1 = queue_for(&svc, &ctx, "a", "q1").await;
    let stopped = cancel(&svc, &a1).await.unwrap();
    assert_eq!(stopped.status.state, TaskState::Canceled);
    let done = until_terminal(&*log, AUTH, &q1).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(lab.read(|b| b.texts("a")), ["hold:a1", "q1"]);
}

// --------------------------------------------------------- 9. handoff

fn upper(text: &str) -> String {
    text.to_uppercase()
}

// echo's reply "hi @upper" names upper: echo's task completes, and a new
// task of the context runs on upper with the reply as input, referring to
// echo's task; echo's task is never reopened.
async fn a_reply_naming_an_agent_hands_off_to_it(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    let team = Team::builder()
        .executor("echo", Probe::echo(&lab, "echo"))
        .executor("upper", Probe::replying(&lab, "upper", upper))
        .build()
        .unwrap();
    let svc = serve(log.clone(), team).await;
    let ctx = context();
    let echo = send(&svc, input(&ctx, "hi @upper", &[])).await.unwrap();
    assert_eq!(echo.status.state, TaskState::Completed);
    assert_eq!(meta(&echo, AGENT_KEY), json!("echo"));
    let before = get(&svc, &echo.id).await.unwrap();
    let ran = lab
        .until("upper's run", |b| {
            b.runs.iter().find(|r| r.agent == "upper").cloned()
        })
        .await;
    let up = until_terminal(&*log, AUTH, &ran.task_id).await;
    assert_ne!(up.id, echo.id);
    assert_eq!(up.context_id, ctx);
    assert_eq!(up.status.state, TaskState::Completed);
    assert_eq!(output(&up), ["HI @UPPER"]);
    assert_eq!(meta(&up, HANDOFF_FROM_KEY), json!(echo.id));
    assert_eq!(meta(&up, AGENT_KEY), json!("upper"));
    let [admitted] = up.history.as_slice() else {
        panic!("one admitted message: {:?}", up.history)
    };
    assert_eq!(admitted.text(), "hi @upper");
    assert_eq!(admitted.reference_task_ids, std::slice::from_ref(&echo.id));
    assert_eq!(
        admitted.metadata.as_ref().unwrap()[HANDOFF_KEY]["taskId"],
        json!(echo.id)
    );
    let after = get(&svc, &echo.id).await.unwrap();
    assert_eq!(after, before, "echo's task is never reopened");
    assert_eq!(list(&svc, &ctx).await.len(), 2);
    let recs = until_queue(&*log, &ctx, "upper's run settled", |r| {
        r.iter().any(settles(&up.id))
    })
    .await;
    let entered: Vec<(Priority, u32)> = recs
        .iter()
        .filter_map(|r| match r {
            QueueRecord::Entered { priority, hops, .. } => Some((*priority, *hops)),
            _ => None,
        })
        .collect();
    assert_eq!(entered, [(Priority::Normal, 0), (Priority::Normal, 1)]);
    assert_eq!(lab.read(|b| b.runs.len()), 2);
}

// Two agents naming each other hand off until MAX_HOPS handoffs led to
// one input: MAX_HOPS + 1 runs, then the chain stops.
async fn handoff_chains_stop_at_max_hops(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    let team = Team::builder()
        .executor("ping", Probe::replying(&lab, "ping", |_| "@pong".into()))
        .executor("pong", Probe::replying(&lab, "pong", |_| "@ping".into()))
        .build()
        .unwrap();
    let svc = serve(log.clone(), team).await;
    let ctx = context();
    let first = send(&svc, input(&ctx, "go", &[])).await.unwrap();
    assert_eq!(first.status.state, TaskState::Completed);
    let n = usize::try_from(MAX_HOPS).unwrap() + 1;
    let runs = lab.runs(n).await;
    let last = runs[n - 1].task_id.clone();
    // The chain's last run settled: whatever it handed off would have been
    // committed with its settlement.
    let recs = until_queue(&*log, &ctx, "the last run settled", |r| {
        r.iter().any(settles(&last))
    })
    .await;
    let hops: Vec<u32> = recs
        .iter()
        .filter_map(|r| match r {
            QueueRecord::Entered { hops, .. } => Some(*hops),
            _ => None,
        })
        .collect();
    assert_eq!(hops, (0..=MAX_HOPS).collect::<Vec<_>>());
    assert_eq!(
        how_many(&recs, |r| matches!(r, QueueRecord::Admitted { .. })),
        n
    );
    let agents: Vec<String> = lab.read(|b| b.runs.iter().map(|r| r.agent.clone()).collect());
    let want: Vec<&str> = (0..n)
        .map(|i| if i % 2 == 0 { "ping" } else { "pong" })
        .collect();
    assert_eq!(agents, want);
    let tasks = list(&svc, &ctx).await;
    assert_eq!(tasks.len(), n);
    assert!(tasks.iter().all(|t| t.status.state == TaskState::Completed));
}

// -------------------------------------------------------- 10. recovery

// A host dies with one run WORKING and several inputs queued behind it; a
// new host (same id) recovers: the run is FAILED once (restarted), the
// queued inputs run in comparator order, nothing runs twice.
async fn recovery_fails_the_interrupted_run_once_and_drains_the_queue(store: Store) {
    let lab = Lab::default();
    let ctx = context();
    let (r, queued) = die(&store, |log| {
        let (lab, ctx) = (lab.clone(), ctx.clone());
        async move {
            let svc = serve(log, echoes(&lab, &["a"])).await;
            let r = queue_for(&svc, &ctx, "a", "hold:r").await;
            lab.started("hold:r").await;
            let mut queued = vec![
                queue_for(&svc, &ctx, "a", "n1").await,
                queue_for(&svc, &ctx, "a", "n2").await,
            ];
            let urgent = [(TARGET_KEY, "a"), (PRIORITY_KEY, "urgent")];
            queued.push(send_now(&svc, input(&ctx, "u", &urgent)).await.unwrap().id);
            queued.push(send_now(&svc, input(&ctx, "free", &[])).await.unwrap().id);
            (r, queued)
        }
    });
    let log = store.open().await;
    assert_eq!(
        log.snapshot(AUTH, &r).await.unwrap().state(),
        TaskState::Working
    );
    let svc =
        echoes(&lab, &["a"]).service(TaskLayer::new(support::queue::card(), log.clone()).unwrap());
    let recovered = svc.recover().await.unwrap();
    assert_eq!(recovered.closed, 1);
    assert_eq!(recovered.contexts, 1);
    for id in &queued {
        let done = until_terminal(&*log, AUTH, id).await;
        assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    }
    let interrupted = get(&svc, &r).await.unwrap();
    assert_eq!(interrupted.status.state, TaskState::Failed);
    assert_eq!(
        interrupted.status.message.as_ref().unwrap().text(),
        RESTARTED_MESSAGE
    );
    let recs = records(&*log, AUTH, &r).await;
    assert_eq!(recs.iter().filter(|r| r.is_terminal()).count(), 1);
    assert_eq!(
        lab.read(|b| b.texts("a")),
        ["hold:r", "u", "n1", "n2", "free"],
        "the interrupted run did not run again"
    );
    let queue = until_queue(&*log, &ctx, "the last run settled", |q| {
        q.iter().any(settles(&queued[3]))
    })
    .await;
    for id in std::iter::once(&r).chain(&queued) {
        assert_eq!(how_many(&queue, admits(id)), 1, "{id} admitted once");
    }
    assert_eq!(svc.recover().await.unwrap().closed, 0);
}

// ------------------------------------------------------- 11. isolation

// A context blocked by a long run (with inputs queued behind it) holds up
// no other context: a message in another context completes meanwhile, even
// on the same agent.
async fn contexts_never_wait_for_each_other(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    let svc = serve(log.clone(), echoes(&lab, &["a"])).await;
    let (c1, c2) = (context(), context());
    let long = held(&svc, &lab, &c1, "a", "long").await;
    let behind = queue_for(&svc, &c1, "a", "behind").await;
    let other = send(&svc, input(&c2, "other", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(other.status.state, TaskState::Completed);
    assert_eq!(
        states(&*log, &[&long, &behind]).await,
        [TaskState::Working, TaskState::Submitted]
    );
    lab.release("long");
    until_terminal(&*log, AUTH, &behind).await;
}

// ----------------------------------------------------------- 12. scale

/// How many inputs the long queue holds.
const MANY: usize = 2_000;

// 2,000 inputs queued behind a running one in one context are admitted in
// their order, each once (on the memory log: on a durable one each run
// waits for several synced commits, and this is no benchmark).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_entries_admit_in_order() {
    let lab = Lab::default();
    let log = Store::memory().open().await;
    let svc = serve(log.clone(), echoes(&lab, &["a"])).await;
    let ctx = context();
    held(&svc, &lab, &ctx, "a", "first").await;
    let mut last = String::new();
    for i in 0..MANY {
        last = queue_for(&svc, &ctx, "a", &format!("n{i}")).await;
    }
    lab.release("first");
    lab.runs(MANY + 1).await;
    let done = until_terminal(&*log, AUTH, &last).await;
    assert_eq!(done.status.state, TaskState::Completed);
    let queue = until_queue(&*log, &ctx, "the last run settled", |q| {
        q.iter().any(settles(&last))
    })
    .await;
    assert_eq!(
        how_many(&queue, |r| matches!(r, QueueRecord::Admitted { .. })),
        MANY + 1,
        "each admitted once"
    );
    let want: Vec<String> = std::iter::once("hold:first".to_owned())
        .chain((0..MANY).map(|i| format!("n{i}")))
        .collect();
    assert_eq!(lab.read(|b| b.texts("a")), want);
}
