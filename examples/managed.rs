//! Run with `cargo run --release --example managed`: a managed program served
//! as A2A tasks on `http://127.0.0.1:8080` (`A2A_ADDR` overrides;
//! `A2A_ADDR=127.0.0.1:0` picks a free port and prints it), JSON-RPC at `/`,
//! HTTP+JSON under `/rest`.
//!
//! Runs are kept in SQLite at `$A2A_DATA_DIR/tasks.db` (default
//! `./data/tasks.db`); a restart resumes every run this host left (also those
//! waiting for answers) by replaying its journal. With `A2A_POSTGRES_URL` (and
//! the `postgres` feature) runs are kept in PostgreSQL (schema
//! `$A2A_POSTGRES_SCHEMA`, default `a2a`); give each host its own stable
//! `A2A_HOST_ID` (default `local`).
//!
//! The program `example.refund` takes `{"order": string, "amount": number > 0}`
//! and:
//! 1. records the step `lookup` (it prints `step lookup ran for ORDER` on
//!    stderr when it really runs; a replay does not run it again);
//! 2. at once, opens the wait `approve` on the root process (question
//!    `{"text": "Refund AMOUNT for ORDER?"}`, answer
//!    `{"approved": boolean, "note"?: string}`) and starts the child process
//!    `fraud-check`, which opens the wait `score` (an integer 0..=100); a
//!    blocking start answers once both are open, so its answer lists both;
//! 3. when both are answered, returns `{"order", "refunded", "note"}`:
//!    `refunded` is the amount (its exact text) if approved and the score is
//!    below 50, else 0; `note` is the approval's note or null.
//!
//! Answer a wait with a SendMessage to the task whose message metadata names
//! it: `"metadata": {"scope.wait": {"process": OWNER, "key": KEY}}`, the owner
//! and key as the task's `scope.pending` metadata lists them.
//!
//! `GET /metrics` answers Prometheus text (`a2a_requests_total`,
//! `a2a_request_duration_seconds`, …); `A2A_OTEL=stdout` exports every span
//! through the OpenTelemetry stdout exporter (build with `--features otel`
//! so that a request's `traceparent` parents its spans).
//! `A2A_RETENTION_SECS=N` deletes terminal tasks older than N seconds in the
//! background.

#[path = "common/mod.rs"]
mod common;
#[path = "common/telemetry.rs"]
mod telemetry;

use a2a_tower::BoxError;
use a2a_tower::log::SqliteTaskLog;
use a2a_tower::managed::{Process, Program, Wait};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use serde_json::{Value, json};

/// The refund program.
fn refund() -> Result<Program, BoxError> {
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
    Ok(Program::new("example.refund", input, output, run)?)
}

async fn run(p: Process, input: Value) -> Result<Value, BoxError> {
    let order = input["order"].as_str().unwrap_or_default().to_owned();
    let amount = input["amount"].clone();
    let looked_up = order.clone();
    let _record: Value = p
        .step("lookup", || async move {
            eprintln!("step lookup ran for {looked_up}");
            Ok(json!({"order": looked_up, "found": true}))
        })
        .await?;
    let approve = p.wait(
        Wait::new("approve")
            .question(json!({"text": format!("Refund {amount} for {order}?")}))
            .schema(json!({
                "type": "object",
                "required": ["approved"],
                "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}}
            })),
    );
    let fraud = p.child("fraud-check", |c| async move {
        let score = c
            .wait(
                Wait::new("score").schema(json!({"type": "integer", "minimum": 0, "maximum": 100})),
            )
            .await?;
        Ok(score)
    });
    let (approval, score) =
        tokio::try_join!(async { approve.await.map_err(BoxError::from) }, fraud)?;
    let approved = approval["approved"] == json!(true);
    // JSON Schema's `integer` admits `12.0` (what a client that keeps every
    // number as a double sends), which `as_i64` would not read.
    let low_risk = score.as_f64().is_some_and(|s| s < 50.0);
    let refunded = if approved && low_risk {
        amount
    } else {
        json!(0)
    };
    let note = approval.get("note").cloned().unwrap_or(Value::Null);
    Ok(json!({"order": order, "refunded": refunded, "note": note}))
}

/// The card served at `base_url` (no trailing slash).
fn card(base_url: &str) -> AgentCard {
    let mut card = AgentCard::new(
        "Refunds",
        "Refunds an order once a person approves it and the fraud score is low",
        "0.1.0",
    )
    .with_interface(AgentInterface::jsonrpc(format!("{base_url}/")))
    .with_interface(AgentInterface::http_json(format!("{base_url}/rest")))
    .with_skill(AgentSkill::new(
        "refund",
        "Refund",
        "Input {\"order\": string, \"amount\": number}; asks `approve` and `score`",
    ))
    .with_streaming(true);
    card.default_input_modes = vec!["application/json".into(), "text/plain".into()];
    card.default_output_modes = vec!["application/json".into()];
    card
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let _telemetry = telemetry::init();
    let (listener, addr) = common::bind().await?;
    let mut server = A2aServer::builder(card(&common::base_url(addr)));
    server = match std::env::var("A2A_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => postgres(server, url).await?,
        _ => {
            let dir = std::env::var_os("A2A_DATA_DIR").unwrap_or_else(|| "data".into());
            std::fs::create_dir_all(&dir)?;
            let log = SqliteTaskLog::open(std::path::Path::new(&dir).join("tasks.db"))?;
            telemetry::retention(&log);
            server.task_log(log)
        }
    };
    if let Ok(id) = std::env::var("A2A_HOST_ID") {
        server = server.host_id(id);
    }
    // Resumes the runs this host left before serving.
    let app = server.program(refund()?).await?;
    common::serve(listener, telemetry::WithMetrics(app)).await?;
    Ok(())
}

#[cfg(feature = "postgres")]
async fn postgres(
    server: a2a_tower::server::A2aServerBuilder,
    url: String,
) -> Result<a2a_tower::server::A2aServerBuilder, BoxError> {
    let mut log = a2a_tower::log::PostgresTaskLog::builder(url);
    if let Ok(schema) = std::env::var("A2A_POSTGRES_SCHEMA") {
        log = log.schema(schema);
    }
    let log = log.connect().await?;
    telemetry::retention(&log);
    Ok(server.task_log(log))
}

#[cfg(not(feature = "postgres"))]
async fn postgres(
    _: a2a_tower::server::A2aServerBuilder,
    _: String,
) -> Result<a2a_tower::server::A2aServerBuilder, BoxError> {
    Err("A2A_POSTGRES_URL needs the `postgres` feature: cargo run --features postgres --example managed".into())
}
