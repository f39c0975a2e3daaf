//! The gRPC binding's decoding: protobuf bytes (arbitrary, and valid
//! requests with byte edits) through prost into the generated message, then
//! through ProtoJSON into the crate's type, as `GrpcBindingService` bridges them.
//! A message the crate's type takes goes back to the proto and returns
//! unchanged, unless it holds a number that is not a 64-bit integer: those
//! do not convert back (see docs/fuzzing.md, "Findings").

use a2a_tower::Operation;
use a2a_tower::grpc::proto;
use a2a_tower::types::{Part, SendMessageRequest};
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;
use prost::Message as _;
use serde_json::{Value, json};

use crate::harness::{Text, bounded, byte_mutated, bytes, fuzz};
use crate::jsonrpc::operations;

/// The protobuf bytes of the SendMessage seed (its data part with integers
/// only).
fn seed() -> Vec<u8> {
    let Operation::SendMessage(mut r) = operations().swap_remove(0) else {
        unreachable!("the first seed is SendMessage")
    };
    r.message.parts[1] = Part::data(json!({"n": 7, "list": [1, "a", null, {"b": true}]}));
    r.metadata = None;
    let pb: proto::SendMessageRequest =
        serde_json::from_slice(&serde_json::to_vec(&r).unwrap()).unwrap();
    pb.encode_to_vec()
}

/// The value holds a number that is not a 64-bit integer.
fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_i64().is_none() && n.as_u64().is_none(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(m) => m.values().any(has_float),
        _ => false,
    }
}

fn check(bytes: &[u8]) -> TestCaseResult {
    let decoded = bounded(bytes.len(), 256, 64 * 1024, || {
        let pb = proto::SendMessageRequest::decode(bytes).ok()?;
        let json = serde_json::to_vec(&pb).ok()?;
        Some(serde_json::from_slice::<SendMessageRequest>(&json).ok())
    });
    if let Some(Some(r)) = decoded {
        let text = serde_json::to_vec(&r).unwrap();
        if has_float(&serde_json::from_slice(&text).unwrap()) {
            return Ok(());
        }
        let pb: proto::SendMessageRequest =
            serde_json::from_slice(&text).expect("the crate's type fits the proto");
        let back: SendMessageRequest =
            serde_json::from_slice(&serde_json::to_vec(&pb).unwrap()).unwrap();
        prop_assert_eq!(back, r);
    }
    Ok(())
}

#[test]
fn grpc_send_message_decoding() {
    let inputs = prop_oneof![1 => bytes(), 4 => byte_mutated(seed())];
    fuzz("grpc", 2000, inputs.prop_map(Text), |b| check(&b.0));
}
