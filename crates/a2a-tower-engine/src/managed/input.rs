//! What a message carries into a managed run: exactly one part holding a JSON
//! value (text or data), checked against a schema; and the ids derived from
//! who sent what.

use serde_json::Value;

use crate::schema::Schema;
use crate::types::{Message, PartContent};
use crate::{A2aError, CallContext, ErrorKind, GrpcCall};

/// The value of a message's single part: the text itself when `schema`
/// accepts only strings, else the text parsed as JSON (numbers keep their
/// exact text); a data part as it is. Files, URLs and several parts are
/// refused, so nothing is converted lossily.
pub(crate) fn value(message: &Message, schema: &Schema, field: &str) -> Result<Value, A2aError> {
    let [part] = message.parts.as_slice() else {
        return Err(A2aError::invalid_params(
            "message.parts",
            "must hold exactly one part (text or data)",
        ));
    };
    let value = match &part.content {
        PartContent::Text(t) if schema.is_string() => Value::String(t.clone()),
        PartContent::Text(t) => serde_json::from_str(t)
            .map_err(|_| A2aError::invalid_params("message.parts[0].text", "is not valid JSON"))?,
        PartContent::Data(v) => v.clone(),
        PartContent::Raw(_) | PartContent::Url(_) => {
            return Err(A2aError::new(ErrorKind::ContentTypeNotSupported)
                .with_message("A managed task takes a text or data part, not a file"));
        }
    };
    schema.check_at(&value, field)?;
    Ok(value)
}

/// Refuses, on a call over gRPC ([`GrpcCall`]), a data part holding any
/// number: protobuf's `Value` carries numbers as doubles, so its exact text
/// (and integers beyond 2^53) may have changed on the way. The JSON
/// bindings keep numbers exact and pass.
pub(crate) fn exact_numbers(message: &Message, context: &CallContext) -> Result<(), A2aError> {
    if context.extensions.get::<GrpcCall>().is_none() {
        return Ok(());
    }
    for (i, part) in message.parts.iter().enumerate() {
        if let PartContent::Data(v) = &part.content
            && has_number(v)
        {
            return Err(A2aError::invalid_params(
                format!("message.parts[{i}].data"),
                "holds a number, which gRPC carries as a lossy double; send the value as a \
                 text part (JSON text keeps numbers exact) or over JSON-RPC or HTTP+JSON",
            ));
        }
    }
    Ok(())
}

fn has_number(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::Array(items) => items.iter().any(has_number),
        Value::Object(members) => members.values().any(has_number),
        _ => false,
    }
}

/// The namespace of every id derived here (a fixed, random UUID).
const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x7c1e_4a2b_9f3d_4e51_a8c6_2d0b_5e97_1f34);

/// A stable id of `parts`, joined unambiguously (each part's length first).
pub(crate) fn derive(kind: &str, parts: &[&str]) -> String {
    let mut name = String::from(kind);
    for p in parts {
        name.push('\0');
        name.push_str(&p.len().to_string());
        name.push(':');
        name.push_str(p);
    }
    crate::engine::id_text(uuid::Uuid::new_v5(&NAMESPACE, name.as_bytes()))
}

/// The task id of a start: the same service, authority, context and message
/// id always name the same task.
pub(crate) fn task_id(
    service: &str,
    authority: &str,
    context_id: &str,
    message_id: &str,
) -> String {
    derive("task", &[service, authority, context_id, message_id])
}

/// A question's id, from the root and the committed wait address.
pub(crate) fn question_id(root: &str, process: &str, key: &str) -> String {
    derive("question", &[root, process, key])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Part;
    use serde_json::json;

    fn message(part: Part) -> Message {
        let mut m = Message::user("m", "");
        m.parts = vec![part];
        m
    }

    #[test]
    fn text_and_data_parts() {
        let object = Schema::new(json!({"type": "object"})).unwrap();
        let string = Schema::new(json!({"type": "string"})).unwrap();
        let v = value(&message(Part::text(r#"{"a":1.10}"#)), &object, "input").unwrap();
        assert_eq!(v.to_string(), r#"{"a":1.10}"#, "exact number text");
        let v = value(&message(Part::text("plain words")), &string, "input").unwrap();
        assert_eq!(v, json!("plain words"));
        let v = value(&message(Part::data(json!({"b": true}))), &object, "input").unwrap();
        assert_eq!(v, json!({"b": true}));
        let e = value(&message(Part::text("not json")), &object, "input").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        let e = value(&message(Part::raw(vec![1u8])), &object, "input").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ContentTypeNotSupported);
        let mut two = message(Part::text("{}"));
        two.parts.push(Part::text("{}"));
        assert_eq!(
            value(&two, &object, "input").unwrap_err().kind(),
            ErrorKind::InvalidParams
        );
        let e = value(&message(Part::text("[1]")), &object, "input").unwrap_err();
        assert_eq!(e.violations()[0].0, "input");
    }

    #[test]
    fn numbers_in_data_parts_are_refused_over_grpc_only() {
        let numeric = message(Part::data(json!({"a": [true, {"b": 1.5}]})));
        let plain = message(Part::data(json!({"a": ["x", null, false]})));
        let json_call = CallContext::default();
        let mut grpc_call = CallContext::default();
        grpc_call.extensions.insert(GrpcCall);
        assert!(exact_numbers(&numeric, &json_call).is_ok());
        assert!(exact_numbers(&plain, &grpc_call).is_ok());
        assert!(exact_numbers(&message(Part::text("{\"n\": 1}")), &grpc_call).is_ok());
        let err = exact_numbers(&numeric, &grpc_call).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidParams);
        assert_eq!(err.violations()[0].0, "message.parts[0].data");
    }

    #[test]
    fn ids_are_stable_and_unambiguous() {
        assert_eq!(task_id("s", "a", "c", "m"), task_id("s", "a", "c", "m"));
        assert_ne!(task_id("s", "a", "c", "m"), task_id("s", "a", "c", "m2"));
        assert_ne!(task_id("s", "a", "cm", ""), task_id("s", "a", "c", "m"));
        assert_ne!(question_id("r", "p", "k"), question_id("r", "p/k", ""));
    }
}
