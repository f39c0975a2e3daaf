//! The A2A 0.3 wire as a codec over the 1.0 one: JSON values of 0.3 to
//! and from the 1.0 JSON values the bindings and the client speak, as the
//! official Python SDK's `a2a/compat/v0_3` maps them.
//!
//! - [`objects`]: the JSON-RPC objects (`kind`-tagged parts, messages,
//!   tasks and events, lowercase states and roles);
//! - [`proto`]: the HTTP+JSON objects (the 0.3 `a2a.proto` in ProtoJSON:
//!   `content`, `TASK_STATE_CANCELLED`, named push configs);
//! - [`rpc`]: the JSON-RPC methods, their parameters and results;
//! - [`rest`]: the HTTP+JSON routes under `/v1` and their bodies;
//! - [`card`]: the card's 0.3 fields beside the 1.0 ones, and a 0.3 card
//!   read as a 1.0 one.
//!
//! The server side (`a2a_tower::v03::V03Layer`) and the client
//! (`ClientBuilder::protocol_version`) are built on these functions. The
//! error codes of 0.3 are those of 1.0 (−32001 to −32007), so errors pass
//! as they are.
//!
//! ```
//! use a2a_tower::v03::codec::rpc;
//! use serde_json::json;
//!
//! let params = json!({"message": {"kind": "message", "messageId": "m-1", "role": "user",
//!     "parts": [{"kind": "text", "text": "hi"}]}});
//! assert_eq!(rpc::method_to_v10("message/send"), Some("SendMessage"));
//! let v10 = rpc::params_to_v10("message/send", &params);
//! assert_eq!(v10["message"]["role"], "ROLE_USER");
//! assert_eq!(v10["message"]["parts"][0], json!({"text": "hi"}));
//!
//! let task = json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}});
//! let v03 = rpc::result_from_v10("message/send", &task);
//! assert_eq!(v03["kind"], "task");
//! assert_eq!(v03["status"]["state"], "completed");
//! ```

pub mod card;
pub mod objects;
pub mod proto;
pub mod rest;
pub mod rpc;
