//! The fuzzing harness: the case budget (from the environment), the runner
//! that draws cases batch by batch from one seed, the allocation bound, and
//! the generators every target shares (JSON values, JSON-aware edits, byte
//! edits, deep nesting).

use std::alloc::System;
use std::cell::Cell;
use std::fmt::Debug;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseResult, TestRng, TestRunner};
use serde_json::{Map, Value};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// Counts every allocation, of every thread.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The counter counts every thread: one target at a time in this process.
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// The largest `allocated / (input + constant)` of the current target.
    static WORST: Cell<(f64, usize, u64)> = const { Cell::new((0.0, 0, 0)) };
}

/// Runs `f`; returns its result and the bytes it allocated (every thread,
/// growth by reallocation included): an upper bound of its peak allocation.
fn measured<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let region = Region::new(GLOBAL);
    let out = f();
    let s = region.change();
    let allocated = (s.bytes_allocated + usize::try_from(s.bytes_reallocated).unwrap_or(0)) as u64;
    (out, allocated)
}

/// Runs `f` once, and again if the first run allocated over the bound (a
/// path's first use initializes what later calls share, e.g. the runtime's
/// timers); [`bounded`] on the last run.
pub(crate) fn bounded_warm<R>(len: usize, per_byte: u64, constant: u64, f: impl Fn() -> R) -> R {
    let (out, allocated) = measured(&f);
    if allocated <= per_byte * len as u64 + constant {
        record(len, constant, allocated);
        return out;
    }
    bounded(len, per_byte, constant, f)
}

/// Runs `f` and asserts that it allocated at most `per_byte` bytes per byte
/// of an input of `len` bytes plus `constant`.
pub(crate) fn bounded<R>(len: usize, per_byte: u64, constant: u64, f: impl FnOnce() -> R) -> R {
    let (out, allocated) = measured(f);
    let limit = per_byte * len as u64 + constant;
    assert!(
        allocated <= limit,
        "allocated {allocated} bytes for an input of {len} bytes (limit {limit})"
    );
    record(len, constant, allocated);
    out
}

fn record(len: usize, constant: u64, allocated: u64) {
    WORST.with(|w| {
        let ratio = allocated as f64 / (len as u64 + constant) as f64;
        if ratio > w.get().0 {
            w.set((ratio, len, allocated));
        }
    });
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

/// Runs `test` over cases drawn from `strategy`: `default_cases` cases, or
/// `A2A_FUZZ_CASES`, or batches until `A2A_FUZZ_SECS` have passed. A
/// failure panics with the seed, the batch and the shrunk input.
pub(crate) fn fuzz<S>(
    name: &str,
    default_cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> TestCaseResult,
) where
    S: Strategy,
    S::Value: Debug,
{
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    WORST.with(|w| w.set((0.0, 0, 0)));
    let secs: Option<u64> = env("A2A_FUZZ_SECS");
    let seed: u64 = env("A2A_FUZZ_SEED").unwrap_or_else(|| match secs {
        Some(_) => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        None => 0xa2a_f022,
    });
    let budget = secs.map(Duration::from_secs);
    let batch_cases = match budget {
        Some(_) => 2048,
        None => env("A2A_FUZZ_CASES").unwrap_or(default_cases),
    };
    let started = Instant::now();
    let (mut cases, mut batch) = (0u64, 0u64);
    loop {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..16].copy_from_slice(&batch.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let config = Config {
            cases: batch_cases,
            failure_persistence: None,
            max_shrink_iters: 2048,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, rng);
        let ran = Cell::new(0u64);
        let counted = |v| {
            ran.set(ran.get() + 1);
            test(v)
        };
        if let Err(e) = runner.run(&strategy, counted) {
            panic!("fuzz {name}: seed {seed} batch {batch}: {e}");
        }
        cases += ran.get();
        batch += 1;
        match budget {
            Some(b) if started.elapsed() < b => {}
            _ => break,
        }
    }
    let (ratio, len, allocated) = WORST.with(Cell::get);
    eprintln!(
        "fuzz {name}: {cases} cases in {:.1} s, seed {seed}; worst allocation {allocated} B \
         for {len} B of input ({ratio:.2} of the bound's base)",
        started.elapsed().as_secs_f64()
    );
}

/// Member names of the A2A wire types and the JSON-RPC envelope.
pub(crate) const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "tenant",
    "message",
    "messageId",
    "contextId",
    "taskId",
    "role",
    "parts",
    "text",
    "data",
    "url",
    "raw",
    "mediaType",
    "filename",
    "metadata",
    "extensions",
    "referenceTaskIds",
    "configuration",
    "acceptedOutputModes",
    "taskPushNotificationConfig",
    "historyLength",
    "returnImmediately",
    "status",
    "state",
    "pageSize",
    "pageToken",
    "statusTimestampAfter",
    "includeArtifacts",
    "token",
    "authentication",
    "scheme",
    "credentials",
    "name",
    "description",
    "version",
    "supportedInterfaces",
    "protocolBinding",
    "protocolVersion",
    "capabilities",
    "streaming",
    "pushNotifications",
    "extendedAgentCard",
    "skills",
    "tags",
    "examples",
    "inputModes",
    "outputModes",
    "defaultInputModes",
    "defaultOutputModes",
    "provider",
    "organization",
    "securitySchemes",
    "securityRequirements",
    "signatures",
    "iconUrl",
    "documentationUrl",
    "uri",
    "required",
    "order",
    "amount",
    "approved",
    "note",
    "scope.wait",
    "process",
    "key",
    "",
];

/// Interesting strings: method names, enum names, edge-case text.
pub(crate) const STRINGS: &[&str] = &[
    "2.0",
    "1.0",
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
    "GetContextQueue",
    "ROLE_USER",
    "ROLE_AGENT",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "JSONRPC",
    "HTTP+JSON",
    "GRPC",
    "http://localhost:8080/rpc",
    "https://a.example/x",
    "2026-01-01T00:00:00Z",
    "2026-13-40T99:99:99+99:99",
    "",
    " ",
    "\u{0}",
    "\u{feff}",
    "é",
    "\u{10ffff}",
    "t-1",
    "c-1",
    "m-1",
    "text/plain",
    "application/json",
    "AAAA",
    "!!",
    "%2F",
];

/// JSON number texts, exact and extreme (arbitrary precision keeps them).
pub(crate) fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<i32>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| f.to_string()),
        "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,30})?([eE][+-]?[0-9]{1,9})?",
        select(
            &[
                "0", "-0", "1e400", "-1e400", "1E-400", "100", "101", "0.0", "4.5", "1e2"
            ][..]
        )
        .prop_map(str::to_owned),
    ]
    .prop_map(|text| serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(STRINGS).prop_map(str::to_owned),
        3 => any::<String>(),
        2 => "[ -~]{0,12}",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![4 => select(KEYS).prop_map(str::to_owned), 1 => string()]
}

/// Any JSON value, shallow and small, with the crate's member names.
pub(crate) fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// One JSON-aware edit, applied to the node a selector picks.
#[derive(Debug, Clone)]
pub(crate) enum Edit {
    Replace(Value),
    Remove,
    Insert(String, Value),
    Wrap,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => json().prop_map(Edit::Replace),
        2 => Just(Edit::Remove),
        2 => (key(), json()).prop_map(|(k, v)| Edit::Insert(k, v)),
        1 => Just(Edit::Wrap),
    ]
}

fn apply(v: &mut Value, at: &mut usize, e: &Edit) -> bool {
    if *at == 0 {
        match (e, &mut *v) {
            (Edit::Remove, Value::Object(m)) if !m.is_empty() => {
                let k = m.keys().next().cloned().unwrap_or_default();
                m.shift_remove(&k);
            }
            (Edit::Remove, Value::Array(a)) if !a.is_empty() => {
                a.pop();
            }
            (Edit::Insert(k, x), Value::Object(m)) => {
                m.insert(k.clone(), x.clone());
            }
            (Edit::Insert(_, x), Value::Array(a)) => a.push(x.clone()),
            (Edit::Insert(_, x) | Edit::Replace(x), _) => *v = x.clone(),
            (Edit::Wrap, _) => *v = Value::Array(vec![v.take()]),
            (Edit::Remove, _) => *v = Value::Null,
        }
        return true;
    }
    *at -= 1;
    match v {
        Value::Object(m) => m.values_mut().any(|c| apply(c, at, e)),
        Value::Array(a) => a.iter_mut().any(|c| apply(c, at, e)),
        _ => false,
    }
}

fn nodes(v: &Value) -> usize {
    1 + match v {
        Value::Object(m) => m.values().map(nodes).sum(),
        Value::Array(a) => a.iter().map(nodes).sum(),
        _ => 0,
    }
}

/// `seed` after one to four JSON-aware edits at random nodes.
pub(crate) fn mutated(seed: Value) -> impl Strategy<Value = Value> {
    prop::collection::vec((any::<usize>(), edit()), 1..5).prop_map(move |edits| {
        let mut v = seed.clone();
        for (sel, e) in &edits {
            let mut at = sel % nodes(&v);
            apply(&mut v, &mut at, e);
        }
        v
    })
}

/// One byte-level edit.
#[derive(Debug, Clone)]
pub(crate) enum ByteEdit {
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    Repeat(usize, usize, usize),
}

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b":",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"null",
    b"true",
    b"1e999999999",
    b"-",
    b"\xff",
    b"\xc3",
    b" ",
    b"\"id\":",
    b"\"params\":",
    b"\"method\":",
    b"\n",
    b"\r",
    b"%",
    b"%2F",
    b"/",
    b"?",
    b"&",
    b"=",
];

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| ByteEdit::Set(i, b)),
        (any::<usize>(), select(TOKENS)).prop_map(|(i, t)| ByteEdit::Insert(i, t.to_vec())),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| ByteEdit::Insert(i, b)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| ByteEdit::Delete(i, n)),
        any::<usize>().prop_map(ByteEdit::Truncate),
        (any::<usize>(), 1usize..16, 1usize..64).prop_map(|(i, n, k)| ByteEdit::Repeat(i, n, k)),
    ]
}

/// `seed` after one to four byte edits.
pub(crate) fn byte_mutated(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(byte_edit(), 1..5).prop_map(move |edits| {
        let mut b = seed.clone();
        for e in &edits {
            let at = |i: usize| if b.is_empty() { 0 } else { i % (b.len() + 1) };
            match e {
                ByteEdit::Set(i, x) if !b.is_empty() => {
                    let n = b.len();
                    b[i % n] = *x;
                }
                ByteEdit::Set(..) => {}
                ByteEdit::Insert(i, x) => {
                    let i = at(*i);
                    b.splice(i..i, x.iter().copied());
                }
                ByteEdit::Delete(i, n) => {
                    let i = at(*i);
                    let end = (i + n).min(b.len());
                    b.drain(i..end);
                }
                ByteEdit::Truncate(i) => {
                    let i = at(*i);
                    b.truncate(i);
                }
                ByteEdit::Repeat(i, n, k) => {
                    let i = at(*i);
                    let end = (i + n).min(b.len());
                    let piece = b[i..end].to_vec();
                    for _ in 0..*k {
                        b.splice(i..i, piece.iter().copied());
                    }
                }
            }
        }
        b
    })
}

/// The texts of `seeds` after JSON-aware edits (twice as often) or byte
/// edits.
pub(crate) fn edited(seeds: Vec<Value>) -> impl Strategy<Value = Vec<u8>> {
    let raw: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| serde_json::to_vec(s).unwrap())
        .collect();
    prop_oneof![
        2 => select(seeds).prop_flat_map(mutated).prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => select(raw).prop_flat_map(byte_mutated),
    ]
}

/// Deeply nested JSON, alone or in `prefix`: past and below serde_json's
/// recursion limit (128), closed or not.
pub(crate) fn deep(prefix: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (
        1usize..20_000,
        select(&["[", "{\"a\":", "[{\"data\":"][..]),
        any::<bool>(),
    )
        .prop_map(move |(n, open, close)| {
            let mut b = prefix.as_bytes().to_vec();
            b.extend(open.as_bytes().repeat(n));
            b.extend_from_slice(b"1");
            if close {
                let closing = match open {
                    "[" => "]",
                    "{\"a\":" => "}",
                    _ => "}]",
                };
                b.extend(closing.as_bytes().repeat(n));
            }
            b
        })
}

/// Arbitrary bytes, short.
pub(crate) fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..256)
}

/// Bytes that print as an escaped string in a failure's report.
#[derive(Clone)]
pub(crate) struct Text(pub(crate) Vec<u8>);

impl Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}
