//! Continuations: what an A2A tool's [`InputRequest`] carries so that an
//! answer continues the same remote task, and the rules that refuse it
//! otherwise, before any remote call.
//!
//! The continuation binds the remote task id and context id; the tool
//! binding (the card URL, the remote card's `supportedInterfaces` as
//! resolved, the tool name); the identity (the endpoint's continuation
//! identity, or a random nonce of the tool set that asked when there is
//! none); the reply's message id; and for an external wait its `scope.wait`
//! address and the exact text of its answer schema.
//!
//! - An ordinary question takes a non-empty [`Answer::Text`].
//! - An external wait takes JSON ([`Answer::Json`], or text that parses as
//!   JSON) valid against that exact schema, numbers compared exactly; it is
//!   sent as one text part holding the JSON text (the string itself when the
//!   schema takes only strings), with the `scope.wait` metadata.
//! - The reply reuses the message id chosen when the question was asked, so
//!   sending a saved answer again is not a second answer.
//!
//! ```
//! use a2a_tower::tool::{Endpoint, ToolErrorKind};
//! // A durable host names its principal and execution revision; a tool set
//! // opened later with the same identity and binding resumes saved requests.
//! let endpoint = Endpoint::new("https://agent.example/.well-known/agent-card.json")
//!     .continuation_identity("host-7/revision-42");
//! # let _ = endpoint;
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::contract::{Answer, InputRequest, ToolError, ToolErrorKind};
use super::wait::{ExternalWait, WaitAddress};
use crate::schema::Schema;
use crate::types::{Message, Part};

/// Where a tool's continuations belong: a host identity, or one tool set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Identity {
    /// The endpoint's continuation identity (durable).
    Host(String),
    /// A random nonce of the tool set instance (valid while it lives).
    Instance(String),
}

/// The tool a continuation belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Binding {
    /// The card URL, as the endpoint gives it.
    pub(crate) card_url: String,
    /// The remote card's `supportedInterfaces`, as resolved.
    pub(crate) interfaces: Value,
    /// The tool's name.
    pub(crate) tool: String,
}

/// The continuation JSON of an A2A tool's input request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Continuation {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) binding: Binding,
    pub(crate) identity: Identity,
    pub(crate) reply_message_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) wait: Option<WaitAddress>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) answer_schema: Option<String>,
}

/// A tool's binding and identity: makes its input requests and checks the
/// ones it is asked to resume.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bound {
    pub(crate) binding: Binding,
    pub(crate) identity: Identity,
}

fn refuse(why: &str) -> ToolError {
    ToolError::new(ToolErrorKind::Continuation, why.to_owned())
}

fn invalid_answer(why: impl Into<crate::BoxError>) -> ToolError {
    ToolError::new(ToolErrorKind::InvalidAnswer, why)
}

impl Bound {
    /// The input request for a remote task `task_id` of `context_id` asking
    /// `question`, with a fresh reply message id.
    pub(crate) fn request(
        &self,
        task_id: &str,
        context_id: &str,
        question: String,
        wait: Option<ExternalWait>,
    ) -> InputRequest {
        let (wait, answer_schema, schema) = match wait {
            Some(w) => (Some(w.address), Some(w.schema_text), Some(w.schema)),
            None => (None, None, None),
        };
        let continuation = Continuation {
            task_id: task_id.to_owned(),
            context_id: context_id.to_owned(),
            binding: self.binding.clone(),
            identity: self.identity.clone(),
            reply_message_id: uuid::Uuid::new_v4().to_string(),
            wait,
            answer_schema,
        };
        InputRequest {
            tool: self.binding.tool.clone(),
            question,
            answer_schema: schema,
            continuation: serde_json::to_value(&continuation)
                .expect("a continuation is plain JSON"),
        }
    }

    /// The continuation of `request`, if it is one of this tool's: same tool
    /// name, binding and identity (Continuation otherwise).
    pub(crate) fn check(&self, request: &InputRequest) -> Result<Continuation, ToolError> {
        let c: Continuation = serde_json::from_value(request.continuation.clone())
            .map_err(|_| refuse("the input request's continuation is not an A2A tool's"))?;
        if request.tool != self.binding.tool || c.binding.tool != self.binding.tool {
            return Err(refuse("the input request belongs to another tool"));
        }
        if c.identity != self.identity {
            return Err(refuse(match (&c.identity, &self.identity) {
                (Identity::Host(_), Identity::Host(_)) => {
                    "the input request was made under another continuation identity"
                }
                _ => "the input request belongs to another tool set instance",
            }));
        }
        if c.binding != self.binding {
            return Err(refuse(
                "the input request was bound to another card URL or other remote interfaces",
            ));
        }
        if c.task_id.is_empty() || c.reply_message_id.is_empty() {
            return Err(refuse("the input request names no remote task"));
        }
        if c.wait.is_some() != c.answer_schema.is_some() {
            return Err(refuse("the input request's external wait is incomplete"));
        }
        Ok(c)
    }
}

impl Continuation {
    /// The message that answers this continuation with `answer`, or
    /// InvalidAnswer when it does not fit the question.
    pub(crate) fn reply(&self, answer: Answer) -> Result<Message, ToolError> {
        let mut message = Message::user(self.reply_message_id.clone(), "");
        message.task_id.clone_from(&self.task_id);
        message.context_id.clone_from(&self.context_id);
        let (Some(wait), Some(schema_text)) = (&self.wait, &self.answer_schema) else {
            return match answer {
                Answer::Text(t) if !t.trim().is_empty() => {
                    message.parts = vec![Part::text(t)];
                    Ok(message)
                }
                Answer::Text(_) => Err(invalid_answer("the answer must be non-empty text")),
                Answer::Json(_) => Err(invalid_answer(
                    "this question takes a text answer, not JSON",
                )),
            };
        };
        let value = match answer {
            Answer::Json(v) => v,
            Answer::Text(t) => serde_json::from_str(&t)
                .map_err(|_| invalid_answer("the answer must be JSON valid against its schema"))?,
        };
        let schema: Value = serde_json::from_str(schema_text)
            .map_err(|_| refuse("the input request's answer schema is not JSON"))?;
        let schema = Schema::new(schema)
            .map_err(|_| refuse("the input request's answer schema is not usable"))?;
        schema.check(&value).map_err(invalid_answer)?;
        let part = match value {
            Value::String(s) if schema.is_string() => Part::text(s),
            v => Part::text(v.to_string()).with_media_type("application/json"),
        };
        message.parts = vec![part];
        message.metadata = Some(wait.metadata());
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external_wait::WAIT_KEY;
    use crate::types::PartContent;
    use serde_json::json;

    fn bound(identity: Identity) -> Bound {
        Bound {
            binding: Binding {
                card_url: "http://a.example/.well-known/agent-card.json".into(),
                interfaces: json!([{"url": "http://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
                tool: "agent".into(),
            },
            identity,
        }
    }

    fn wait(schema_text: &str) -> ExternalWait {
        ExternalWait {
            address: WaitAddress::new("root", "amount"),
            schema_text: schema_text.into(),
            schema: serde_json::from_str(schema_text).unwrap(),
        }
    }

    fn kind<T: std::fmt::Debug>(r: Result<T, ToolError>) -> ToolErrorKind {
        r.unwrap_err().kind()
    }

    #[test]
    fn the_continuation_binds_task_binding_identity_and_reply_id() {
        let b = bound(Identity::Host("h/1".into()));
        let r = b.request("t-1", "c-1", "Which?".into(), None);
        assert_eq!(r.tool, "agent");
        assert_eq!(r.answer_schema, None);
        let c = &r.continuation;
        assert_eq!(
            (c["taskId"].as_str(), c["contextId"].as_str()),
            (Some("t-1"), Some("c-1"))
        );
        assert_eq!(
            c["binding"]["cardUrl"],
            json!("http://a.example/.well-known/agent-card.json")
        );
        assert_eq!(c["binding"]["tool"], json!("agent"));
        assert_eq!(c["identity"], json!({"host": "h/1"}));
        assert!(c.get("wait").is_none());
        let again = b.request("t-1", "c-1", "Which?".into(), None);
        assert_ne!(
            c["replyMessageId"], again.continuation["replyMessageId"],
            "fresh"
        );
        // Saved as JSON and read back, it is still this tool's.
        let saved: InputRequest =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        let checked = b.check(&saved).unwrap();
        assert_eq!(
            checked.reply_message_id,
            c["replyMessageId"].as_str().unwrap()
        );
    }

    #[test]
    fn identity_binding_and_name_must_all_match() {
        let b = bound(Identity::Host("h/1".into()));
        let r = b.request("t", "c", "q".into(), None);
        // An equivalent tool (same identity and binding) resumes.
        assert!(bound(Identity::Host("h/1".into())).check(&r).is_ok());
        let other = bound(Identity::Host("h/2".into()));
        assert_eq!(kind(other.check(&r)), ToolErrorKind::Continuation);
        let instance = bound(Identity::Instance("n".into()));
        assert_eq!(kind(instance.check(&r)), ToolErrorKind::Continuation);
        let mut moved = bound(Identity::Host("h/1".into()));
        moved.binding.card_url = "http://b.example/card".into();
        assert_eq!(kind(moved.check(&r)), ToolErrorKind::Continuation);
        let mut ifaces = bound(Identity::Host("h/1".into()));
        ifaces.binding.interfaces = json!([]);
        assert_eq!(kind(ifaces.check(&r)), ToolErrorKind::Continuation);
        let mut renamed = bound(Identity::Host("h/1".into()));
        renamed.binding.tool = "other".into();
        assert_eq!(kind(renamed.check(&r)), ToolErrorKind::Continuation);
        // The request's own tool name and a tampered continuation.
        let mut r2 = r.clone();
        r2.tool = "other".into();
        assert_eq!(kind(b.check(&r2)), ToolErrorKind::Continuation);
        let mut r3 = r.clone();
        r3.continuation["extra"] = json!(1);
        assert_eq!(kind(b.check(&r3)), ToolErrorKind::Continuation);
        let mut r4 = r;
        r4.continuation = json!({"task": "x"});
        assert_eq!(kind(b.check(&r4)), ToolErrorKind::Continuation);
    }

    #[test]
    fn instance_continuations_belong_to_their_nonce() {
        let b = bound(Identity::Instance("n-1".into()));
        let r = b.request("t", "c", "q".into(), None);
        assert!(b.check(&r).is_ok());
        let later = bound(Identity::Instance("n-2".into()));
        let e = later.check(&r).unwrap_err();
        assert_eq!(e.kind(), ToolErrorKind::Continuation);
        assert!(e.to_string().contains("another tool set instance"), "{e}");
    }

    #[test]
    fn ordinary_answers_are_non_empty_text() {
        let b = bound(Identity::Instance("n".into()));
        let c = b.check(&b.request("t", "c", "q".into(), None)).unwrap();
        let m = c.reply(Answer::Text("EUR".into())).unwrap();
        assert_eq!((m.task_id.as_str(), m.context_id.as_str()), ("t", "c"));
        assert_eq!(m.message_id, c.reply_message_id);
        assert_eq!(m.text(), "EUR");
        assert_eq!(m.metadata, None);
        assert_eq!(
            kind(c.reply(Answer::Text("  ".into()))),
            ToolErrorKind::InvalidAnswer
        );
        assert_eq!(
            kind(c.reply(Answer::Json(json!("EUR")))),
            ToolErrorKind::InvalidAnswer
        );
    }

    #[test]
    fn external_answers_are_exact_json_valid_against_the_schema() {
        let b = bound(Identity::Instance("n".into()));
        let schema = r#"{"type":"number","minimum":0,"maximum":12345678901234567890.5}"#;
        let r = b.request("t", "c", "How much?".into(), Some(wait(schema)));
        assert_eq!(r.answer_schema, Some(serde_json::from_str(schema).unwrap()));
        assert_eq!(r.continuation["answerSchema"], json!(schema));
        assert_eq!(
            r.continuation["wait"],
            json!({"process": "root", "key": "amount"})
        );
        let c = b.check(&r).unwrap();
        let exact = "12345678901234567890.25";
        for answer in [
            Answer::Json(serde_json::from_str(exact).unwrap()),
            Answer::Text(exact.into()),
        ] {
            let m = c.reply(answer).unwrap();
            assert_eq!(m.message_id, c.reply_message_id);
            let [part] = m.parts.as_slice() else {
                panic!("one part")
            };
            assert_eq!(part.content, PartContent::Text(exact.into()));
            assert_eq!(part.media_type, "application/json");
            assert_eq!(
                m.metadata.as_ref().unwrap()[WAIT_KEY],
                json!({"process": "root", "key": "amount"})
            );
        }
        for bad in [
            Answer::Json(json!(-1)),
            Answer::Json(serde_json::from_str("12345678901234567890.6").unwrap()),
            Answer::Json(json!("12")),
            Answer::Text("twelve".into()),
        ] {
            assert_eq!(kind(c.reply(bad)), ToolErrorKind::InvalidAnswer);
        }
    }

    #[test]
    fn string_schemas_take_the_string_itself() {
        let b = bound(Identity::Instance("n".into()));
        let r = b.request("t", "c", "Why?".into(), Some(wait(r#"{"type":"string"}"#)));
        let c = b.check(&r).unwrap();
        let m = c.reply(Answer::Json(json!("because"))).unwrap();
        assert_eq!(m.parts[0].content, PartContent::Text("because".into()));
        let m = c.reply(Answer::Text("\"quoted\"".into())).unwrap();
        assert_eq!(m.parts[0].content, PartContent::Text("quoted".into()));
    }
}
