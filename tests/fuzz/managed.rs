//! The managed layer's input and answer admission, with the refund
//! example's schemas (`support::managed::refund`): arbitrary JSON values,
//! as a data part or as JSON text, start a run exactly when the input
//! schema accepts them, and answer the fraud check's `score` wait exactly
//! when its schema accepts them (named by an arbitrary `scope.wait`
//! address or by the right one); a refusal is InvalidParams naming the
//! field, a file part is ContentTypeNotSupported, and the task's records
//! do not change.

use std::sync::Arc;

use a2a_tower::ErrorKind;
use a2a_tower::log::{MemoryTaskLog, TaskBackend};
use a2a_tower::managed::{ManagedService, Schema, WAIT_KEY};
use a2a_tower::types::{Part, TaskState};
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;
use serde_json::{Value, json};

use crate::harness::{bounded, fuzz, json, mutated, number};
use crate::support::managed::{
    Counter, REFUND, answer, authority, refund, refund_input, score_schema, send, service, start,
    until_pending,
};
use crate::support::tasks::records;

#[derive(Debug, Clone)]
enum Carrier {
    Data,
    Text,
    File,
}

#[derive(Debug, Clone)]
struct Case {
    input: Value,
    input_as: Carrier,
    score: Value,
    score_as: Carrier,
    /// An arbitrary `scope.wait` address instead of the right one.
    address: Option<Value>,
}

fn values(seed: Value, valid: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => json(),
        2 => number(),
        4 => mutated(seed),
        3 => valid,
    ]
}

fn carrier() -> impl Strategy<Value = Carrier> {
    prop_oneof![6 => Just(Carrier::Data), 6 => Just(Carrier::Text), 1 => Just(Carrier::File)]
}

fn cases() -> impl Strategy<Value = Case> {
    (
        values(
            refund_input("A-1", "10.50"),
            ("[ -~]{0,8}", number())
                .prop_map(|(order, amount)| json!({"order": order, "amount": amount})),
        ),
        carrier(),
        values(json!(42), (-5i64..105).prop_map(|n| json!(n))),
        carrier(),
        prop_oneof![
            8 => Just(None),
            1 => json().prop_map(Some),
            1 => mutated(json!({"process": "p", "key": "score"})).prop_map(Some),
        ],
    )
        .prop_map(|(input, input_as, score, score_as, address)| Case {
            input,
            input_as,
            score,
            score_as,
            address,
        })
}

fn part(v: &Value, carrier: &Carrier) -> Part {
    match carrier {
        Carrier::Data => Part::data(v.clone()),
        Carrier::Text => Part::text(v.to_string()),
        Carrier::File => Part::raw(v.to_string().into_bytes()),
    }
}

fn size(v: &Value) -> usize {
    v.to_string().len()
}

/// What the admission must answer for `v` carried as `carrier`, against
/// `schema`: `Ok` or the refusal's kind. A JSON null as a data part is
/// `Part::data(null)`, which the wire cannot tell from a part without
/// content; it is left to the check of the answer's kind.
fn expect(schema: &Schema, v: &Value, carrier: &Carrier) -> Result<(), ErrorKind> {
    match carrier {
        Carrier::File => Err(ErrorKind::ContentTypeNotSupported),
        _ => schema.check(v).map_err(|e| e.kind()),
    }
}

struct Host {
    rt: tokio::runtime::Runtime,
    log: Arc<dyn TaskBackend>,
    svc: ManagedService,
    input_schema: Schema,
    score_schema: Schema,
    starts: std::cell::Cell<u64>,
}

impl Host {
    fn new() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::builder().build().unwrap());
        let program = refund(Counter::default());
        let input_schema = program.input_schema().clone();
        let svc = rt.block_on(async { service(log.clone(), program) });
        Self {
            rt,
            log,
            svc,
            input_schema,
            score_schema: Schema::new(score_schema()).unwrap(),
            starts: Default::default(),
        }
    }

    fn check(&self, c: Case) -> TestCaseResult {
        let n = self.starts.get();
        self.starts.set(n + 1);
        let msg = start(&format!("m-{n}"), "ctx", part(&c.input, &c.input_as));
        let started = bounded(size(&c.input), 512, 4 << 20, || {
            self.rt.block_on(send(&self.svc, msg))
        });
        match (expect(&self.input_schema, &c.input, &c.input_as), started) {
            (Ok(()), Ok(task)) => prop_assert_eq!(task.status.state, TaskState::InputRequired),
            (Ok(()), Err(e)) if matches!(c.input_as, Carrier::Data) && c.input.is_null() => {
                prop_assert_eq!(e.kind(), ErrorKind::InvalidParams);
                return Ok(());
            }
            (Ok(()), Err(e)) => {
                prop_assert!(false, "input refused: {:?} {:?}", e.kind(), e.violations())
            }
            (Err(_), Ok(t)) => prop_assert!(false, "input admitted: {:?}", t.status),
            (Err(kind), Err(e)) => {
                // A text part that is not JSON is refused as such.
                prop_assert_eq!(e.kind(), kind);
                return Ok(());
            }
        }
        self.answer(c, &format!("m-{n}"))
    }

    fn answer(&self, c: Case, message_id: &str) -> TestCaseResult {
        let task = self.rt.block_on(async {
            let sent = send(
                &self.svc,
                start(message_id, "ctx", part(&c.input, &c.input_as)),
            )
            .await;
            let id = sent.expect("the same start again").id;
            until_pending(&*self.log, &authority(REFUND), &id, 2).await
        });
        let root = task.id.clone();
        let child = format!("{root}/fraud-check");
        let mut msg = answer(&task, "a-1", &child, "score", part(&c.score, &c.score_as));
        let named_right = c.address.is_none();
        if let Some(address) = &c.address {
            msg.metadata
                .get_or_insert_default()
                .insert(WAIT_KEY.into(), address.clone());
        }
        let auth = authority(REFUND);
        let before = self.rt.block_on(records(&*self.log, &auth, &root));
        let answered = bounded(size(&c.score), 512, 4 << 20, || {
            self.rt.block_on(send(&self.svc, msg))
        });
        let want = expect(&self.score_schema, &c.score, &c.score_as);
        match answered {
            Ok(t) => {
                prop_assert!(want.is_ok(), "answer admitted: {:?}", t.status);
                prop_assert_eq!(t.status.state, TaskState::InputRequired);
                if !named_right {
                    // Some address that names the open wait.
                    let w = &c.address.as_ref().unwrap();
                    prop_assert_eq!(w.get("key").and_then(Value::as_str), Some("score"));
                }
            }
            Err(e) => {
                let after = self.rt.block_on(records(&*self.log, &auth, &root));
                prop_assert_eq!(after, before, "a refused answer wrote records");
                if named_right && !(c.score.is_null() && matches!(c.score_as, Carrier::Data)) {
                    prop_assert_eq!(Err(e.kind()), want, "{:?}", e.violations());
                } else {
                    let k = e.kind();
                    prop_assert!(
                        [
                            ErrorKind::InvalidParams,
                            ErrorKind::UnsupportedOperation,
                            ErrorKind::ContentTypeNotSupported
                        ]
                        .contains(&k),
                        "{:?}",
                        k
                    );
                }
            }
        }
        Ok(())
    }
}

/// The tasks a host holds before a fresh one replaces it.
const TASKS_PER_HOST: u64 = 512;

#[test]
fn managed_input_and_answer_admission() {
    let host = std::cell::RefCell::new(Host::new());
    fuzz("managed", 150, cases(), |c| {
        if host.borrow().starts.get() >= TASKS_PER_HOST {
            *host.borrow_mut() = Host::new();
        }
        host.borrow().check(c)
    });
}
