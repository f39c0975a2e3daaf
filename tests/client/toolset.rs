//! `ToolSet` against this crate's own servers on loopback, over both
//! bindings: an echo agent; an agent that asks a question (the ordinary
//! continuation, resumed by the same set and, through a saved request, by a
//! new set with the same continuation identity, refused under another
//! identity or by another identity-less set with no request reaching the
//! server); an agent that fails after partial output (a definite failure);
//! an agent asking a data-part question with exact numbers, in its answer
//! schema too; and a managed program whose external wait takes an exact number, a
//! schema-violating answer being refused before any request. Every wait is
//! bounded.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_tower::BoxError;
use a2a_tower::card::WELL_KNOWN_PATH;
use a2a_tower::client::Transport;
use a2a_tower::engine::{Execution, Executor};
use a2a_tower::server::A2aServer;
use a2a_tower::tool::{
    Answer, Endpoint, InputRequest, Invocation, Outcome, RemoteAgentError, Tool, ToolError,
    ToolErrorKind, ToolSet,
};
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill, Artifact, Message, Part, TaskState};
use serde_json::{Value, json};
use support::loopback::{listener, serve};
use support::managed::{AMOUNT, amount, amount_schema, card as managed_card};

/// Every wait of this file is bounded by this.
const PATIENCE: Duration = Duration::from_secs(20);

/// Both bindings.
const TRANSPORTS: [Transport; 2] = [Transport::JsonRpc, Transport::HttpJson];

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(PATIENCE, f)
        .await
        .expect("bounded wait")
}

/// The agents, by the first message's text: `fail…` writes a partial
/// artifact and fails; `ask…` asks "Which currency?" and, once answered,
/// answers "converted to ANSWER"; `numbers…` asks [`number_question`] and
/// answers the same way; anything else is echoed.
#[derive(Clone)]
struct Scripted;

fn artifact(id: &str, text: &str) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        parts: vec![Part::text(text)],
        ..Artifact::default()
    }
}

impl Executor for Scripted {
    async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
        let history = &ex.task.history;
        let first = history.first().map(Message::text).unwrap_or_default();
        if first.starts_with("fail") {
            ex.emit
                .artifact(artifact("out", "checked 3 of 5"), false, true)
                .await?;
            ex.emit.fail("out of stock").await?;
        } else if first.starts_with("numbers") && history.len() == 1 {
            ex.emit
                .status(TaskState::InputRequired, Some(number_question()))
                .await?;
        } else if first.starts_with("ask") && history.len() == 1 {
            ex.emit.input_required("Which currency?").await?;
        } else if first.starts_with("ask") || first.starts_with("numbers") {
            let answer = history.last().map(Message::text).unwrap_or_default();
            let out = format!("converted to {answer}");
            ex.emit.artifact(artifact("out", &out), false, true).await?;
            ex.emit.complete().await?;
        } else {
            ex.emit.artifact(artifact("a", &first), false, true).await?;
            ex.emit.artifact(artifact("b", "!"), false, true).await?;
            ex.emit.complete().await?;
        }
        Ok(())
    }
}

/// Numbers a second decoding pass through a `serde_json::Value` loses or
/// may lose (`0.0000001` became `1e-7`, `-0` became `0`); exponents in the
/// form serde_json's parser keeps.
const NUMBERS: &str = "[0.0000001,-0.000001,1.10,1e+400,-0,123456789012345678901234567890]";

/// The answer schema of [`number_question`], with exact numbers of its own.
const NUMBER_SCHEMA: &str =
    r#"{"type":"number","minimum":-0.0000001,"maximum":123456789012345678901234567890}"#;

/// An external wait whose question is a data part of [`NUMBERS`].
fn number_question() -> Message {
    let mut m = Message::agent("q", "");
    m.parts = vec![Part::data(serde_json::from_str(NUMBERS).unwrap())];
    let meta = format!(
        r#"{{"scope.wait":{{"process":"p","key":"k"}},"scope.answer_schema":{NUMBER_SCHEMA}}}"#
    );
    m.metadata = Some(serde_json::from_str(&meta).unwrap());
    m
}

/// A server on loopback: its card URL and the number of A2A requests (not
/// card fetches) that reached it.
struct Agent {
    card_url: String,
    rpc: Arc<AtomicUsize>,
}

impl Agent {
    fn requests(&self) -> usize {
        self.rpc.load(Ordering::SeqCst)
    }

    fn endpoint(&self, t: Transport) -> Endpoint {
        Endpoint::new(&self.card_url).transport(t)
    }
}

/// Counts the requests other than card fetches.
fn counting<B>(
    rpc: Arc<AtomicUsize>,
) -> tower::util::MapRequestLayer<impl Fn(http::Request<B>) -> http::Request<B> + Clone> {
    tower::util::MapRequestLayer::new(move |req: http::Request<B>| {
        if req.uri().path() != WELL_KNOWN_PATH {
            rpc.fetch_add(1, Ordering::SeqCst);
        }
        req
    })
}

fn with_interfaces(card: AgentCard, base: &str) -> AgentCard {
    card.with_interface(AgentInterface::jsonrpc(format!("{base}/rpc")))
        .with_interface(AgentInterface::http_json(format!("{base}/rest")))
}

async fn scripted(name: &str, description: &str) -> Agent {
    let (l, base) = listener().await;
    let mut skill = AgentSkill::new("main", name, description);
    skill.examples = vec![format!("{name} this")];
    let mut card =
        with_interfaces(AgentCard::new(name, description, "1.0.0"), &base).with_skill(skill);
    // `numbers…` takes a JSON answer.
    card.default_input_modes.push("application/json".into());
    let rpc = Arc::new(AtomicUsize::new(0));
    let app = A2aServer::builder(card)
        .http_layer(counting(rpc.clone()))
        .executor(Scripted)
        .await
        .unwrap();
    serve(l, app);
    Agent {
        card_url: format!("{base}{WELL_KNOWN_PATH}"),
        rpc,
    }
}

async fn managed() -> Agent {
    let (l, base) = listener().await;
    let card = with_interfaces(managed_card(&["text/plain"]), &base).with_skill(AgentSkill::new(
        "amount",
        "Amount",
        "Asks for an amount",
    ));
    let rpc = Arc::new(AtomicUsize::new(0));
    let app = A2aServer::builder(card)
        .http_layer(counting(rpc.clone()))
        .program(amount())
        .await
        .unwrap();
    serve(l, app);
    Agent {
        card_url: format!("{base}{WELL_KNOWN_PATH}"),
        rpc,
    }
}

async fn open(endpoints: Vec<Endpoint>) -> ToolSet {
    bounded(ToolSet::open(endpoints))
        .await
        .expect("the set opens")
}

fn tool(set: &ToolSet, name: &str) -> Arc<dyn Tool> {
    set.tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

async fn call(tool: &dyn Tool, message: &str) -> Result<Outcome, ToolError> {
    bounded(tool.call(Invocation::new("call-1", json!({"message": message})))).await
}

async fn resume(
    tool: &dyn Tool,
    request: InputRequest,
    answer: Answer,
) -> Result<Outcome, ToolError> {
    bounded(tool.resume(request, answer)).await
}

fn output(r: Result<Outcome, ToolError>) -> String {
    match r {
        Ok(Outcome::Output(o)) => o.text,
        other => panic!("expected output, got {other:?}"),
    }
}

fn question(r: Result<Outcome, ToolError>) -> InputRequest {
    match r {
        Ok(Outcome::InputRequired(q)) => q,
        other => panic!("expected an input request, got {other:?}"),
    }
}

fn refused(r: Result<Outcome, ToolError>) -> ToolErrorKind {
    match r {
        Err(e) => e.kind(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// An input request as a durable host keeps it: JSON text, read back.
fn saved(request: &InputRequest) -> InputRequest {
    serde_json::from_str(&serde_json::to_string(request).unwrap()).unwrap()
}

#[tokio::test]
async fn echo_over_both_bindings() {
    let agent = scripted("Echo Agent", "Echoes text.").await;
    for t in TRANSPORTS {
        let set = open(vec![agent.endpoint(t)]).await;
        let echo = tool(&set, "echo_agent");
        assert_eq!(
            echo.description(),
            "Echoes text.\n\nSkills:\n- Echo Agent: Echoes text.\n  Examples: Echo Agent this"
        );
        assert_eq!(output(call(&*echo, "hello").await), "hello!");
        let e = bounded(echo.call(Invocation::new("2", json!({"message": 1})))).await;
        assert_eq!(refused(e), ToolErrorKind::InvalidInput);
        set.close();
        assert_eq!(refused(call(&*echo, "hello").await), ToolErrorKind::Closed);
    }
    assert_eq!(agent.requests(), 2, "one call per binding; nothing else");
}

#[tokio::test]
async fn ordinary_questions_continue_the_same_task() {
    let agent = scripted("Asker", "Asks first.").await;
    for t in TRANSPORTS {
        let set = open(vec![agent.endpoint(t)]).await;
        let asker = tool(&set, "asker");
        let q = question(call(&*asker, "ask: convert 10").await);
        assert_eq!(
            (q.tool.as_str(), q.question.as_str()),
            ("asker", "Which currency?")
        );
        assert_eq!(q.answer_schema, None);
        let before = agent.requests();
        let empty = resume(&*asker, q.clone(), Answer::Text(" ".into())).await;
        assert_eq!(refused(empty), ToolErrorKind::InvalidAnswer);
        assert_eq!(agent.requests(), before, "refused before any request");
        let out = resume(&*asker, q, Answer::Text("EUR".into())).await;
        assert_eq!(output(out), "converted to EUR");

        // Without a continuation identity, another set cannot resume it.
        let q = question(call(&*asker, "ask: convert 20").await);
        let other = open(vec![agent.endpoint(t)]).await;
        let before = agent.requests();
        let r = resume(
            &*tool(&other, "asker"),
            saved(&q),
            Answer::Text("CHF".into()),
        )
        .await;
        assert_eq!(refused(r), ToolErrorKind::Continuation);
        assert_eq!(agent.requests(), before);
        assert_eq!(
            output(resume(&*asker, q, Answer::Text("CHF".into())).await),
            "converted to CHF"
        );
    }
}

/// Opens a new set of the asking `agent` under `identity` and resumes the
/// saved request `kept` (JSON text) with the answer "GBP".
async fn resume_in_a_new_set(
    agent: &Agent,
    t: Transport,
    identity: &str,
    kept: &str,
) -> Result<Outcome, ToolError> {
    let set = open(vec![agent.endpoint(t).continuation_identity(identity)]).await;
    let request = serde_json::from_str(kept).unwrap();
    resume(&*tool(&set, "asker"), request, Answer::Text("GBP".into())).await
}

#[tokio::test]
async fn a_saved_request_resumes_through_a_new_set_with_the_same_identity() {
    let agent = scripted("Asker", "Asks first.").await;
    for t in TRANSPORTS {
        let first = open(vec![
            agent.endpoint(t).continuation_identity("host-1/rev-7"),
        ])
        .await;
        let q = question(call(&*tool(&first, "asker"), "ask: convert 30").await);
        let kept = serde_json::to_string(&q).unwrap();
        drop(first); // e.g. the host restarts

        // Another identity, the same binding otherwise: refused, no request.
        let before = agent.requests();
        let r = resume_in_a_new_set(&agent, t, "host-2/rev-7", &kept).await;
        assert_eq!(refused(r), ToolErrorKind::Continuation);
        // The same identity under another tool name: refused too.
        let renamed = open(vec![
            agent
                .endpoint(t)
                .continuation_identity("host-1/rev-7")
                .name("asker2"),
        ])
        .await;
        let mut request: InputRequest = serde_json::from_str(&kept).unwrap();
        request.tool = "asker2".into();
        let r = resume(
            &*tool(&renamed, "asker2"),
            request,
            Answer::Text("GBP".into()),
        )
        .await;
        assert_eq!(refused(r), ToolErrorKind::Continuation);
        assert_eq!(agent.requests(), before, "no request reached the server");

        let r = resume_in_a_new_set(&agent, t, "host-1/rev-7", &kept).await;
        assert_eq!(output(r), "converted to GBP");
    }
}

#[tokio::test]
async fn a_failed_remote_task_is_a_definite_failure_with_partial_output() {
    let agent = scripted("Shop", "Sells things.").await;
    for t in TRANSPORTS {
        let set = open(vec![agent.endpoint(t)]).await;
        let r = call(&*tool(&set, "shop"), "fail: buy 5").await;
        let Ok(Outcome::Failed(f)) = r else {
            panic!("expected a failure, got {r:?}")
        };
        assert_eq!(f.partial(), Some("checked 3 of 5"));
        let cause = f.cause().downcast_ref::<RemoteAgentError>().unwrap();
        assert_eq!(cause.state(), TaskState::Failed);
        assert_eq!(cause.status_text(), Some("out of stock"));
        assert!(!cause.task_id().is_empty() && !cause.context_id().is_empty());
    }
}

#[tokio::test]
async fn several_agents_in_one_set() {
    let echo = scripted("Echo", "Echoes.").await;
    let shop = scripted("Shop", "Sells.").await;
    let set = open(vec![
        echo.endpoint(Transport::JsonRpc),
        shop.endpoint(Transport::HttpJson),
    ])
    .await;
    let names: Vec<String> = set.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["echo", "shop"]);
    assert_eq!(output(call(&*tool(&set, "echo"), "hi").await), "hi!");
    // The same agent twice without a name override is a configuration error.
    let twice = bounded(ToolSet::open(vec![
        echo.endpoint(Transport::JsonRpc),
        echo.endpoint(Transport::HttpJson),
    ]))
    .await;
    assert_eq!(
        twice.err().map(|e| e.kind()),
        Some(ToolErrorKind::Configuration)
    );
}

#[tokio::test]
async fn an_external_wait_takes_an_exact_number_checked_before_sending() {
    let agent = managed().await;
    let exact = "12345678901234567890.25";
    for t in TRANSPORTS {
        let set = open(vec![agent.endpoint(t).continuation_identity("host-1")]).await;
        let managed = tool(&set, "managed");
        let q = question(call(&*managed, "{}").await);
        assert_eq!(q.question, "How much?");
        assert_eq!(q.answer_schema, Some(amount_schema()));
        assert_eq!(
            q.continuation["wait"],
            json!({"process": q.continuation["taskId"], "key": "amount"})
        );

        let before = agent.requests();
        for bad in [
            Answer::Json(json!(-1)),
            Answer::Json(json!("12")),
            Answer::Text("a lot".into()),
        ] {
            let r = resume(&*managed, q.clone(), bad).await;
            assert_eq!(refused(r), ToolErrorKind::InvalidAnswer);
        }
        assert_eq!(agent.requests(), before, "refused before any request");

        let answer: Value = serde_json::from_str(exact).unwrap();
        let out = output(resume(&*managed, saved(&q), Answer::Json(answer.clone())).await);
        assert_eq!(
            out,
            format!(r#"{{"amount":{exact}}}"#),
            "the exact number arrived"
        );
        // Sending the saved answer again is the same answer, not a second one.
        let again = output(resume(&*managed, saved(&q), Answer::Text(exact.into())).await);
        assert_eq!(again, out);
        let _ = AMOUNT;
    }
}

#[tokio::test]
async fn a_data_question_its_schema_and_the_answer_keep_exact_numbers() {
    let agent = scripted("Numbers", "Asks with numbers.").await;
    for t in TRANSPORTS {
        let set = open(vec![agent.endpoint(t)]).await;
        let numbers = tool(&set, "numbers");
        let q = question(call(&*numbers, "numbers").await);
        assert_eq!(q.question, NUMBERS, "{t:?}");
        let schema = serde_json::to_string(&q.answer_schema).unwrap();
        assert_eq!(schema, NUMBER_SCHEMA, "{t:?}");
        let answer: Value = serde_json::from_str("0.0000001").unwrap();
        let out = output(resume(&*numbers, saved(&q), Answer::Json(answer)).await);
        assert_eq!(out, "converted to 0.0000001", "{t:?}");
    }
}
