//! External waits: a remote task blocked on one named wait publishes, on its
//! INPUT_REQUIRED status message, the wait's address under `scope.wait` and
//! the JSON Schema its answer must satisfy under `scope.answer_schema` (what
//! this crate's managed tasks publish). An answer names the wait in the same
//! `scope.wait` metadata.
//!
//! ```
//! use a2a_tower::tool::{WAIT_KEY, WaitAddress};
//! use serde_json::json;
//! let w = WaitAddress::parse(&json!({"process": "root", "key": "approve"})).unwrap();
//! assert!(w.valid());
//! assert_eq!(w.metadata()[WAIT_KEY], json!({"process": "root", "key": "approve"}));
//! assert!(WaitAddress::parse(&json!({"process": "root"})).is_none());
//! assert!(WaitAddress::parse(&json!("root/approve")).is_none());
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::contract::{ToolError, ToolErrorKind};
use crate::external_wait::{ANSWER_SCHEMA_KEY, WAIT_KEY};
use crate::schema::Schema;
use crate::types::{Message, Metadata};

/// One external wait: the process that opened it and its key there. Kept
/// structured, so a child's key is never mistaken for a globally unique one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WaitAddress {
    /// The process that opened the wait.
    pub process: String,
    /// The wait's key within that process.
    pub key: String,
}

impl WaitAddress {
    /// The wait `key` of `process`.
    pub fn new(process: impl Into<String>, key: impl Into<String>) -> Self {
        Self {
            process: process.into(),
            key: key.into(),
        }
    }

    /// The address a `scope.wait` metadata value names: an object with a
    /// non-empty string `process` and `key`; `None` for anything else.
    pub fn parse(value: &Value) -> Option<Self> {
        let field = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
        let address = Self::new(field("process")?, field("key")?);
        address.valid().then_some(address)
    }

    /// The message metadata with which an answer names this wait.
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new();
        m.insert(
            WAIT_KEY.into(),
            json!({"process": self.process, "key": self.key}),
        );
        m
    }

    /// Both the process and the key are non-empty.
    pub fn valid(&self) -> bool {
        !self.process.is_empty() && !self.key.is_empty()
    }
}

/// An external wait as an INPUT_REQUIRED status message announces it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExternalWait {
    pub(crate) address: WaitAddress,
    /// The answer schema's exact JSON text.
    pub(crate) schema_text: String,
    /// The answer schema.
    pub(crate) schema: Value,
}

/// The external wait `status_message` announces: `None` when its metadata
/// has neither key; a Protocol error when it has one without the other, an
/// address that names no single wait, or a schema that does not compile.
///
/// The schema is the metadata value itself, or, when that value is a string,
/// the JSON text it holds (the form SDKs that convert metadata numbers use).
pub(crate) fn announced(
    status_message: Option<&Message>,
) -> Result<Option<ExternalWait>, ToolError> {
    let meta = status_message.and_then(|m| m.metadata.as_ref());
    let wait = meta.and_then(|m| m.get(WAIT_KEY));
    let schema = meta.and_then(|m| m.get(ANSWER_SCHEMA_KEY));
    let malformed = |what: &str| {
        ToolError::new(
            ToolErrorKind::Protocol,
            format!("the remote task announces a malformed external wait: {what}"),
        )
    };
    let (wait, schema) = match (wait, schema) {
        (None, None) => return Ok(None),
        (Some(w), Some(s)) => (w, s),
        (Some(_), None) => return Err(malformed("`scope.wait` without `scope.answer_schema`")),
        (None, Some(_)) => return Err(malformed("`scope.answer_schema` without `scope.wait`")),
    };
    let address = WaitAddress::parse(wait)
        .ok_or_else(|| malformed("`scope.wait` must be {\"process\": string, \"key\": string}"))?;
    let (schema_text, schema) = match schema {
        Value::String(text) => {
            let value = serde_json::from_str(text)
                .map_err(|_| malformed("`scope.answer_schema` is not JSON text"))?;
            (text.clone(), value)
        }
        value => (value.to_string(), value.clone()),
    };
    Schema::new(schema.clone())
        .map_err(|_| malformed("`scope.answer_schema` is not a usable JSON Schema"))?;
    Ok(Some(ExternalWait {
        address,
        schema_text,
        schema,
    }))
}

/// Task metadata of the external-wait extension: the open questions, each
/// `{"owner", "key", "question", "schema", ...}`, in address order.
const PENDING_KEY: &str = "scope.pending";

/// The first open question a task's metadata lists under `scope.pending`,
/// with its question as text (a string as it is, `null` as nothing, other
/// JSON as its text): how a tool asks one question at a time when several
/// are open at once, so that the status message names none. `None` when the
/// list is absent or its first entry has no valid address or schema.
pub(crate) fn first_pending(task_metadata: Option<&Metadata>) -> Option<(ExternalWait, String)> {
    let first = task_metadata?.get(PENDING_KEY)?.as_array()?.first()?;
    let field = |k: &str| first.get(k).and_then(Value::as_str).map(str::to_owned);
    let address = WaitAddress::new(field("owner")?, field("key")?);
    let schema = first.get("schema").cloned().unwrap_or(Value::Bool(true));
    if !address.valid() || Schema::new(schema.clone()).is_err() {
        return None;
    }
    let question = match first.get("question") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let wait = ExternalWait {
        address,
        schema_text: schema.to_string(),
        schema,
    };
    Some((wait, question))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pending_question_is_asked_with_its_address() {
        let meta: Metadata = serde_json::from_value(json!({"scope.pending": [
            {"owner": "r", "key": "approve", "question": {"text": "ok?"}, "schema": {"type": "boolean"}},
            {"owner": "r/c", "key": "score", "question": null, "schema": true}
        ]}))
        .unwrap();
        let (wait, question) = first_pending(Some(&meta)).unwrap();
        assert_eq!(wait.address, WaitAddress::new("r", "approve"));
        assert_eq!(wait.schema, json!({"type": "boolean"}));
        assert_eq!(question, r#"{"text":"ok?"}"#);
        let none: Metadata = serde_json::from_value(json!({"scope.pending": []})).unwrap();
        assert!(first_pending(Some(&none)).is_none());
        assert!(first_pending(None).is_none());
    }

    fn message(meta: Value) -> Message {
        let mut m = Message::agent("m", "how much?");
        m.metadata = serde_json::from_value(meta).unwrap();
        m
    }

    #[test]
    fn addresses_need_both_non_empty_fields() {
        assert!(WaitAddress::parse(&json!({"process": "p", "key": "k"})).is_some());
        for bad in [
            json!({"process": "", "key": "k"}),
            json!({"process": "p", "key": ""}),
            json!({"process": "p", "key": 1}),
            json!({"key": "k"}),
            json!(["p", "k"]),
            json!(null),
        ] {
            assert_eq!(WaitAddress::parse(&bad), None, "{bad}");
        }
        assert!(!WaitAddress::new("", "k").valid());
    }

    #[test]
    fn an_announced_wait_keeps_its_schema_text_exactly() {
        let text = r#"{"scope.wait": {"process": "r", "key": "amount"},
                       "scope.answer_schema": {"type": "number", "maximum": 12345678901234567890.25}}"#;
        let m = message(serde_json::from_str(text).unwrap());
        let w = announced(Some(&m)).unwrap().unwrap();
        assert_eq!(w.address, WaitAddress::new("r", "amount"));
        assert_eq!(
            w.schema_text,
            r#"{"type":"number","maximum":12345678901234567890.25}"#
        );
        // The string form carries the text as it was written.
        let m = message(json!({
            "scope.wait": {"process": "r", "key": "k"},
            "scope.answer_schema": "{\"type\": \"integer\"}"
        }));
        let w = announced(Some(&m)).unwrap().unwrap();
        assert_eq!(w.schema_text, "{\"type\": \"integer\"}");
        assert_eq!(w.schema, json!({"type": "integer"}));
    }

    #[test]
    fn ordinary_and_malformed_announcements() {
        assert_eq!(announced(None).unwrap(), None);
        assert_eq!(announced(Some(&message(json!({"x": 1})))).unwrap(), None);
        for bad in [
            json!({"scope.wait": {"process": "r", "key": "k"}}),
            json!({"scope.answer_schema": true}),
            json!({"scope.wait": "r/k", "scope.answer_schema": true}),
            json!({"scope.wait": {"process": "r", "key": "k"}, "scope.answer_schema": "{"}),
            json!({"scope.wait": {"process": "r", "key": "k"}, "scope.answer_schema": {"$ref": "https://example.com/s"}}),
        ] {
            let e = announced(Some(&message(bad.clone()))).unwrap_err();
            assert_eq!(e.kind(), ToolErrorKind::Protocol, "{bad}");
        }
    }
}
