//! JSON-RPC codec throughput: decoding a SendMessage request body into an
//! operation, and encoding a Task result to bytes (beside the task alone
//! through serde_json's writer, for comparison).

use std::hint::black_box;

use a2a_tower::jsonrpc::codec::{Id, decode_request, encode_result};
use a2a_tower::types::{Artifact, Message, Part, Task, TaskState, TaskStatus};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const SEND: &str = r#"{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","contextId":"c-1","parts":[{"text":"Convert 10 USD to EUR, then explain the rate you used and when it was last updated."},{"data":{"amount":10.00,"from":"USD","to":"EUR"}}],"metadata":{"trace":"abc"}},"configuration":{"acceptedOutputModes":["application/json","text/plain"],"historyLength":0}}}"#;

fn task() -> Task {
    Task {
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: None,
        },
        artifacts: vec![Artifact {
            artifact_id: "a-1".into(),
            parts: vec![Part::text("The rate is 0.921 EUR per USD.")],
            ..Default::default()
        }],
        history: vec![
            Message::user("m-1", "Convert 10 USD to EUR"),
            Message::agent("m-2", "9.21 EUR"),
        ],
        ..Default::default()
    }
}

fn codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("jsonrpc");
    g.throughput(Throughput::Bytes(SEND.len() as u64));
    g.bench_function("decode_send_message", |b| {
        b.iter(|| decode_request(black_box(SEND.as_bytes())).unwrap())
    });
    // Params before method: the two-pass (Value) path, for comparison.
    let reordered = {
        let (head, params) = SEND.split_once(r#","params":"#).unwrap();
        format!(
            r#"{{"params":{},{}}}"#,
            &params[..params.len() - 1],
            &head[1..]
        )
    };
    g.bench_function("decode_send_message_params_first", |b| {
        b.iter(|| decode_request(black_box(reordered.as_bytes())).unwrap())
    });
    let task = task();
    let id = Id::String("r1".into());
    let len = encode_result(&id, &task).unwrap().len();
    g.throughput(Throughput::Bytes(len as u64));
    g.bench_function("encode_task_result", |b| {
        b.iter(|| encode_result(black_box(&id), black_box(&task)).unwrap())
    });
    // The task alone through serde_json's writer, for comparison with the
    // crate's (`a2a_tower_core::json`, which `encode_result` uses): the
    // same bytes, strings checked for escapes a word at a time.
    g.bench_function("encode_task_serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&task)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
