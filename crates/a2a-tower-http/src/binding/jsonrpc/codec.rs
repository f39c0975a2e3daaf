//! The JSON-RPC 2.0 envelope: request decoding into an [`Operation`] and
//! result/error encoding straight to bytes.
//!
//! Decoding takes one pass in the usual case: the envelope is read key by key
//! and, when `method` comes before `params` (as every SDK sends it), the
//! params are decoded straight into their typed request. Anything unusual
//! (params first, `params: null`, escaped keys, any error) falls back to a
//! second, authoritative pass over a `serde_json::Value` that classifies the
//! fault: −32700, −32600, −32601 or −32602.
//!
//! Not part of the public API: the module is reachable (hidden from the
//! docs) only so that `benches/codec.rs` can time the codec on its own. It
//! may change in any release.

use std::fmt;

use bytes::Bytes;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::binding::extension_method::ExtensionMethods;
use crate::protocol::DecodeParams;
use crate::{A2aError, ErrorKind, ExtensionRequest, Operation, OperationKind};

/// A JSON-RPC request id: a string, a number (its exact text is kept, so
/// `1.0` and integers beyond 64 bits are echoed byte for byte; only an
/// exponent is normalised by serde_json, `1e3` → `1e+3`) or null.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Id {
    /// `null`, or no `id` member.
    #[default]
    Null,
    /// A number, with its text as sent.
    Number(serde_json::Number),
    /// A string.
    String(String),
}

impl Id {
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Null => Some(Self::Null),
            Value::Number(n) => Some(Self::Number(n)),
            Value::String(s) => Some(Self::String(s)),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Number(n) => Value::Number(n.clone()),
            Self::String(s) => Value::String(s.clone()),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Number(n) => n.serialize(s),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

/// A request that could not be decoded: the error to answer with, and the id
/// to answer it under (`null` when the id itself could not be read).
#[derive(Debug)]
pub struct DecodeError {
    /// The id to echo.
    pub id: Id,
    /// The JSON-RPC error (ParseError, InvalidRequest, MethodNotFound or InvalidParams).
    pub error: A2aError,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for DecodeError {}

fn fail(id: Id, kind: ErrorKind) -> DecodeError {
    DecodeError {
        id,
        error: A2aError::new(kind),
    }
}

/// A params deserializer, decoded as the operation's request type.
struct Params<D>(D);

impl<'de, D: Deserializer<'de>> DecodeParams<'de> for Params<D> {
    type Error = D::Error;
    fn decode<T: Deserialize<'de>>(self) -> Result<T, D::Error> {
        params::<T, D>(self.0)
    }
}

/// Decodes a params object (only an object: positional arrays are refused).
fn params<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a params object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(V(std::marker::PhantomData))
}

struct ParamsSeed(OperationKind);

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Operation;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Operation, D::Error> {
        self.0.decode(Params(d))
    }
}

/// The one-pass envelope visitor; any error sends the caller to the slow path.
struct Fast;

impl<'de> Visitor<'de> for Fast {
    type Value = (Id, Operation);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let again = || de::Error::custom("repeated member");
        let (mut version, mut id, mut method, mut op) = (None, None, None, None);
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "jsonrpc" if version.is_none() => version = Some(map.next_value::<&'de str>()?),
                "id" if id.is_none() => {
                    let v = Id::from_value(map.next_value()?);
                    id = Some(v.ok_or_else(|| de::Error::custom("id"))?);
                }
                "method" if method.is_none() && op.is_none() => {
                    let m = OperationKind::from_method(map.next_value::<&'de str>()?);
                    method = Some(m.ok_or_else(|| de::Error::custom("method"))?);
                }
                "params" if op.is_none() => {
                    let m = method.ok_or_else(|| de::Error::custom("params first"))?;
                    op = Some(map.next_value_seed(ParamsSeed(m))?);
                }
                "jsonrpc" | "id" | "method" | "params" => return Err(again()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let method = method.filter(|_| version == Some("2.0"));
        let method = method.ok_or_else(|| de::Error::custom("envelope"))?;
        let op = match op {
            Some(op) => op,
            None => method
                .decode(Params(Value::Object(Map::new())))
                .map_err(de::Error::custom)?,
        };
        Ok((id.unwrap_or_default(), op))
    }
}

fn decode_fast(body: &[u8]) -> Option<(Id, Operation)> {
    // JSON text is UTF-8 (RFC 8259 §8.1), but serde_json skips an ignored
    // member's string without checking it: a body that is not UTF-8 takes
    // the slow path, which refuses it (−32700).
    let text = std::str::from_utf8(body).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let decoded = (&mut de).deserialize_map(Fast).ok()?;
    de.end().ok()?;
    Some(decoded)
}

/// A method of the core, or a registered extension method.
enum Target {
    Core(OperationKind),
    Extension(&'static str),
}

/// The authoritative pass: classifies every fault. Extension methods are
/// decoded here only (the fast path knows the core's methods).
fn decode_slow(body: &[u8], extensions: &ExtensionMethods) -> Result<(Id, Operation), DecodeError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| fail(Id::Null, ErrorKind::ParseError))?;
    // A batch (array) or any non-object is not a request object.
    let Value::Object(mut obj) = value else {
        return Err(fail(Id::Null, ErrorKind::InvalidRequest));
    };
    let id = match obj.remove("id") {
        None => Id::Null,
        Some(v) => Id::from_value(v).ok_or_else(|| fail(Id::Null, ErrorKind::InvalidRequest))?,
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(fail(id, ErrorKind::InvalidRequest));
    }
    let Some(name) = obj.get("method").and_then(Value::as_str) else {
        return Err(fail(id, ErrorKind::InvalidRequest));
    };
    let target = match (OperationKind::from_method(name), extensions.method(name)) {
        (Some(core), _) => Target::Core(core),
        (None, Some(name)) => Target::Extension(name),
        (None, None) => return Err(fail(id, ErrorKind::MethodNotFound)),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(fail(id, ErrorKind::InvalidParams)),
    };
    let op = match target {
        // Decoded from text again, not from the `Value`: a `Value` passes
        // some numbers of data parts and metadata through f64 on the way
        // (`0.0000001` became `1e-7`; found by tests/fuzz).
        Target::Core(method) => {
            let text = Value::Object(params).to_string();
            method.decode(Params(&mut serde_json::Deserializer::from_str(&text)))
        }
        Target::Extension(name) => Ok(Operation::Extension(ExtensionRequest::new(name, params))),
    };
    match op {
        Ok(op) => Ok((id, op)),
        Err(_) => Err(fail(id, ErrorKind::InvalidParams)),
    }
}

/// Decodes a JSON-RPC request body into its id and operation, and checks the
/// parameters the spec requires (a2a-spec.md §3.7, §3.8, §4.4).
///
/// Missing or `null` `params` mean `{}`; a missing `id` is answered as `null`.
///
/// ```
/// use a2a_tower::Operation;
/// use a2a_tower::jsonrpc::codec::{Id, decode_request};
/// let (id, op) = decode_request(br#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-1"}}"#).unwrap();
/// assert_eq!(serde_json::to_string(&id).unwrap(), "7");
/// assert!(matches!(op, Operation::GetTask(r) if r.id == "t-1"));
/// let err = decode_request(b"{").unwrap_err();
/// assert_eq!((err.id, err.error.kind().jsonrpc_code()), (Id::Null, -32700));
/// ```
pub fn decode_request(body: &[u8]) -> Result<(Id, Operation), DecodeError> {
    decode_with(body, &ExtensionMethods::default())
}

/// [`decode_request`] with these extension methods known too: a registered
/// name decodes into [`Operation::Extension`] with its params object.
pub(crate) fn decode_with(
    body: &[u8],
    extensions: &ExtensionMethods,
) -> Result<(Id, Operation), DecodeError> {
    let (id, op) = match decode_fast(body) {
        Some(decoded) => decoded,
        None => decode_slow(body, extensions)?,
    };
    match crate::protocol::check::operation(&op) {
        Ok(()) => Ok((id, op)),
        Err(error) => Err(DecodeError { id, error }),
    }
}

/// `{"jsonrpc":"2.0","id":…` + `member` + `value` + `}`, in a buffer that
/// holds the frame and `len` bytes of value.
fn envelope(
    id: &Id,
    member: &[u8],
    value: &impl Serialize,
    len: usize,
) -> Result<Bytes, serde_json::Error> {
    // The frame with an id of up to 40 bytes; 256 when the value's length
    // is unknown.
    let mut buf = Vec::with_capacity(if len == 0 { 256 } else { len + 64 });
    buf.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    crate::json::to_writer(&mut buf, id)?;
    buf.extend_from_slice(member);
    crate::json::to_writer(&mut buf, value)?;
    buf.push(b'}');
    Ok(Bytes::from(buf))
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}` straight to bytes.
///
/// ```
/// use a2a_tower::jsonrpc::codec::{Id, encode_result};
/// let bytes = encode_result(&Id::String("r1".into()), &serde_json::json!({})).unwrap();
/// assert_eq!(&bytes[..], br#"{"jsonrpc":"2.0","id":"r1","result":{}}"#);
/// ```
pub fn encode_result<T: Serialize + ?Sized>(id: &Id, result: &T) -> Result<Bytes, A2aError> {
    encode_result_sized(id, result, 0)
}

/// [`encode_result`] for a result whose JSON is known to take about `len`
/// bytes (0: unknown).
pub(crate) fn encode_result_sized<T: Serialize + ?Sized>(
    id: &Id,
    result: &T,
    len: usize,
) -> Result<Bytes, A2aError> {
    envelope(id, br#","result":"#, &result, len).map_err(A2aError::internal)
}

/// Encodes `{"jsonrpc":"2.0","id":…,"error":{code,message,data}}`; the error
/// object comes from [`A2aError::to_jsonrpc_error`].
pub(crate) fn encode_error(id: &Id, error: &A2aError) -> Bytes {
    envelope(id, br#","error":"#, &error.to_jsonrpc_error(), 0).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> (String, i64) {
        let e = decode_request(body.as_bytes()).unwrap_err();
        (
            serde_json::to_string(&e.id).unwrap(),
            e.error.kind().jsonrpc_code(),
        )
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        let a = r#"{"jsonrpc":"2.0","id":"x","method":"GetTask","params":{"id":"t","historyLength":2}}"#;
        let b = r#"{"params":{"id":"t","historyLength":2},"method":"GetTask","id":"x","jsonrpc":"2.0"}"#;
        assert!(decode_fast(a.as_bytes()).is_some());
        assert!(decode_fast(b.as_bytes()).is_none());
        assert_eq!(
            decode_request(a.as_bytes()).unwrap().1,
            decode_request(b.as_bytes()).unwrap().1
        );
        assert_eq!(
            decode_request(a.as_bytes()).unwrap().1,
            decode_slow(a.as_bytes(), &ExtensionMethods::default())
                .unwrap()
                .1
        );
    }

    #[test]
    fn both_paths_keep_numbers_exact() {
        for n in ["0.0000001", "-0.000001", "1.10", "12345678901234567890.5"] {
            let message = format!(
                r#"{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":[{n}]}}],"metadata":{{"n":{n}}}}}"#
            );
            let fast = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{message}}}}}"#
            );
            let slow = format!(
                r#"{{"params":{{"message":{message}}},"jsonrpc":"2.0","id":1,"method":"SendMessage"}}"#
            );
            for body in [fast, slow] {
                let (_, op) = decode_request(body.as_bytes()).unwrap();
                let Operation::SendMessage(r) = op else {
                    panic!("{op:?}")
                };
                let data = serde_json::to_string(&r.message.parts[0]).unwrap();
                assert_eq!(data, format!(r#"{{"data":[{n}]}}"#), "{body}");
                let meta = serde_json::to_string(&r.message.metadata).unwrap();
                assert_eq!(meta, format!(r#"{{"n":{n}}}"#), "{body}");
            }
        }
    }

    #[test]
    fn envelope_faults() {
        // §6.1 and JSON-RPC 2.0 §5.1.
        assert_eq!(code("{"), ("null".into(), -32700));
        assert_eq!(code("[]"), ("null".into(), -32600));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]"#),
            ("null".into(), -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#),
            ("null".into(), -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#),
            ("1".into(), -32600)
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), ("1".into(), -32600));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#),
            ("1".into(), -32601)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[]}"#),
            ("1".into(), -32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}"#),
            ("1".into(), -32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":""}}"#),
            ("1".into(), -32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":5}"#),
            ("1".into(), -32602)
        );
        // Not UTF-8, even in a member nobody reads: not JSON (found by tests/fuzz).
        let body = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"t\"},\"x\":\"\xff\"}";
        let e = decode_request(body).unwrap_err();
        assert_eq!((e.id, e.error.kind()), (Id::Null, ErrorKind::ParseError));
    }

    #[test]
    fn missing_or_null_params_mean_empty_object() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":null}"#,
        ] {
            let (_, op) = decode_request(body.as_bytes()).unwrap();
            assert_eq!(op.method(), "GetExtendedAgentCard");
        }
    }

    #[test]
    fn ids_echo_exactly() {
        for id in [
            "1.0",
            "123456789012345678901234567890",
            "-0",
            "0.10",
            "\"a\\u0041\"",
            "null",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetExtendedAgentCard"}}"#);
            let (got, _) = decode_request(body.as_bytes()).unwrap();
            let out = encode_result(&got, &serde_json::json!({})).unwrap();
            // Strings are re-encoded (same value); numbers keep their text.
            let want = if id.starts_with('"') { "\"aA\"" } else { id };
            assert_eq!(
                std::str::from_utf8(&out).unwrap(),
                format!(r#"{{"jsonrpc":"2.0","id":{want},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn error_bytes_match_the_shared_builder() {
        let err = A2aError::task_not_found("t");
        let id = Id::String("r".into());
        let mine = encode_error(&id, &err);
        let value =
            serde_json::json!({"jsonrpc": "2.0", "id": "r", "error": err.to_jsonrpc_error()});
        assert_eq!(&mine[..], serde_json::to_vec(&value).unwrap());
    }

    #[test]
    fn extension_methods() {
        let mut ext = ExtensionMethods::default();
        ext.add(crate::ExtensionMethod::new("GetContextQueue"))
            .unwrap();
        let decode = |body: &str| decode_with(body.as_bytes(), &ext);
        let (id, op) = decode(
            r#"{"jsonrpc":"2.0","id":2,"method":"GetContextQueue","params":{"contextId":"c","tenant":"t"}}"#,
        )
        .unwrap();
        assert_eq!(id, Id::Number(2.into()));
        let Operation::Extension(r) = &op else {
            panic!("{op:?}")
        };
        assert_eq!(r.method, "GetContextQueue");
        assert_eq!(
            Value::Object(r.params.clone()),
            serde_json::json!({"contextId":"c","tenant":"t"})
        );
        assert_eq!(op.tenant(), "t");
        // Absent or null params are {}; anything else is −32602.
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"GetContextQueue"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"GetContextQueue","params":null}"#,
        ] {
            let (_, op) = decode(body).unwrap();
            assert_eq!(
                op,
                Operation::Extension(ExtensionRequest::new("GetContextQueue", Map::new()))
            );
        }
        for params in ["[]", "[1]", "5", "\"x\"", "true"] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"GetContextQueue","params":{params}}}"#
            );
            let e = decode(&body).unwrap_err();
            assert_eq!(
                (e.id, e.error.kind()),
                (Id::Number(1.into()), ErrorKind::InvalidParams),
                "{params}"
            );
        }
        // Unregistered names stay unknown; names match exactly.
        for method in ["ReorderContextQueue", "getContextQueue"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#);
            assert_eq!(
                decode(&body).unwrap_err().error.kind(),
                ErrorKind::MethodNotFound
            );
        }
        // Without the registration, the same name is unknown.
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetContextQueue"}"#),
            ("1".into(), -32601)
        );
    }

    #[test]
    fn every_method_of_the_table_decodes_into_its_operation() {
        for &kind in OperationKind::ALL {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#,
                kind.jsonrpc_method()
            );
            let (_, op) = decode_slow(body.as_bytes(), &ExtensionMethods::default()).unwrap();
            assert_eq!(op.kind(), Some(kind));
            assert_eq!(decode_fast(body.as_bytes()).unwrap().1, op);
        }
    }
}
