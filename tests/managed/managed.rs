//! Managed tasks (issue 14) on the memory log, driven with `oneshot` on a
//! `ManagedService` (and over both HTTP bindings of the assembled
//! `A2aServer` where the wire matters): the derived identity of a start
//! (rule 6), input admission (7), questions and `scope.*` metadata (8),
//! answers (9), the output policy (10), cancel (11), the reads (12), and a
//! property test of random interleavings of starts, answers and cancels.
//! Every backend's refund flow and replay after a crash are in
//! `managed_storage.rs`.

use crate::support;

use std::sync::Arc;

use a2a_tower::log::{MemoryTaskLog, Record, TaskBackend};
use a2a_tower::managed::{
    ANSWER_SCHEMA_KEY, EXTERNAL_WAIT_EXTENSION, JournalEntry, ManagedService,
    OUTPUT_INVALID_MESSAGE, PROGRAM_FAILED_MESSAGE, PROGRAM_KEY, Process, Program, ROOT_KEY,
    ROOT_STATUS_KEY, TERMINATION_KEY, WAIT_KEY, Wait,
};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{
    AgentInterface, AgentSkill, GetTaskRequest, ListTasksRequest, Part, Role, SendMessageRequest,
    StreamResponse, Task, TaskState,
};
use a2a_tower::{A2aError, ErrorKind, Operation};
use bytes::Bytes;
use http_body_util::Full;
use proptest::prelude::*;
use serde_json::{Value, json};
use support::calls::{cancel, events, get, list, read_events, subscribe};
use support::http::{Reply, request, rpc_body};
use support::managed::{
    Counter, EXACT, REFUND, SAME_KEYS, UNTIL_CANCELED, answer, answer_unnamed, approve_schema,
    authority, card, count, echo_question, entries, exact, parse, part_value, pending,
    question_ids, refund, refund_input, result, same_keys, score_schema, send, send_now, service,
    service_on, start, terminals, until_canceled, until_pending,
};
use support::tasks::{meta, records, until_terminal};
use tower::ServiceExt as _;

/// A memory log that keeps a terminal task's records (the default packs
/// them), so that the tests can read every record back.
fn memory() -> Arc<dyn TaskBackend> {
    Arc::new(
        MemoryTaskLog::builder()
            .compact_terminal(false)
            .build()
            .unwrap(),
    )
}

/// A refund order of `amount` (JSON text) as a data part.
fn order(amount: &str) -> Part {
    Part::data(refund_input("A-1", amount))
}

/// Asserts the error's kind and, when given, that a violation names `field`.
fn assert_refused(r: Result<Task, A2aError>, kind: ErrorKind, field: Option<&str>) {
    let e = match r {
        Err(e) => e,
        Ok(t) => panic!("expected {kind:?}, got the task {t:?}"),
    };
    assert_eq!(e.kind(), kind, "{}: {:?}", e.message(), e.violations());
    assert!(!e.message().is_empty());
    if let Some(field) = field {
        assert!(
            e.violations()
                .iter()
                .any(|(f, what)| f == field && !what.is_empty()),
            "no violation at {field}: {:?}",
            e.violations()
        );
    }
}

/// Returns its input once; counts its runs.
fn echo(runs: Counter) -> Program {
    Program::new(
        "test.echo",
        json!({"type": "number"}),
        json!({"type": "number"}),
        move |_p: Process, input: Value| {
            runs.bump();
            async move { Ok(input) }
        },
    )
    .unwrap()
}

/// Greets its input, a string.
fn greet() -> Program {
    Program::new(
        "test.greet",
        json!({"type": "string"}),
        json!({"type": "string"}),
        |_p: Process, name: Value| async move {
            Ok(json!(format!("Hello, {}!", name.as_str().unwrap())))
        },
    )
    .unwrap()
}

/// The root and child processes of a refund task, and the task once both
/// of its waits are open.
async fn refund_waiting(
    log: &Arc<dyn TaskBackend>,
    svc: &ManagedService,
    message_id: &str,
) -> (Arc<Task>, String, String) {
    let task = send(svc, start(message_id, "ctx-1", order("10.50")))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    let task = until_pending(&**log, &authority(REFUND), &task.id, 2).await;
    let root = task.id.clone();
    let child = format!("{root}/fraud-check");
    (task, root, child)
}

/// The state a stream's last event reports.
fn last_state(events: &[StreamResponse]) -> TaskState {
    match events.last() {
        Some(StreamResponse::Task(t)) => t.status.state,
        Some(StreamResponse::StatusUpdate(u)) => u.status.state,
        other => panic!("the stream ends with {other:?}"),
    }
}

// ---------------------------------------------------------------- identity (6)

// Rule 6: a retry of a start (same message and context ids, same input, as
// a text part or a data part) returns the task already started, also through
// a fresh service over the same log (a restart); the program runs once.
#[tokio::test]
async fn a_retried_start_returns_the_task_already_started() {
    let log = memory();
    let lookups = Counter::default();
    let svc = service(log.clone(), refund(lookups.clone()));
    let first = send(&svc, start("m-1", "ctx-1", order("10.50")))
        .await
        .unwrap();
    assert_eq!(first.status.state, TaskState::InputRequired);
    let text = Part::text(r#"{"order": "A-1", "amount": 10.50}"#);
    let retry = send(&svc, start("m-1", "ctx-1", text)).await.unwrap();
    assert_eq!(retry.id, first.id);
    let restarted = service(log.clone(), refund(lookups.clone()));
    let again = send(&restarted, start("m-1", "ctx-1", order("10.50")))
        .await
        .unwrap();
    assert_eq!(
        (again.id.as_str(), again.context_id.as_str()),
        (first.id.as_str(), "ctx-1")
    );
    let auth = authority(REFUND);
    until_pending(&*log, &auth, &first.id, 2).await;
    let recs = records(&*log, &auth, &first.id).await;
    assert_eq!(count(&recs, |r| matches!(r, Record::Created { .. })), 1);
    assert_eq!(
        entries(&recs, |e| matches!(e, JournalEntry::RunStarted { .. })),
        1
    );
    assert_eq!(
        count(&recs, |r| matches!(r, Record::MessageAdmitted { .. })),
        1
    );
    assert_eq!(
        entries(&recs, |e| matches!(e, JournalEntry::WaitOpened { .. })),
        2
    );
    assert_eq!(lookups.get(), 1, "one run, one lookup");
    assert_eq!(list(&svc, ListTasksRequest::default()).await.len(), 1);
}

// Rule 6: the same ids with another input are refused before any work, and
// nothing is written.
#[tokio::test]
async fn the_same_ids_with_another_input_are_refused_and_write_nothing() {
    let log = memory();
    let lookups = Counter::default();
    let svc = service(log.clone(), refund(lookups.clone()));
    let (task, ..) = refund_waiting(&log, &svc, "m-1").await;
    let auth = authority(REFUND);
    let before = records(&*log, &auth, &task.id).await;
    let r = send(&svc, start("m-1", "ctx-1", order("11"))).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("message.messageId"));
    assert_eq!(records(&*log, &auth, &task.id).await, before);
    assert_eq!(lookups.get(), 1);
    assert_eq!(list(&svc, ListTasksRequest::default()).await.len(), 1);
}

// Rule 6: a new message id starts separate work, in the same context.
#[tokio::test]
async fn a_new_message_id_starts_separate_work() {
    let runs = Counter::default();
    let svc = service(memory(), echo(runs.clone()));
    let a = send(&svc, start("m-1", "ctx-1", Part::text("1")))
        .await
        .unwrap();
    let b = send(&svc, start("m-2", "ctx-1", Part::text("1")))
        .await
        .unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(
        (a.context_id.as_str(), b.context_id.as_str()),
        ("ctx-1", "ctx-1")
    );
    assert_eq!(
        (a.status.state, b.status.state),
        (TaskState::Completed, TaskState::Completed)
    );
    assert_eq!(runs.get(), 2);
    assert_eq!(list(&svc, ListTasksRequest::default()).await.len(), 2);
    // The same message id in another context is another start too.
    let c = send(&svc, start("m-1", "ctx-2", Part::text("1")))
        .await
        .unwrap();
    assert_ne!(c.id, a.id);
    assert_eq!(runs.get(), 3);
}

// Rule 6: a start without a context id gets a fresh one (so the same
// message id starts separate work).
#[tokio::test]
async fn a_start_without_a_context_id_gets_a_fresh_one() {
    let runs = Counter::default();
    let svc = service(memory(), echo(runs.clone()));
    let a = send(&svc, start("m-1", "", Part::text("1"))).await.unwrap();
    let b = send(&svc, start("m-1", "", Part::text("1"))).await.unwrap();
    assert!(
        uuid::Uuid::parse_str(&a.context_id).is_ok(),
        "{}",
        a.context_id
    );
    assert_ne!(a.context_id, b.context_id);
    assert_ne!(a.id, b.id);
    assert_eq!(a.history[0].context_id, a.context_id);
    assert_eq!(a.history[0].task_id, a.id);
    assert_eq!(runs.get(), 2);
}

// ---------------------------------------------------------- input admission (7)

// Rule 7: JSON text, and a data part, are the input with every number's
// exact text (kept in the journal and through to the result).
#[tokio::test]
async fn an_input_is_json_text_or_a_data_part_with_exact_numbers() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let text = send(
        &svc,
        start("m-1", "c", Part::text(r#"{"order":"A-1","amount":0.10}"#)),
    )
    .await
    .unwrap();
    let data = send(&svc, start("m-2", "c", order(EXACT))).await.unwrap();
    let auth = authority(REFUND);
    for (task, want) in [
        (&text, r#"{"order":"A-1","amount":0.10}"#.to_owned()),
        (&data, format!(r#"{{"order":"A-1","amount":{EXACT}}}"#)),
    ] {
        let recs = records(&*log, &auth, &task.id).await;
        let input = recs
            .iter()
            .find_map(|r| match JournalEntry::of(r) {
                Some(JournalEntry::RunStarted { input, .. }) => Some(input.to_string()),
                _ => None,
            })
            .unwrap();
        assert_eq!(input, want);
    }
    let task = until_pending(&*log, &auth, &data.id, 2).await;
    assert_eq!(
        pending(&task)[0]["question"],
        json!({"text": format!("Refund {EXACT} for A-1?")})
    );
    // The exact amount is the result.
    let runs = Counter::default();
    let svc = service(memory(), echo(runs));
    let done = send(&svc, start("m-3", "c", Part::data(exact())))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(result(&done).to_string(), EXACT);
    let wire = serde_json::to_string(&done.artifacts[0].parts[0]).unwrap();
    assert_eq!(
        wire,
        format!(r#"{{"data":{EXACT},"mediaType":"application/json"}}"#)
    );
}

// Rule 7: when the input schema is a string, a text part is the string
// itself (not JSON text); a data part holding a string is accepted too.
#[tokio::test]
async fn a_text_part_is_the_input_itself_for_a_string_schema() {
    let svc = service(memory(), greet());
    for (part, want) in [
        (Part::text("plain words"), "Hello, plain words!"),
        (Part::text("42"), "Hello, 42!"),
        (Part::text(r#""quoted""#), r#"Hello, "quoted"!"#),
        (Part::data(json!("data")), "Hello, data!"),
    ] {
        let id = uuid::Uuid::new_v4().to_string();
        let done = send(&svc, start(&id, "c", part)).await.unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(result(&done), json!(want));
    }
    let r = send(&svc, start("m-n", "c", Part::data(json!(42)))).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("input"));
}

// Rule 7: files, URLs, several parts, invalid JSON and schema violations are
// refused, naming what is wrong (the violation's instance path), and nothing
// is written.
#[tokio::test]
async fn refused_inputs_say_what_is_wrong_and_write_nothing() {
    let log = memory();
    let lookups = Counter::default();
    let svc = service(log.clone(), refund(lookups.clone()));
    let mut none = start("m-0", "c", Part::text("{}"));
    none.parts.clear();
    let mut two = start("m-2", "c", order("1"));
    two.parts.push(order("1"));
    let cases = [
        (none, ErrorKind::InvalidParams, None),
        (two, ErrorKind::InvalidParams, Some("message.parts")),
        (
            start(
                "m-3",
                "c",
                Part::raw(br#"{"order":"A-1","amount":1}"#.to_vec()),
            ),
            ErrorKind::ContentTypeNotSupported,
            None,
        ),
        (
            start("m-4", "c", Part::url("https://example.com/order.json")),
            ErrorKind::ContentTypeNotSupported,
            None,
        ),
        (
            start("m-5", "c", Part::text("{order: A-1}")),
            ErrorKind::InvalidParams,
            Some("message.parts[0].text"),
        ),
        (
            start("m-6", "c", order("-1")),
            ErrorKind::InvalidParams,
            Some("input/amount"),
        ),
        (
            start("m-7", "c", order("0")),
            ErrorKind::InvalidParams,
            Some("input/amount"),
        ),
        (
            start("m-8", "c", order(r#""10""#)),
            ErrorKind::InvalidParams,
            Some("input/amount"),
        ),
        (
            start("m-9", "c", Part::data(json!({"order": 1, "amount": 1}))),
            ErrorKind::InvalidParams,
            Some("input/order"),
        ),
        (
            start("m-10", "c", Part::data(json!({"amount": 1}))),
            ErrorKind::InvalidParams,
            Some("input"),
        ),
        (
            start(
                "m-11",
                "c",
                Part::data(json!({"order": "A-1", "amount": 1, "extra": true})),
            ),
            ErrorKind::InvalidParams,
            Some("input"),
        ),
        (
            start("m-12", "c", Part::data(json!("A-1"))),
            ErrorKind::InvalidParams,
            Some("input"),
        ),
    ];
    for (message, kind, field) in cases {
        let id = message.message_id.clone();
        let r = send(&svc, message).await;
        let e = r.as_ref().err().map(|e| e.message().to_owned());
        assert_refused(r, kind, field);
        assert!(e.is_some(), "{id}");
    }
    assert!(list(&svc, ListTasksRequest::default()).await.is_empty());
    assert!(log.live_tasks(None, 10).await.unwrap().is_empty());
    assert_eq!((lookups.get(), svc.running()), (0, 0));
}

// ---------------------------------------------------------------- questions (8)

// Rule 8: INPUT_REQUIRED while any wait is open; `scope.pending` lists each
// (id, owner, key, question or null, schema or true) with ids that are the
// same on every read and on another service over the same log; the
// `scope.*` metadata follows the root to its termination.
#[tokio::test]
async fn open_waits_are_listed_in_scope_pending_with_stable_ids() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (_, root, child) = refund_waiting(&log, &svc, "m-1").await;
    let task = get(&svc, &root).await.unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    let p = pending(&task);
    assert_eq!(p.len(), 2);
    let (approve_id, score_id) = (p[0]["id"].clone(), p[1]["id"].clone());
    assert!(approve_id.as_str().is_some_and(|s| !s.is_empty()));
    assert!(score_id.as_str().is_some_and(|s| !s.is_empty()));
    assert_ne!(approve_id, score_id);
    assert_eq!(
        p[0],
        json!({
            "id": approve_id, "owner": root, "key": "approve",
            "question": {"text": "Refund 10.50 for A-1?"}, "schema": approve_schema()
        })
    );
    assert_eq!(
        p[1],
        json!({
            "id": score_id, "owner": child, "key": "score",
            "question": null, "schema": score_schema()
        })
    );
    assert_eq!(meta(&task, PROGRAM_KEY), json!(REFUND));
    assert_eq!(meta(&task, ROOT_KEY), json!(root));
    assert_eq!(meta(&task, ROOT_STATUS_KEY), json!("waiting"));
    assert_eq!(meta(&task, TERMINATION_KEY), Value::Null);
    // The status message renders both questions (the absent one as null);
    // with two open it names no single wait.
    let message = task.status.message.as_ref().unwrap();
    assert_eq!(message.role, Role::Agent);
    let questions: Vec<Value> = message.parts.iter().map(part_value).collect();
    assert_eq!(
        questions,
        [json!({"text": "Refund 10.50 for A-1?"}), Value::Null]
    );
    assert_eq!(message.metadata, None);
    // The same ids on every read, and on another host over the same log.
    let ids = question_ids(&task);
    assert_eq!(question_ids(&get(&svc, &root).await.unwrap()), ids);
    let reader = service_on(log.clone(), refund(Counter::default()), "reader");
    assert_eq!(question_ids(&get(&reader, &root).await.unwrap()), ids);
    // Another run asks the same questions under ids of its own.
    let (second, ..) = refund_waiting(&log, &svc, "m-2").await;
    let second_ids = question_ids(&second);
    assert_eq!(second_ids.len(), 2);
    assert!(second_ids.values().all(|id| !ids.values().any(|i| i == id)));
    // One wait left: the status message names it and its answer schema.
    let t = send(
        &svc,
        answer(&task, "a-1", &child, "score", Part::text("10")),
    )
    .await
    .unwrap();
    assert_eq!(t.status.state, TaskState::InputRequired);
    assert_eq!(pending(&t), [p[0].clone()]);
    let m = t.status.message.as_ref().unwrap().metadata.clone().unwrap();
    assert_eq!(m[WAIT_KEY], json!({"process": root, "key": "approve"}));
    assert_eq!(m[ANSWER_SCHEMA_KEY], approve_schema());
    assert_eq!(question_ids(&get(&reader, &root).await.unwrap()).len(), 1);
    // The root exits: its termination is published.
    let approve = Part::data(json!({"approved": true}));
    let done = send(&svc, answer(&t, "a-2", &root, "approve", approve))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(pending(&done), Vec::<Value>::new());
    assert_eq!(meta(&done, ROOT_STATUS_KEY), json!("completed"));
    assert_eq!(meta(&done, TERMINATION_KEY), json!("completed"));
    assert_eq!(meta(&done, PROGRAM_KEY), json!(REFUND));
    assert_eq!(
        result(&done),
        json!({"order": "A-1", "refunded": parse("10.50"), "note": null})
    );
}

// Rule 2 and 8: a wait's address is (process, key): the child's `k` and the
// root's `k` are two questions, each checked against its own schema.
#[tokio::test]
async fn a_childs_wait_is_never_mistaken_for_the_roots_wait_of_the_same_key() {
    let log = memory();
    let svc = service(log.clone(), same_keys());
    let task = send(&svc, start("m-1", "c", Part::text("{}")))
        .await
        .unwrap();
    let task = until_pending(&*log, &authority(SAME_KEYS), &task.id, 2).await;
    let (root, kid) = (task.id.clone(), format!("{}/kid", task.id));
    let ids = question_ids(&task);
    assert_eq!(
        ids.keys().cloned().collect::<Vec<_>>(),
        [
            (root.clone(), "k".to_owned()),
            (kid.clone(), "k".to_owned())
        ]
    );
    assert_ne!(
        ids[&(root.clone(), "k".into())],
        ids[&(kid.clone(), "k".into())]
    );
    // `true` suits the root's `k`, not the child's.
    let r = send(&svc, answer(&task, "a-1", &kid, "k", Part::text("true"))).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("answer"));
    let t = send(&svc, answer(&task, "a-2", &kid, "k", Part::text("7")))
        .await
        .unwrap();
    assert_eq!(t.status.state, TaskState::InputRequired);
    let left = question_ids(&t);
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[&(root.clone(), "k".into())],
        ids[&(root.clone(), "k".into())]
    );
    let r = send(&svc, answer(&task, "a-3", &root, "k", Part::text("7"))).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("answer"));
    let done = send(&svc, answer(&task, "a-4", &root, "k", Part::text("true")))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(result(&done), json!({"root": true, "child": 7}));
}

// Rule 8: a program that fails, panics, opens a wait whose schema refers to
// a remote document (never fetched), or returns what its output schema
// refuses, ends FAILED with a fixed message (never its own error text) and
// `scope.termination` "failed".
#[tokio::test]
async fn a_failing_program_ends_failed_with_its_termination() {
    let failing = Program::new(
        "test.failing",
        json!({"enum": ["error", "panic", "remote-schema", "bad-output"]}),
        json!({"type": "integer"}),
        |p: Process, how: Value| async move {
            match how.as_str() {
                Some("error") => Err("secret internal detail".into()),
                Some("panic") => panic!("secret internal detail"),
                Some("remote-schema") => {
                    let remote = json!({"$ref": "https://example.com/schema.json"});
                    Ok(p.wait(Wait::new("w").schema(remote)).await?)
                }
                _ => Ok(json!("not an integer")),
            }
        },
    )
    .unwrap();
    let svc = service(memory(), failing);
    for (input, message) in [
        (r#""error""#, PROGRAM_FAILED_MESSAGE),
        (r#""panic""#, PROGRAM_FAILED_MESSAGE),
        (r#""remote-schema""#, PROGRAM_FAILED_MESSAGE),
        (r#""bad-output""#, OUTPUT_INVALID_MESSAGE),
    ] {
        let done = send(&svc, start(input, "c", Part::text(input)))
            .await
            .unwrap();
        assert_eq!(done.status.state, TaskState::Failed, "{input}");
        let status = done.status.message.as_ref().unwrap();
        assert_eq!(status.text(), message, "{input}");
        assert!(done.artifacts.is_empty());
        assert_eq!(meta(&done, TERMINATION_KEY), json!("failed"));
        assert_eq!(meta(&done, ROOT_STATUS_KEY), json!("failed"));
        assert_eq!(pending(&done), Vec::<Value>::new());
    }
}

// ------------------------------------------------------------------ answers (9)

// Rule 9: an answer is checked against its wait's schema with exact numbers
// (in f64 both of these would equal the maximum) and reaches the program
// with its exact text.
#[tokio::test]
async fn answers_are_checked_with_exact_numbers() {
    let bounded = Program::new(
        "test.bounded",
        json!(true),
        json!({"type": "number"}),
        |p: Process, _input: Value| async move {
            let schema = parse(r#"{"type": "number", "maximum": 12345678901234567890.5}"#);
            Ok(p.wait(Wait::new("n").schema(schema)).await?)
        },
    )
    .unwrap();
    let log = memory();
    let svc = service(log.clone(), bounded);
    let task = send(&svc, start("m-1", "c", Part::text("null")))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    let auth = authority("test.bounded");
    let before = records(&*log, &auth, &task.id).await;
    let over = answer_unnamed(&task, "a-1", Part::text("12345678901234567890.6"));
    assert_refused(
        send(&svc, over).await,
        ErrorKind::InvalidParams,
        Some("answer"),
    );
    assert_eq!(records(&*log, &auth, &task.id).await, before);
    let done = send(&svc, answer_unnamed(&task, "a-2", Part::data(exact())))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(result(&done).to_string(), EXACT);
    let recs = records(&*log, &auth, &task.id).await;
    let admitted: Vec<String> = recs
        .iter()
        .filter_map(|r| match JournalEntry::of(r) {
            Some(JournalEntry::SignalAdmitted { answer, .. }) => Some(answer.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(admitted, [EXACT]);
}

// Rule 9: the answer to a wait whose schema is a string is the text itself;
// to a wait without a schema, JSON text (so plain words are refused).
#[tokio::test]
async fn an_answer_is_the_text_itself_for_a_string_schema() {
    let words = Program::new(
        "test.words",
        json!(true),
        json!({"type": "array"}),
        |p: Process, _input: Value| async move {
            let said = p
                .wait(Wait::new("say").schema(json!({"type": "string"})))
                .await?;
            let any = p.wait(Wait::new("any")).await?;
            Ok(json!([said, any]))
        },
    )
    .unwrap();
    let log = memory();
    let svc = service(log.clone(), words);
    let task = send(&svc, start("m-1", "c", Part::text("{}")))
        .await
        .unwrap();
    let t = send(&svc, answer_unnamed(&task, "a-1", Part::text("yes please")))
        .await
        .unwrap();
    assert_eq!(t.status.state, TaskState::InputRequired);
    let t = until_pending(&*log, &authority("test.words"), &t.id, 1).await;
    assert_eq!(pending(&t)[0]["key"], "any");
    let r = send(&svc, answer_unnamed(&t, "a-2", Part::text("plain words"))).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("message.parts[0].text"));
    let done = send(
        &svc,
        answer_unnamed(&t, "a-3", Part::text(r#""json text""#)),
    )
    .await
    .unwrap();
    assert_eq!(result(&done), json!(["yes please", "json text"]));
}

// Rule 9: an invalid answer (schema violation, bad JSON, a file, several
// parts) is refused with what is wrong, and changes nothing.
#[tokio::test]
async fn an_invalid_answer_is_refused_and_changes_nothing() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (task, root, child) = refund_waiting(&log, &svc, "m-1").await;
    let auth = authority(REFUND);
    let before = records(&*log, &auth, &root).await;
    let mut two = answer(&task, "a-6", &child, "score", Part::text("1"));
    two.parts.push(Part::text("2"));
    let cases = [
        (
            answer(&task, "a-1", &child, "score", Part::text("101")),
            ErrorKind::InvalidParams,
            Some("answer"),
        ),
        (
            answer(&task, "a-2", &child, "score", Part::text("4.5")),
            ErrorKind::InvalidParams,
            Some("answer"),
        ),
        (
            answer(
                &task,
                "a-3",
                &root,
                "approve",
                Part::data(json!({"approved": "yes"})),
            ),
            ErrorKind::InvalidParams,
            Some("answer/approved"),
        ),
        (
            answer(&task, "a-4", &root, "approve", Part::text("yes")),
            ErrorKind::InvalidParams,
            Some("message.parts[0].text"),
        ),
        (
            answer(&task, "a-5", &root, "approve", Part::raw(b"{}".to_vec())),
            ErrorKind::ContentTypeNotSupported,
            None,
        ),
        (two, ErrorKind::InvalidParams, Some("message.parts")),
    ];
    for (message, kind, field) in cases {
        assert_refused(send(&svc, message).await, kind, field);
        assert_eq!(records(&*log, &auth, &root).await, before);
    }
    assert_eq!(
        question_ids(&get(&svc, &root).await.unwrap()),
        question_ids(&task)
    );
}

// Rule 9: a repeated answer (same message id, whatever it holds) returns
// the result already admitted and admits nothing, also through a fresh
// service over the same log and after the task ended.
#[tokio::test]
async fn a_repeated_answer_returns_the_result_already_admitted() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (task, root, child) = refund_waiting(&log, &svc, "m-1").await;
    let auth = authority(REFUND);
    let first = send(
        &svc,
        answer(&task, "a-score", &child, "score", Part::text("10")),
    )
    .await
    .unwrap();
    assert_eq!(first.status.state, TaskState::InputRequired);
    let n = records(&*log, &auth, &root).await.len();
    let again = send(
        &svc,
        answer(&task, "a-score", &child, "score", Part::text("90")),
    )
    .await
    .unwrap();
    assert_eq!(again.status.state, TaskState::InputRequired);
    assert_eq!(question_ids(&again), question_ids(&first));
    // Another host: the one that admitted it is not needed.
    let other = service_on(log.clone(), refund(Counter::default()), "other");
    let there = send(
        &other,
        answer(&task, "a-score", &child, "score", Part::text("10")),
    )
    .await
    .unwrap();
    assert_eq!(question_ids(&there), question_ids(&first));
    assert_eq!(records(&*log, &auth, &root).await.len(), n);
    let approve = Part::data(json!({"approved": true, "note": "ok"}));
    let done = send(
        &svc,
        answer(&task, "a-ok", &root, "approve", approve.clone()),
    )
    .await
    .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let want = json!({"order": "A-1", "refunded": parse("10.50"), "note": "ok"});
    assert_eq!(result(&done), want);
    for (svc, id) in [(&svc, "a-ok"), (&other, "a-ok"), (&other, "a-score")] {
        let repeat = answer(&task, id, &root, "approve", approve.clone());
        let t = send(svc, repeat).await.unwrap();
        assert_eq!(t.status.state, TaskState::Completed);
        assert_eq!(result(&t), want);
    }
    let recs = records(&*log, &auth, &root).await;
    assert_eq!(
        entries(&recs, |e| matches!(e, JournalEntry::SignalAdmitted { .. })),
        2
    );
    assert_eq!(terminals(&recs), 1);
}

// Rule 9: an answer to an unknown or closed wait, without `scope.wait` while
// several are open, with a malformed `scope.wait`, to another context, to an
// unknown task or to an ended task, is a clear error that writes nothing.
#[tokio::test]
async fn answers_to_no_open_wait_are_clear_errors() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (task, root, child) = refund_waiting(&log, &svc, "m-1").await;
    let auth = authority(REFUND);
    let field = Some("message.metadata.scope.wait");
    let before = records(&*log, &auth, &root).await;
    let score = || Part::text("10");
    let r = send(&svc, answer_unnamed(&task, "a-1", score())).await;
    assert_refused(r, ErrorKind::InvalidParams, field);
    let r = send(&svc, answer(&task, "a-2", &root, "nope", score())).await;
    assert_refused(r, ErrorKind::InvalidParams, field);
    // The child's key on the root process is no wait.
    let r = send(&svc, answer(&task, "a-3", &root, "score", score())).await;
    assert_refused(r, ErrorKind::InvalidParams, field);
    let mut malformed = answer(&task, "a-4", &child, "score", score());
    malformed.metadata.as_mut().unwrap()[WAIT_KEY] = json!("score");
    assert_refused(send(&svc, malformed).await, ErrorKind::InvalidParams, field);
    let mut elsewhere = answer(&task, "a-5", &child, "score", score());
    elsewhere.context_id = "another".into();
    let r = send(&svc, elsewhere).await;
    assert_refused(r, ErrorKind::InvalidParams, Some("message.contextId"));
    let mut unknown = answer(&task, "a-6", &child, "score", score());
    unknown.task_id = "no-such-task".into();
    assert_refused(send(&svc, unknown).await, ErrorKind::TaskNotFound, None);
    assert_eq!(records(&*log, &auth, &root).await, before);
    // Answered, the wait is closed.
    send(&svc, answer(&task, "a-7", &child, "score", score()))
        .await
        .unwrap();
    let n = records(&*log, &auth, &root).await.len();
    let r = send(&svc, answer(&task, "a-8", &child, "score", score())).await;
    assert_refused(r, ErrorKind::InvalidParams, field);
    assert_eq!(records(&*log, &auth, &root).await.len(), n);
    // With one wait open, `scope.wait` may be left out.
    let approve = Part::data(json!({"approved": false}));
    let done = send(&svc, answer_unnamed(&task, "a-9", approve))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(
        result(&done),
        json!({"order": "A-1", "refunded": 0, "note": null})
    );
    let r = send(&svc, answer_unnamed(&task, "a-10", Part::text("{}"))).await;
    assert_refused(r, ErrorKind::UnsupportedOperation, None);
}

// Rules 6 and 9 under concurrency: eight identical starts at once make one
// task and one run; then eight answers to each wait at once (distinct message
// ids) admit exactly one per wait, the others find it closed (or the task
// ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_starts_and_answers_admit_one_of_each() {
    let log = memory();
    let lookups = Counter::default();
    let svc = service(log.clone(), refund(lookups.clone()));
    let starts = (0..8).map(|_| send(&svc, start("m-1", "ctx-1", order("10.50"))));
    let tasks = futures_util::future::join_all(starts).await;
    let ids: std::collections::BTreeSet<String> =
        tasks.into_iter().map(|t| t.unwrap().id).collect();
    assert_eq!(ids.len(), 1);
    let root = ids.into_iter().next().unwrap();
    let auth = authority(REFUND);
    let task = until_pending(&*log, &auth, &root, 2).await;
    let child = format!("{root}/fraud-check");
    let answers = (0..8).flat_map(|i| {
        let score = answer(
            &task,
            &format!("s-{i}"),
            &child,
            "score",
            Part::text(format!("{i}")),
        );
        let approve = Part::data(json!({"approved": true, "note": format!("{i}")}));
        let approve = answer(&task, &format!("a-{i}"), &root, "approve", approve);
        [send(&svc, score), send(&svc, approve)]
    });
    let results = futures_util::future::join_all(answers).await;
    let mut admitted = 0;
    for r in results {
        match r {
            Ok(t) => {
                assert_eq!(t.id, root);
                admitted += 1;
            }
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    ErrorKind::InvalidParams | ErrorKind::UnsupportedOperation
                ),
                "{e:?}"
            ),
        }
    }
    assert_eq!(admitted, 2, "one answer per wait");
    let done = until_terminal(&*log, &auth, &root).await;
    assert_eq!(done.status.state, TaskState::Completed);
    let recs = records(&*log, &auth, &root).await;
    let signals: Vec<(String, Value)> = recs
        .iter()
        .filter_map(|r| match JournalEntry::of(r) {
            Some(JournalEntry::SignalAdmitted {
                process, answer, ..
            }) => Some((process.clone(), answer.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(signals.len(), 2);
    let note = signals.iter().find(|(p, _)| *p == root).unwrap().1["note"].clone();
    assert_eq!(result(&done)["note"], note);
    assert_eq!(
        entries(&recs, |e| matches!(e, JournalEntry::RunStarted { .. })),
        1
    );
    assert_eq!(terminals(&recs), 1);
    assert_eq!(lookups.get(), 1);
}

// ------------------------------------------------------------ output policy (10)

/// The question part and the result part of a run of `echo_question` asking
/// and returning `value`, on a card with `modes`.
async fn rendered(modes: &[&str], value: &Value) -> (String, String) {
    let svc = ManagedService::builder(card(modes), memory(), echo_question())
        .build()
        .unwrap();
    let task = send(&svc, start("m-1", "c", Part::data(value.clone())))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    let question = &task.status.message.as_ref().unwrap().parts;
    assert_eq!(question.len(), 1);
    let done = send(
        &svc,
        answer_unnamed(&task, "a-1", Part::data(value.clone())),
    )
    .await
    .unwrap();
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    let wire = |p: &Part| serde_json::to_string(p).unwrap();
    let result = &done.artifacts[0].parts;
    assert_eq!(result.len(), 1);
    (wire(&question[0]), wire(&result[0]))
}

// Rule 10: `application/json` (also the default) writes every value as data,
// strings included; `text/plain` writes strings as text and other values as
// their exact JSON text; both: strings as text, other values as data. The
// questions and the result follow the same policy.
#[tokio::test]
async fn the_output_policy_follows_the_cards_default_output_modes() {
    let string = json!("yes");
    let object = parse(&format!(r#"{{"n": {EXACT}}}"#));
    let data_string = r#"{"data":"yes","mediaType":"application/json"}"#.to_owned();
    let data_object = format!(r#"{{"data":{{"n":{EXACT}}},"mediaType":"application/json"}}"#);
    let text_string = r#"{"text":"yes"}"#.to_owned();
    let text_object = format!(r#"{{"text":"{{\"n\":{EXACT}}}","mediaType":"application/json"}}"#);
    let cases: [(&[&str], &String, &String); 4] = [
        (&[], &data_string, &data_object),
        (&["application/json"], &data_string, &data_object),
        (&["text/plain"], &text_string, &text_object),
        (
            &["text/plain", "application/json"],
            &text_string,
            &data_object,
        ),
    ];
    for (modes, for_string, for_object) in cases {
        for (value, want) in [(&string, for_string), (&object, for_object)] {
            let (question, result) = rendered(modes, value).await;
            assert_eq!(&question, want, "question, {modes:?}");
            assert_eq!(&result, want, "result, {modes:?}");
        }
    }
}

// Rule 10: a card whose output modes the policy cannot serve is refused when
// the service is built (and so is a card without the external-wait
// extension).
#[tokio::test]
async fn a_card_the_policy_cannot_serve_is_refused_at_build() {
    for modes in [&["image/png"][..], &["application/json", "image/png"]] {
        let err = ManagedService::builder(card(modes), memory(), same_keys())
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("image/png"), "{err}");
        let Err(err) = A2aServer::builder(card(modes)).program(same_keys()).await else {
            panic!("the server was built with {modes:?}")
        };
        assert!(err.to_string().contains("image/png"), "{err}");
    }
    let mut bare = card(&["application/json"]);
    bare.capabilities.extensions.clear();
    let err = ManagedService::builder(bare, memory(), same_keys())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains(EXTERNAL_WAIT_EXTENSION), "{err}");
}

// ------------------------------------------------------------------- cancel (11)

// Rule 11: CancelTask returns the status it observed (INPUT_REQUIRED here),
// then the run ends CANCELED, once; cancelling it again is
// TaskNotCancelable.
#[tokio::test]
async fn cancel_returns_the_observed_status_then_the_run_ends_canceled() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (_, root, _) = refund_waiting(&log, &svc, "m-1").await;
    let auth = authority(REFUND);
    let observed = cancel(&svc, &root).await.unwrap();
    assert_eq!(observed.status.state, TaskState::InputRequired);
    let done = until_terminal(&*log, &auth, &root).await;
    assert_eq!(done.status.state, TaskState::Canceled);
    assert_eq!(meta(&done, TERMINATION_KEY), json!("canceled"));
    assert_eq!(meta(&done, ROOT_STATUS_KEY), json!("canceled"));
    assert_eq!(pending(&done), Vec::<Value>::new());
    assert!(done.artifacts.is_empty());
    let recs = records(&*log, &auth, &root).await;
    assert_eq!(
        count(&recs, |r| matches!(r, Record::CancelRequested { .. })),
        1
    );
    assert_eq!(terminals(&recs), 1);
    assert!(recs.last().unwrap().is_terminal());
    let r = cancel(&svc, &root).await;
    assert_refused(r, ErrorKind::TaskNotCancelable, None);
    assert_eq!(records(&*log, &auth, &root).await, recs);
}

// Rule 11: a run that is working (no wait open) is observed WORKING; the run
// sees the cancellation and ends CANCELED. An answer meanwhile has no wait
// to go to.
#[tokio::test]
async fn cancel_of_a_working_run_returns_working_then_canceled() {
    let log = memory();
    let svc = service(log.clone(), until_canceled());
    let task = send_now(&svc, start("m-1", "c", Part::text("{}")))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::Working);
    assert_eq!(meta(&task, ROOT_STATUS_KEY), json!("running"));
    assert_eq!(pending(&task), Vec::<Value>::new());
    let r = send(&svc, answer_unnamed(&task, "a-1", Part::text("{}"))).await;
    assert_refused(r, ErrorKind::UnsupportedOperation, None);
    let observed = cancel(&svc, &task.id).await.unwrap();
    assert_eq!(observed.status.state, TaskState::Working);
    let done = until_terminal(&*log, &authority(UNTIL_CANCELED), &task.id).await;
    assert_eq!(done.status.state, TaskState::Canceled);
    assert_eq!(meta(&done, TERMINATION_KEY), json!("canceled"));
}

// Rule 11: cancelling a finished task is TaskNotCancelable (and writes
// nothing); an unknown task is TaskNotFound.
#[tokio::test]
async fn cancelling_a_finished_task_is_not_cancelable() {
    let log = memory();
    let svc = service(log.clone(), echo(Counter::default()));
    let done = send(&svc, start("m-1", "c", Part::text("3")))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let auth = authority("test.echo");
    let before = records(&*log, &auth, &done.id).await;
    assert_refused(
        cancel(&svc, &done.id).await,
        ErrorKind::TaskNotCancelable,
        None,
    );
    assert_eq!(records(&*log, &auth, &done.id).await, before);
    assert_refused(
        cancel(&svc, "no-such-task").await,
        ErrorKind::TaskNotFound,
        None,
    );
}

// -------------------------------------------------------------------- reads (12)

// Rule 12: GetTask (with historyLength) and ListTasks (with filters) read the
// log; another service name over the same log sees none of these tasks.
#[tokio::test]
async fn get_and_list_read_the_log() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (task, root, child) = refund_waiting(&log, &svc, "m-1").await;
    send(&svc, answer(&task, "a-1", &child, "score", Part::text("1")))
        .await
        .unwrap();
    let approve = Part::data(json!({"approved": true}));
    let done = send(&svc, answer(&task, "a-2", &root, "approve", approve))
        .await
        .unwrap();
    let waiting = send(&svc, start("m-2", "ctx-2", order("2"))).await.unwrap();

    let got = get(&svc, &root).await.unwrap();
    assert_eq!(got.status.state, TaskState::Completed);
    assert_eq!(got.artifacts, done.artifacts);
    let ids: Vec<&str> = got.history.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"m-1"));
    assert!(ids.contains(&"a-1") && ids.contains(&"a-2"), "{ids:?}");
    let short = GetTaskRequest {
        id: root.clone(),
        history_length: Some(1),
        ..Default::default()
    };
    let a2a_tower::A2aResponse::Task(short) = support::calls::call(&svc, Operation::GetTask(short))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(short.history.len(), 1);
    assert_refused(
        get(&svc, "no-such-task").await,
        ErrorKind::TaskNotFound,
        None,
    );

    let all = list(&svc, ListTasksRequest::default()).await;
    let mut listed: Vec<&str> = all.iter().map(|t| t.id.as_str()).collect();
    listed.sort_unstable();
    let mut want = vec![root.as_str(), waiting.id.as_str()];
    want.sort_unstable();
    assert_eq!(listed, want);
    let by_state = |s: TaskState| ListTasksRequest {
        status: s,
        ..Default::default()
    };
    let completed = list(&svc, by_state(TaskState::Completed)).await;
    assert_eq!(completed.iter().map(|t| &t.id).collect::<Vec<_>>(), [&root]);
    let input = list(&svc, by_state(TaskState::InputRequired)).await;
    assert_eq!(
        input.iter().map(|t| &t.id).collect::<Vec<_>>(),
        [&waiting.id]
    );
    let ctx2 = ListTasksRequest {
        context_id: "ctx-2".into(),
        ..Default::default()
    };
    let in_ctx2 = list(&svc, ctx2).await;
    assert_eq!(
        in_ctx2.iter().map(|t| &t.id).collect::<Vec<_>>(),
        [&waiting.id]
    );

    let isolated = ManagedService::builder(card(&[]), log.clone(), refund(Counter::default()))
        .service("another-endpoint")
        .build()
        .unwrap();
    assert!(
        list(&isolated, ListTasksRequest::default())
            .await
            .is_empty()
    );
    assert_refused(get(&isolated, &root).await, ErrorKind::TaskNotFound, None);
}

// Rule 12: SubscribeToTask streams the task, then its changes, and ends at
// the next INPUT_REQUIRED or at the terminal status; a finished task cannot
// be subscribed to.
#[tokio::test]
async fn subscribe_streams_until_input_required_or_terminal() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let (task, root, child) = refund_waiting(&log, &svc, "m-1").await;
    let sub = subscribe(&svc, &root).await.unwrap();
    send(&svc, answer(&task, "a-1", &child, "score", Part::text("1")))
        .await
        .unwrap();
    let evs = read_events(sub).await;
    let [
        StreamResponse::Task(first),
        StreamResponse::StatusUpdate(next),
    ] = evs.as_slice()
    else {
        panic!("a task, then one status: {evs:?}")
    };
    assert_eq!(first.id, root);
    assert_eq!(first.status.state, TaskState::InputRequired);
    assert_eq!(pending(first).len(), 2);
    assert_eq!(next.status.state, TaskState::InputRequired);
    assert_eq!(next.task_id, root);

    let sub = subscribe(&svc, &root).await.unwrap();
    let approve = Part::data(json!({"approved": true}));
    send(&svc, answer(&task, "a-2", &root, "approve", approve))
        .await
        .unwrap();
    let evs = read_events(sub).await;
    let [
        StreamResponse::Task(first),
        StreamResponse::StatusUpdate(working),
        StreamResponse::ArtifactUpdate(artifact),
        StreamResponse::StatusUpdate(completed),
    ] = evs.as_slice()
    else {
        panic!("a task, WORKING, the result, COMPLETED: {evs:?}")
    };
    assert_eq!(first.status.state, TaskState::InputRequired);
    assert_eq!(working.status.state, TaskState::Working);
    assert_eq!(
        part_value(&artifact.artifact.parts[0]),
        json!({"order": "A-1", "refunded": parse("10.50"), "note": null})
    );
    assert!(artifact.last_chunk);
    assert_eq!(completed.status.state, TaskState::Completed);

    let r = subscribe(&svc, &root).await.map(|_| ());
    match r {
        Err(e) => assert_eq!(e.kind(), ErrorKind::UnsupportedOperation),
        Ok(()) => panic!("a finished task was subscribed to"),
    }
}

// Rule 12: SendStreamingMessage streams a start up to INPUT_REQUIRED, and an
// answer up to the next INPUT_REQUIRED or the result.
#[tokio::test]
async fn send_streaming_message_streams_a_start_and_an_answer() {
    let log = memory();
    let svc = service(log.clone(), refund(Counter::default()));
    let streaming = |message| {
        Operation::SendStreamingMessage(SendMessageRequest {
            message,
            ..Default::default()
        })
    };
    let evs = events(&svc, streaming(start("m-1", "ctx-1", order(EXACT)))).await;
    let Some(StreamResponse::Task(first)) = evs.first() else {
        panic!("starts with the task: {evs:?}")
    };
    let root = first.id.clone();
    assert_eq!(last_state(&evs), TaskState::InputRequired);
    for e in &evs[1..] {
        let StreamResponse::StatusUpdate(u) = e else {
            panic!("status updates only: {e:?}")
        };
        assert_eq!(u.task_id, root);
    }
    let task = until_pending(&*log, &authority(REFUND), &root, 2).await;
    let child = format!("{root}/fraud-check");
    let evs = events(
        &svc,
        streaming(answer(&task, "a-1", &child, "score", Part::text("1"))),
    )
    .await;
    assert_eq!(last_state(&evs), TaskState::InputRequired);
    let approve = Part::data(json!({"approved": true, "note": "n"}));
    let evs = events(
        &svc,
        streaming(answer(&task, "a-2", &root, "approve", approve)),
    )
    .await;
    assert_eq!(last_state(&evs), TaskState::Completed);
    let want = format!(r#"{{"order":"A-1","refunded":{EXACT},"note":"n"}}"#);
    let results: Vec<String> = evs
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some(part_value(&a.artifact.parts[0])),
            StreamResponse::Task(t) if !t.artifacts.is_empty() => Some(result(t)),
            _ => None,
        })
        .map(|v| v.to_string())
        .collect();
    assert_eq!(results, [want]);
}

// ------------------------------------------------------------ both bindings

type App = tower::util::BoxCloneService<
    http::Request<Full<Bytes>>,
    http::Response<a2a_tower::Body>,
    std::convert::Infallible,
>;

async fn fetch(app: &App, method: &str, path: &str, body: &Value) -> Reply {
    let res = app
        .clone()
        .oneshot(request(method, path, Some(body)))
        .await
        .unwrap();
    let reply = Reply::read(res).await;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.text());
    reply
}

// Rules 7, 9 and 12 on the wire: over JSON-RPC and HTTP+JSON, a data part's
// numbers keep their exact text from the request body to the question and
// the result; answers name their wait in message metadata.
#[tokio::test]
async fn both_bindings_keep_exact_numbers_end_to_end() {
    let log = memory();
    let card = card(&["application/json"])
        .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_skill(AgentSkill::new("refund", "Refund", "Refunds an order"));
    let app = A2aServer::builder(card)
        .task_log(log.clone())
        .program(refund(Counter::default()))
        .await
        .unwrap();
    let app: App = tower::util::BoxCloneService::new(app);
    let auth = authority(REFUND);
    let order_json = format!(r#"{{"order": "A-1", "amount": {EXACT}}}"#);
    let user =
        |id: &str, part: Value| json!({"messageId": id, "role": "ROLE_USER", "parts": [part]});
    for binding in ["rpc", "rest"] {
        let send = async |message: Value| -> (Value, String) {
            let params = json!({"message": message});
            let reply = if binding == "rpc" {
                let body = rpc_body(1, "SendMessage", params);
                fetch(&app, "POST", "/rpc", &body).await
            } else {
                fetch(&app, "POST", "/rest/message:send", &params).await
            };
            let v = reply.json();
            let task = if binding == "rpc" {
                assert!(v.get("error").is_none(), "{v}");
                v["result"]["task"].clone()
            } else {
                v["task"].clone()
            };
            (task, reply.text().to_owned())
        };
        let (task, _) = send(user(
            &format!("m-{binding}"),
            json!({"data": parse(&order_json)}),
        ))
        .await;
        assert_eq!(
            task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{task}"
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let waiting = until_pending(&*log, &auth, &id, 2).await;
        let question = format!("Refund {EXACT} for A-1?");
        assert_eq!(pending(&waiting)[0]["question"]["text"], json!(question));
        let to = |key: &str, process: String, part: Value, message_id: &str| {
            let mut m = user(message_id, part);
            m["taskId"] = json!(id);
            m["contextId"] = json!(waiting.context_id);
            m["metadata"] = json!({WAIT_KEY: {"process": process, "key": key}});
            m
        };
        let (t, _) = send(to(
            "score",
            format!("{id}/fraud-check"),
            json!({"text": "7"}),
            &format!("s-{binding}"),
        ))
        .await;
        assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
        let (t, text) = send(to(
            "approve",
            id.clone(),
            json!({"data": {"approved": true}}),
            &format!("a-{binding}"),
        ))
        .await;
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
        let want = format!(r#""data":{{"order":"A-1","refunded":{EXACT},"note":null}}"#);
        assert!(text.contains(&want), "{binding}: {text}");
    }
}

// ---------------------------------------------------------------- property

#[derive(Debug, Clone)]
enum Op {
    /// The start again (same ids, same input).
    Start,
    /// An answer to the root's (or the child's) `k`, valid or not, with the
    /// message id `a-<id>` (so ids repeat).
    Answer {
        child: bool,
        valid: bool,
        id: u8,
    },
    Cancel,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Start),
        6 => (any::<bool>(), any::<bool>(), 0u8..3)
            .prop_map(|(child, valid, id)| Op::Answer { child, valid, id }),
        1 => Just(Op::Cancel),
    ]
}

/// One operation of a client, on `host`, with the outcomes it may have.
async fn run_op(host: &ManagedService, task: &Task, root: &str, child: &str, op: Op) {
    match op {
        Op::Start => {
            let begin = start("m-1", "ctx-1", Part::data(json!({"n": 1})));
            let t = send(host, begin).await.expect("a retried start");
            assert_eq!(t.id, root);
        }
        Op::Answer {
            child: c,
            valid,
            id,
        } => {
            let (process, value) = match (c, valid) {
                (false, true) => (root, json!(true)),
                (false, false) => (root, json!(5)),
                (true, true) => (child, json!(7)),
                (true, false) => (child, json!("seven")),
            };
            let message = answer(task, &format!("a-{id}"), process, "k", Part::data(value));
            match send(host, message).await {
                Ok(t) => assert_eq!(t.id, root),
                Err(e) => assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::InvalidParams | ErrorKind::UnsupportedOperation
                    ),
                    "{e:?}"
                ),
            }
        }
        Op::Cancel => match cancel(host, root).await {
            Ok(t) => assert!(!t.status.state.is_terminal(), "{:?}", t.status.state),
            Err(e) => assert_eq!(e.kind(), ErrorKind::TaskNotCancelable),
        },
    }
}

/// Runs `ops` against one `same_keys` task (those marked `true` through a
/// second service over the same log, concurrently with the others), then
/// cancels it (unless it has ended) and checks what the log holds.
async fn interleaving(ops: Vec<(bool, Op)>) {
    let log = memory();
    let svc = service(log.clone(), same_keys());
    let reader = service_on(log.clone(), same_keys(), "reader");
    let auth = authority(SAME_KEYS);
    let begin = || start("m-1", "ctx-1", Part::data(json!({"n": 1})));
    let task = send(&svc, begin()).await.unwrap();
    let root = task.id.clone();
    let child = format!("{root}/kid");
    let waiting = until_pending(&*log, &auth, &root, 2).await;
    let ids = question_ids(&waiting);
    let same_ids = |t: &Task| {
        for (address, id) in question_ids(t) {
            assert_eq!(ids.get(&address), Some(&id), "{address:?}");
        }
    };
    // Two clients, one on each host, each run their share of `ops` in order,
    // concurrently with the other.
    let lane = |host: &ManagedService, ops: Vec<Op>| {
        let (host, task, root, child) = (host.clone(), &task, &root, &child);
        let same_ids = &same_ids;
        let (svc, reader) = (&svc, &reader);
        async move {
            for op in ops {
                run_op(&host, task, root, child, op).await;
                same_ids(&get(svc, root).await.unwrap());
                same_ids(&get(reader, root).await.unwrap());
            }
        }
    };
    let (on_a, on_b): (Vec<_>, Vec<_>) = ops.into_iter().partition(|(b, _)| !*b);
    let strip = |v: Vec<(bool, Op)>| v.into_iter().map(|(_, op)| op).collect::<Vec<_>>();
    tokio::join!(lane(&svc, strip(on_a)), lane(&reader, strip(on_b)));
    if let Err(e) = cancel(&svc, &root).await {
        assert_eq!(e.kind(), ErrorKind::TaskNotCancelable);
    }
    let done = until_terminal(&*log, &auth, &root).await;
    let recs = records(&*log, &auth, &root).await;
    assert_eq!(terminals(&recs), 1, "{recs:#?}");
    assert!(recs.last().unwrap().is_terminal());
    let status_terminals = recs
        .iter()
        .filter(|r| matches!(r, Record::StatusChanged { status } if status.state.is_terminal()))
        .count();
    assert_eq!(status_terminals, 1);
    assert_eq!(
        entries(&recs, |e| matches!(e, JournalEntry::WaitOpened { .. })),
        2
    );
    for address in [&root, &child] {
        let admitted: Vec<Value> = recs
            .iter()
            .filter_map(|r| match JournalEntry::of(r) {
                Some(JournalEntry::SignalAdmitted {
                    process, answer, ..
                }) if process == *address => Some(answer),
                _ => None,
            })
            .collect();
        assert!(admitted.len() <= 1, "{address}: {admitted:?}");
        let valid = if address == &root {
            json!(true)
        } else {
            json!(7)
        };
        assert!(admitted.iter().all(|a| *a == valid), "{admitted:?}");
    }
    match done.status.state {
        TaskState::Completed => {
            assert_eq!(result(&done), json!({"root": true, "child": 7}));
        }
        TaskState::Canceled => assert!(done.artifacts.is_empty()),
        other => panic!("ended {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    // Rules 6, 8, 9 and 11 together: any interleaving of retried starts,
    // answers (valid, invalid, repeated) and cancels, by two clients on two
    // services over one log at once, leaves exactly one terminal status, at
    // most one (valid) answer per wait, the same question ids throughout on
    // both services, and no panic.
    #[test]
    fn any_interleaving_ends_once_with_the_same_question_ids(
        ops in proptest::collection::vec((any::<bool>(), op()), 0..12)
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(interleaving(ops));
    }
}
