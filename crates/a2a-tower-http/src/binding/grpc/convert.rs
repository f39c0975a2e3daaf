//! Between the generated protobuf messages and the crate's wire types,
//! through ProtoJSON: the generated messages (de)serialize as ProtoJSON
//! (pbjson), and so do the crate's types, so one JSON text bridges them
//! exactly, with no per-field mapping to keep in step with the proto.
//!
//! Requests that do not fit the crate's types are InvalidParams (the cause,
//! serde's text, stays internal); answers that do not fit the proto are
//! Internal.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{A2aError, ErrorKind};

/// A request message as the crate's type (InvalidParams when it does not fit).
pub(crate) fn request<P: Serialize, T: DeserializeOwned>(message: &P) -> Result<T, A2aError> {
    let json = serde_json::to_vec(message).map_err(A2aError::internal)?;
    serde_json::from_slice(&json)
        .map_err(|e| A2aError::new(ErrorKind::InvalidParams).with_source(e))
}

/// An answer already written as ProtoJSON, as the generated message.
///
/// A number in a data part or metadata (a protobuf `Value`) that is not a
/// 64-bit integer becomes the nearest double, as protobuf holds it: with
/// serde_json's `arbitrary_precision` (which the crate enables) the
/// generated `Value` cannot read `1.10` or `1e19` from the text itself.
pub(crate) fn answer_json<P: DeserializeOwned>(json: &[u8]) -> Result<P, A2aError> {
    serde_json::from_slice(json).or_else(|_| {
        let mut value: Value = serde_json::from_slice(json).map_err(A2aError::internal)?;
        doubles(&mut value);
        P::deserialize(value).map_err(A2aError::internal)
    })
}

/// Every number that is not a 64-bit integer, as the nearest double.
fn doubles(value: &mut Value) {
    match value {
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            if let Some(d) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = d;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(doubles),
        Value::Object(members) => members.values_mut().for_each(doubles),
        _ => {}
    }
}

/// A value of the crate's types as the generated message.
pub(crate) fn answer<T: Serialize + ?Sized, P: DeserializeOwned>(value: &T) -> Result<P, A2aError> {
    let json = serde_json::to_vec(value).map_err(A2aError::internal)?;
    answer_json(&json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::grpc::proto;
    use crate::types::{Message, Part, StreamResponse, Task, TaskState, TaskStatus};
    use serde_json::json;

    #[test]
    fn a_task_round_trips() {
        let mut task = Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            status: TaskStatus::new(TaskState::Working),
            ..Default::default()
        };
        task.history.push(Message::user("m-1", "hello"));
        let mut data = Message::agent("m-2", "");
        data.parts = vec![Part::data(json!({"ok": true, "list": ["a"]}))];
        task.history.push(data);
        let pb: proto::Task = answer(&task).unwrap();
        assert_eq!(
            pb.status.as_ref().unwrap().state,
            proto::TaskState::Working as i32
        );
        assert_eq!(pb.history[0].role, proto::Role::User as i32);
        let back: Task = request(&pb).unwrap();
        assert_eq!(back, task);
    }

    #[test]
    fn numbers_that_are_not_integers_become_doubles() {
        let mut task = Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            status: TaskStatus::new(TaskState::Completed),
            ..Default::default()
        };
        let mut data = Message::agent("m-2", "");
        let numbers = crate::types::Metadata::from_iter([(
            "n".to_owned(),
            serde_json::from_str::<Value>("[1.5, 1.10, 0.0000001, 12345678901234567890123, -3, 7]")
                .unwrap(),
        )]);
        data.parts = vec![Part::data(Value::Object(numbers.clone()))];
        data.metadata = Some(numbers);
        task.history.push(data);
        let pb: proto::Task = answer(&task).unwrap();
        let back: Task = request(&pb).unwrap();
        let json = serde_json::to_string(&back.history[0].parts[0]).unwrap();
        assert_eq!(
            json,
            r#"{"data":{"n":[1.5,1.1,1e-7,1.2345678901234568e+22,-3.0,7.0]}}"#
        );
    }

    #[test]
    fn stream_events_fit_the_oneof() {
        let ev = StreamResponse::Message(Message::agent("m", "hi"));
        let pb: proto::StreamResponse = answer(&ev).unwrap();
        assert!(matches!(
            pb.payload,
            Some(proto::stream_response::Payload::Message(_))
        ));
    }

    #[test]
    fn a_request_that_does_not_fit_is_invalid_params() {
        // A part with none of text, raw, url and data.
        let pb = proto::SendMessageRequest {
            message: Some(proto::Message {
                message_id: "m".into(),
                role: proto::Role::User as i32,
                parts: vec![proto::Part::default()],
                ..Default::default()
            }),
            ..Default::default()
        };
        let err = request::<_, crate::types::SendMessageRequest>(&pb).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidParams);
    }
}
