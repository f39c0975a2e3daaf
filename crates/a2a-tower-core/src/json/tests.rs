//! The writer against `serde_json`'s, byte for byte.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};

use super::to_vec;
use crate::types::{AgentCard, StreamResponse, Task};

fn same<T: Serialize + ?Sized>(value: &T) {
    let theirs = serde_json::to_vec(value).map_err(|e| e.to_string());
    let ours = to_vec(value).map_err(|e| e.to_string());
    assert_eq!(
        ours.as_ref().map(|b| String::from_utf8_lossy(b)),
        theirs.as_ref().map(|b| String::from_utf8_lossy(b))
    );
}

/// A task with every kind of part, a status message, artifacts and
/// metadata holding every kind of JSON number.
const TASK: &str = r#"{
  "id": "0193f6d2-7e1c-7a55-b0c1-2f4e5d6a7b8c",
  "contextId": "ctx \"quoted\" \\ back\nslash",
  "status": {
    "state": "TASK_STATE_INPUT_REQUIRED",
    "message": {"messageId": "m-2", "role": "ROLE_AGENT", "parts": [{"text": "which one?\t\u0001"}]},
    "timestamp": "2026-12-04T22:40:00.123Z"
  },
  "artifacts": [{
    "artifactId": "a-1", "name": "report", "description": "ünïcødé ✓ 𝄞",
    "parts": [
      {"text": "plain"},
      {"raw": "aGVsbG8=", "mediaType": "application/octet-stream", "filename": "h.bin"},
      {"url": "https://example.com/x?a=1&b=2", "mediaType": "text/html"},
      {"data": {"n": [0, -1, 1.5, 1e300, 12345678901234567890123, -0.0, 3.0e-7], "ok": true, "none": null}}
    ],
    "metadata": {"k": {"deep": [[], {}, ""]}},
    "extensions": ["https://example.com/ext/v1"]
  }],
  "history": [
    {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], "taskId": "t", "contextId": "c",
     "referenceTaskIds": ["r-1", "r-2"], "metadata": {"x": 1}}
  ],
  "metadata": {"float": 0.1, "int": -42, "huge": 1e400, "text": "\u007f\u0080"}
}"#;

#[test]
fn a_task_of_every_part_kind() {
    let task: Task = serde_json::from_str(TASK).unwrap();
    same(&task);
    same(&StreamResponse::Task(task));
}

#[test]
fn an_agent_card() {
    let card: AgentCard = serde_json::from_value(json!({
        "name": "Echo \"agent\"",
        "description": "echoes\n",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:8080/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "d", "tags": ["a", "b"]}]
    }))
    .unwrap();
    same(&card);
}

/// Every shape serde can hand a serializer.
#[derive(Serialize)]
enum Shapes {
    Unit,
    Newtype(u8),
    Tuple(i8, f32),
    Struct { a: char, b: Option<()> },
}

#[derive(Serialize)]
struct UnitStruct;

#[derive(Serialize)]
struct TupleStruct(u16, &'static str);

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
struct Newtype(i128);

struct Bytes(&'static [u8]);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

struct Displayed(&'static str);

impl Serialize for Displayed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("<{}>", self.0))
    }
}

#[test]
fn every_serde_shape() {
    same(&Shapes::Unit);
    same(&Shapes::Newtype(7));
    same(&Shapes::Tuple(-3, 2.5));
    same(&Shapes::Tuple(0, f32::NAN));
    same(&Shapes::Struct { a: '"', b: None });
    same(&vec![
        Shapes::Unit,
        Shapes::Struct {
            a: 'é',
            b: Some(()),
        },
    ]);
    same(&UnitStruct);
    same(&TupleStruct(65535, "x\u{0}"));
    same(&Newtype(i128::MIN));
    same(&u128::MAX);
    same(&(1u8, -1i64, f64::INFINITY, f64::MIN_POSITIVE, true, ()));
    same(&Bytes(b""));
    same(&Bytes(&[0, 1, 255]));
    same(&Displayed("a\"b\n"));
    same(&Vec::<u8>::new());
    same(&BTreeMap::<String, u8>::new());
    same(&Some(Some(3u8)));
}

#[test]
fn map_keys_as_serde_json_writes_or_refuses_them() {
    same(&BTreeMap::from([(1u64, "a"), (2, "b")]));
    same(&BTreeMap::from([(-1i8, ())]));
    same(&BTreeMap::from([(true, 1), (false, 0)]));
    same(&BTreeMap::from([('k', 1)]));
    same(&BTreeMap::from([(Some("s"), 1)]));
    same(&BTreeMap::from([(Newtype(5), 1)]));
    same(&BTreeMap::from([("\u{1b}key\"", 1)]));
    same(&[(1.5f64, 1)].into_iter().collect::<Vec<_>>());
    // Refused by both.
    let refused = |v: &dyn Fn(&mut Vec<u8>) -> Result<(), serde_json::Error>| {
        let mut out = Vec::new();
        assert!(v(&mut out).is_err());
    };
    refused(&|out| super::to_writer(out, &BTreeMap::from([((1, 2), 1)])));
    refused(&|out| super::to_writer(out, &BTreeMap::from([(vec![1], 1)])));
    assert!(serde_json::to_vec(&BTreeMap::from([((1, 2), 1)])).is_err());
    let nan_key = FloatKeyed(f64::NAN);
    assert!(to_vec(&nan_key).is_err() && serde_json::to_vec(&nan_key).is_err());
    same(&FloatKeyed(0.25));
}

/// A map with one float key.
struct FloatKeyed(f64);

impl Serialize for FloatKeyed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &1)?;
        map.end()
    }
}

#[test]
fn numbers_kept_as_text_and_raw_values() {
    let value: Value =
        serde_json::from_str(r#"[1e400, 0.10000000000000000000001, -0, 18446744073709551616]"#)
            .unwrap();
    same(&value);
    let raw = serde_json::value::RawValue::from_string(r#"{"a" : [1, 2]}"#.into()).unwrap();
    same(&raw);
    same(&json!({"raw": raw}));
}

/// Any JSON value: strings of any characters, numbers of every kind.
fn value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "-?[1-9][0-9]{0,40}(\\.[0-9]{1,30})?(e[+-]?[0-9]{1,3})?"
            .prop_map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        any::<String>().prop_map(Value::String),
        "[\\x00-\\x7f\"\\\\]{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(("[\\x00-\\x7f]{0,12}|\\PC{0,6}", inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_as_serde_json_writes_it(v in value()) {
        let ours = to_vec(&v).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn any_string_as_serde_json_writes_it(s in any::<String>(), ascii in "[\\x00-\\x7f]{0,64}") {
        prop_assert_eq!(to_vec(&s).unwrap(), serde_json::to_vec(&s).unwrap());
        prop_assert_eq!(to_vec(&ascii).unwrap(), serde_json::to_vec(&ascii).unwrap());
    }
}

#[test]
fn a_serializer_error_is_returned() {
    struct Fails;
    impl Serialize for Fails {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no"))
        }
    }
    assert_eq!(to_vec(&[Fails]).unwrap_err().to_string(), "no");
}
