//! Managed tasks: the programs the managed tests serve, the card that serves
//! them, the services and sends that drive them (other calls: `calls`), and
//! the reads of their task log (waiting for open questions, counting
//! records).
//!
//! - `refund`: the issue's refund flow (step `lookup`, root wait `approve`,
//!   child `fraud-check` with wait `score`), counting the lookups that ran.
//! - `same_keys`: a root wait and a child wait that share the key `k`.
//! - `echo_question`: asks its input back as the question and returns the
//!   answer (for the output policy).
//! - `amount`: one wait `amount` (a number ≥ 0) whose answer it returns as
//!   `{"amount": ..}` (for the tool set's external waits).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::log::{Record, Sequenced, TaskBackend};
use a2a_tower::managed::{
    EXTERNAL_WAIT_EXTENSION, JournalEntry, ManagedService, PENDING_KEY, Process, Program, RunError,
    WAIT_KEY, Wait,
};
use a2a_tower::types::{
    AgentCard, AgentExtension, Message, Metadata, Part, SendMessageConfiguration,
    SendMessageRequest, Task,
};
use a2a_tower::{A2aError, BoxError};
use serde_json::{Value, json};

use super::calls::send_with;
use super::tasks::{meta, until};

/// A number no `f64` holds: its exact text must survive end to end.
pub(crate) const EXACT: &str = "12345678901234567890.123456789";

/// [`EXACT`] as a JSON value (parsed, never through `f64`).
pub(crate) fn exact() -> Value {
    serde_json::from_str(EXACT).unwrap()
}

/// JSON parsed from text, keeping every number's exact text.
pub(crate) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// A card a managed service accepts, with these default output modes.
pub(crate) fn card(modes: &[&str]) -> AgentCard {
    let mut card = AgentCard::new("Managed", "Runs managed programs", "1.0.0").with_streaming(true);
    card.capabilities.extensions.push(AgentExtension {
        uri: EXTERNAL_WAIT_EXTENSION.into(),
        ..Default::default()
    });
    card.default_output_modes = modes.iter().map(|m| (*m).to_owned()).collect();
    card
}

/// How many times a step really ran (shared by every clone).
#[derive(Clone, Default)]
pub(crate) struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub(crate) fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The refund program's name.
pub(crate) const REFUND: &str = "test.refund";

/// The approval wait's answer schema.
pub(crate) fn approve_schema() -> Value {
    json!({
        "type": "object",
        "required": ["approved"],
        "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}}
    })
}

/// The fraud score wait's answer schema.
pub(crate) fn score_schema() -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": 100})
}

/// The refund flow of the issue: input `{"order": string, "amount":
/// number > 0}`; the step `lookup` (counted in `lookups` each time it really runs);
/// then at once the root wait `approve` and the child `fraud-check` with its
/// wait `score`; output `{"order", "refunded", "note"}`, refunded (the
/// amount's exact text) only if approved and the score is below 50.
pub(crate) fn refund(lookups: Counter) -> Program {
    let input = json!({
        "type": "object",
        "required": ["order", "amount"],
        "properties": {
            "order": {"type": "string"},
            "amount": {"type": "number", "exclusiveMinimum": 0}
        },
        "additionalProperties": false
    });
    let output = json!({
        "type": "object",
        "required": ["order", "refunded", "note"],
        "properties": {
            "order": {"type": "string"},
            "refunded": {"type": "number"},
            "note": {"type": ["string", "null"]}
        }
    });
    Program::new(REFUND, input, output, move |p: Process, input: Value| {
        let lookups = lookups.clone();
        async move {
            let order = input["order"].as_str().unwrap_or_default().to_owned();
            let amount = input["amount"].clone();
            let looked_up = order.clone();
            let _found: Value = p
                .step("lookup", || async move {
                    lookups.bump();
                    Ok(json!({"order": looked_up, "found": true}))
                })
                .await?;
            let approve = p.wait(
                Wait::new("approve")
                    .question(json!({"text": format!("Refund {amount} for {order}?")}))
                    .schema(approve_schema()),
            );
            let fraud = p.child("fraud-check", |c| async move {
                Ok(c.wait(Wait::new("score").schema(score_schema())).await?)
            });
            let (approval, score) =
                tokio::try_join!(async { approve.await.map_err(BoxError::from) }, fraud)?;
            let refunded =
                if approval["approved"] == json!(true) && score.as_i64().is_some_and(|s| s < 50) {
                    amount
                } else {
                    json!(0)
                };
            let note = approval.get("note").cloned().unwrap_or(Value::Null);
            Ok(json!({"order": order, "refunded": refunded, "note": note}))
        }
    })
    .unwrap()
}

/// The refund program's input for `order` and an amount given as JSON text.
pub(crate) fn refund_input(order: &str, amount: &str) -> Value {
    parse(&format!(r#"{{"order": "{order}", "amount": {amount}}}"#))
}

/// The name of the program whose root and child waits share a key.
pub(crate) const SAME_KEYS: &str = "test.same-keys";

/// The root opens the wait `k` (a boolean) and its child `kid` opens the wait
/// `k` too (an integer); the output is `{"root": .., "child": ..}`.
pub(crate) fn same_keys() -> Program {
    Program::new(
        SAME_KEYS,
        json!(true),
        json!({"type": "object"}),
        |p: Process, _input: Value| async move {
            let root = p.wait(
                Wait::new("k")
                    .question(json!("root?"))
                    .schema(json!({"type": "boolean"})),
            );
            let child = p.child("kid", |c| async move {
                Ok(c.wait(
                    Wait::new("k")
                        .question(json!("child?"))
                        .schema(json!({"type": "integer"})),
                )
                .await?)
            });
            let (root, child) =
                tokio::try_join!(async { root.await.map_err(BoxError::from) }, child)?;
            Ok(json!({"root": root, "child": child}))
        },
    )
    .unwrap()
}

/// The name of the program that asks its input back.
pub(crate) const ECHO_QUESTION: &str = "test.echo-question";

/// Opens the wait `q` whose question is the input, and returns the answer.
pub(crate) fn echo_question() -> Program {
    Program::new(
        ECHO_QUESTION,
        json!(true),
        json!(true),
        |p: Process, input: Value| async move { Ok(p.wait(Wait::new("q").question(input)).await?) },
    )
    .unwrap()
}

/// The name of the program that asks for one amount.
pub(crate) const AMOUNT: &str = "test.amount";

/// The `amount` wait's answer schema.
pub(crate) fn amount_schema() -> Value {
    json!({"type": "number", "minimum": 0})
}

/// Opens the one wait `amount` (question "How much?", a number ≥ 0) and
/// returns `{"amount": ANSWER}`, the answer's exact text kept.
pub(crate) fn amount() -> Program {
    Program::new(
        AMOUNT,
        json!(true),
        json!({"type": "object"}),
        |p: Process, _input: Value| async move {
            let answer = p
                .wait(
                    Wait::new("amount")
                        .question(json!("How much?"))
                        .schema(amount_schema()),
                )
                .await?;
            Ok(json!({"amount": answer}))
        },
    )
    .unwrap()
}

/// The name of the program that runs until it is canceled.
pub(crate) const UNTIL_CANCELED: &str = "test.until-canceled";

/// Works (no wait) until the task is canceled, then stops.
pub(crate) fn until_canceled() -> Program {
    Program::new(
        UNTIL_CANCELED,
        json!(true),
        json!(true),
        |p: Process, _input: Value| async move {
            p.cancelled().await;
            Err(RunError::Cancelled.into())
        },
    )
    .unwrap()
}

/// A managed service of `program` over `log` (output `application/json`).
pub(crate) fn service(log: Arc<dyn TaskBackend>, program: Program) -> ManagedService {
    ManagedService::builder(card(&["application/json"]), log, program)
        .build()
        .unwrap()
}

/// A managed service of `program` over `log` with the host id `host`.
pub(crate) fn service_on(
    log: Arc<dyn TaskBackend>,
    program: Program,
    host: &str,
) -> ManagedService {
    ManagedService::builder(card(&["application/json"]), log, program)
        .host_id(host)
        .build()
        .unwrap()
}

/// The authority the tasks of `program` are stored under (its service name,
/// then the public authority).
pub(crate) fn authority(program: &str) -> String {
    format!("{program}/public")
}

/// A blocking SendMessage: the task it answers with.
pub(crate) async fn send(svc: &ManagedService, message: Message) -> Result<Task, A2aError> {
    send_with(
        svc,
        SendMessageRequest {
            message,
            ..Default::default()
        },
    )
    .await
}

/// A SendMessage that returns as soon as the task exists.
pub(crate) async fn send_now(svc: &ManagedService, message: Message) -> Result<Task, A2aError> {
    send_with(
        svc,
        SendMessageRequest {
            message,
            configuration: Some(SendMessageConfiguration {
                return_immediately: true,
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await
}

/// A start: one part, with these ids (an empty context id lets the server
/// pick one).
pub(crate) fn start(message_id: &str, context_id: &str, part: Part) -> Message {
    let mut m = Message::user(message_id, "");
    m.context_id = context_id.into();
    m.parts = vec![part];
    m
}

/// An answer to `task` naming the wait `(process, key)` in `scope.wait`.
pub(crate) fn answer(
    task: &Task,
    message_id: &str,
    process: &str,
    key: &str,
    part: Part,
) -> Message {
    let mut m = answer_unnamed(task, message_id, part);
    let mut meta = Metadata::new();
    meta.insert(WAIT_KEY.into(), json!({"process": process, "key": key}));
    m.metadata = Some(meta);
    m
}

/// An answer to `task` that names no wait.
pub(crate) fn answer_unnamed(task: &Task, message_id: &str, part: Part) -> Message {
    let mut m = Message::user(message_id, "");
    m.task_id = task.id.clone();
    m.context_id = task.context_id.clone();
    m.parts = vec![part];
    m
}

/// The open questions, `scope.pending`.
pub(crate) fn pending(task: &Task) -> Vec<Value> {
    meta(task, PENDING_KEY)
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("no {PENDING_KEY} array: {:?}", task.metadata))
}

/// The question ids by wait address `(owner, key)`.
pub(crate) fn question_ids(task: &Task) -> BTreeMap<(String, String), String> {
    pending(task)
        .iter()
        .map(|q| {
            let s = |k: &str| q[k].as_str().unwrap().to_owned();
            ((s("owner"), s("key")), s("id"))
        })
        .collect()
}

/// Waits until the task lists `n` open questions.
pub(crate) async fn until_pending(
    log: &dyn TaskBackend,
    authority: &str,
    id: &str,
    n: usize,
) -> Arc<Task> {
    until(log, authority, id, |t| {
        t.metadata
            .as_ref()
            .and_then(|m| m.get(PENDING_KEY))
            .and_then(Value::as_array)
            .is_some_and(|p| p.len() == n)
    })
    .await
}

/// How many committed records of the task move it to a terminal state.
pub(crate) fn terminals(records: &[Record]) -> usize {
    records.iter().filter(|r| r.is_terminal()).count()
}

/// The value of a part as the output policy wrote it: a data part's value,
/// or the text of a text part (parsed when its media type is JSON).
pub(crate) fn part_value(part: &Part) -> Value {
    use a2a_tower::types::PartContent;
    match &part.content {
        PartContent::Data(v) => v.clone(),
        PartContent::Text(t) if part.media_type == "application/json" => parse(t),
        PartContent::Text(t) => Value::String(t.clone()),
        other => panic!("unexpected part {other:?}"),
    }
}

/// The result artifact's value.
pub(crate) fn result(task: &Task) -> Value {
    let [artifact] = task.artifacts.as_slice() else {
        panic!("one artifact: {:?}", task.artifacts)
    };
    assert_eq!(artifact.artifact_id, a2a_tower::managed::RESULT_ARTIFACT_ID);
    let [part] = artifact.parts.as_slice() else {
        panic!("one part: {artifact:?}")
    };
    part_value(part)
}

/// A record, or a sequenced one (what a log's `read` gives).
pub(crate) trait AsRecord {
    /// The record.
    fn record(&self) -> &Record;
}

impl AsRecord for Record {
    fn record(&self) -> &Record {
        self
    }
}

impl AsRecord for Sequenced {
    fn record(&self) -> &Record {
        &self.record
    }
}

/// How many of `records` are of the kind `is`.
pub(crate) fn count<R: AsRecord>(records: &[R], is: impl Fn(&Record) -> bool) -> usize {
    records.iter().filter(|r| is(r.record())).count()
}

/// How many of `records` are journal entries of the kind `is`.
pub(crate) fn entries<R: AsRecord>(records: &[R], is: impl Fn(&JournalEntry) -> bool) -> usize {
    count(records, |r| JournalEntry::of(r).as_ref().is_some_and(&is))
}
