//! Crash test of managed tasks: the `managed` example (program
//! `example.refund`, SQLite) is killed with SIGKILL while both waits are open
//! (`approve` on the root, `score` on `ROOT/fraud-check`) and again after
//! `approve` is answered, and restarted on the same data directory each time.
//! The same question ids stay pending across both restarts, the `lookup` step
//! runs once across the three processes, and the task completes with the
//! result the run would have had without the crashes, the refunded amount
//! keeping its exact JSON text `12345678901234567890.123456789` in the raw
//! response bytes. The flow uses both bindings: JSON-RPC for the start and the
//! last answer, HTTP+JSON for reads and the first answer.
//! Needs the example binary (see `support/server.rs`).

use crate::support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::http::{HttpClient, Reply, client, fetch};
use support::server::{Server, TempDir};

/// The exact text of the amount, in the input and in the result.
const AMOUNT: &str = "12345678901234567890.123456789";
/// How long the run may take to reach a state the test waits for.
const PATIENCE: Duration = Duration::from_secs(30);

/// `POST url` with `body` sent as it is (so numbers keep their exact text),
/// `A2A-Version: 1.0`: the answer read whole, which must be HTTP 200.
async fn post(c: &HttpClient, url: &str, body: String) -> Reply {
    let req = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let r = fetch(c, req).await;
    assert_eq!(r.status, StatusCode::OK, "POST {url}: {}", r.text());
    r
}

/// A JSON-RPC call with the raw `params` text: the raw answer, which must be
/// a result (not an error).
async fn rpc_raw(c: &HttpClient, base: &str, method: &str, params: &str) -> Reply {
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
    let r = post(c, &format!("{base}/"), body).await;
    let v = r.json();
    assert!(v.get("error").is_none(), "{method} answered an error: {v}");
    r
}

/// GetTask over HTTP+JSON (`GET /rest/tasks/{id}`): the raw answer.
async fn get_rest(c: &HttpClient, base: &str, id: &str) -> Reply {
    let req = Request::builder()
        .uri(format!("{base}/rest/tasks/{id}"))
        .header("a2a-version", "1.0")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = fetch(c, req).await;
    assert_eq!(r.status, StatusCode::OK, "GetTask {id}: {}", r.text());
    r
}

/// The `(owner, key)` of each entry of the task's `scope.pending`.
fn pending(task: &Value) -> Vec<(String, String)> {
    let list = task["metadata"]["scope.pending"]
        .as_array()
        .unwrap_or_else(|| panic!("no scope.pending: {task}"));
    list.iter()
        .map(|q| {
            (
                q["owner"].as_str().unwrap().to_owned(),
                q["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Reads the task over HTTP+JSON until its pending questions are exactly
/// `want` (as `(owner, key)`, in any order); the task then.
async fn until_pending(c: &HttpClient, base: &str, id: &str, want: &[(&str, &str)]) -> Value {
    let mut want: Vec<(String, String)> = want
        .iter()
        .map(|(o, k)| ((*o).to_owned(), (*k).to_owned()))
        .collect();
    want.sort();
    let deadline = Instant::now() + PATIENCE;
    loop {
        let task = get_rest(c, base, id).await.json();
        let mut got = pending(&task);
        got.sort();
        if got == want {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "the pending questions are not {want:?} within {PATIENCE:?}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The id of the pending question `(owner, key)` of `task`.
fn question_id(task: &Value, owner: &str, key: &str) -> String {
    task["metadata"]["scope.pending"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["owner"] == owner && q["key"] == key)
        .and_then(|q| q["id"].as_str())
        .unwrap_or_else(|| panic!("no pending question {owner}/{key}: {task}"))
        .to_owned()
}

/// An answer message to `task` for the wait `(process, key)`, `data` as the
/// raw JSON text of its data part.
fn answer(id: &str, task: &Value, process: &str, key: &str, data: &str) -> String {
    format!(
        r#"{{"message":{{"messageId":"{id}","taskId":{},"contextId":{},"role":"ROLE_USER","parts":[{{"data":{data}}}],"metadata":{{"scope.wait":{{"process":"{process}","key":"{key}"}}}}}}}}"#,
        task["id"], task["contextId"]
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_with_open_waits_keeps_questions_steps_and_the_exact_result() {
    let data = TempDir::new("crash-managed");
    let dir = data.0.to_str().unwrap().to_owned();
    let env = [("A2A_DATA_DIR", dir.as_str())];
    let c = client();
    let mut stderr = String::new();

    // 1. Start the refund over JSON-RPC: the blocking SendMessage returns
    //    once the run asks its first question.
    let srv = Server::start_capturing("managed", &env);
    let start = format!(
        r#"{{"message":{{"messageId":"refund-1","contextId":"ctx-crash","role":"ROLE_USER","parts":[{{"data":{{"order":"A-1","amount":{AMOUNT}}}}}]}}}}"#
    );
    let started = rpc_raw(&c, &srv.base, "SendMessage", &start).await;
    let task = started.json()["result"]["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    assert_eq!(task["metadata"]["scope.program"], "example.refund");
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["metadata"]["scope.root_id"], id.as_str());
    let child = format!("{id}/fraud-check");

    // Both waits open: `approve` on the root, `score` on the child.
    let both = [(id.as_str(), "approve"), (child.as_str(), "score")];
    let task = until_pending(&c, &srv.base, &id, &both).await;
    let approve_id = question_id(&task, &id, "approve");
    let score_id = question_id(&task, &child, "score");
    assert_ne!(approve_id, score_id);
    let raw = get_rest(&c, &srv.base, &id).await;
    assert!(
        raw.text().contains(&format!(
            r#""question":{{"text":"Refund {AMOUNT} for A-1?"}}"#
        )),
        "the question keeps the amount's exact text: {}",
        raw.text()
    );
    stderr += &srv.kill_capturing();

    // 2. Restart on the same directory: the same questions, same ids.
    let srv = Server::start_capturing("managed", &env);
    let task = until_pending(&c, &srv.base, &id, &both).await;
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    assert_eq!(question_id(&task, &id, "approve"), approve_id);
    assert_eq!(question_id(&task, &child, "score"), score_id);

    // Answer `approve` over HTTP+JSON, naming the wait in `scope.wait`.
    let body = answer(
        "answer-approve",
        &task,
        &id,
        "approve",
        r#"{"approved":true,"note":"ok"}"#,
    );
    let answered = post(&c, &format!("{}/rest/message:send", srv.base), body).await;
    let task = answered.json()["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    assert_eq!(pending(&task), [(child.clone(), "score".to_owned())]);
    stderr += &srv.kill_capturing();

    // 3. Restart again: only `score` is pending, with the same id.
    let srv = Server::start_capturing("managed", &env);
    let task = until_pending(&c, &srv.base, &id, &[(child.as_str(), "score")]).await;
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    assert_eq!(question_id(&task, &child, "score"), score_id);

    // Answer `score` over JSON-RPC: the blocking send returns the completed
    // task, the refund's exact amount in its artifact.
    let result = format!(r#"{{"order":"A-1","refunded":{AMOUNT},"note":"ok"}}"#);
    let body = answer("answer-score", &task, &child, "score", "12");
    let done = rpc_raw(&c, &srv.base, "SendMessage", &body).await;
    let task = done.json()["result"]["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["artifacts"][0]["artifactId"], "result", "{task}");
    assert_eq!(task["metadata"]["scope.pending"], json!([]), "{task}");
    assert_eq!(task["metadata"]["scope.termination"], "completed", "{task}");
    assert!(
        done.text().contains(&format!(r#""data":{result}"#)),
        "the JSON-RPC answer lacks the exact result {result}: {}",
        done.text()
    );
    // The same over HTTP+JSON, read back from the log.
    let got = get_rest(&c, &srv.base, &id).await;
    assert_eq!(got.json()["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(
        got.text().contains(&format!(r#""data":{result}"#)),
        "GetTask lacks the exact result {result}: {}",
        got.text()
    );
    stderr += &srv.kill_capturing();

    // The `lookup` step ran once, in the first process; replays reused it.
    let ran = stderr
        .lines()
        .filter(|l| l.contains("step lookup ran for A-1"))
        .count();
    assert_eq!(ran, 1, "the lookup step ran {ran} times:\n{stderr}");
}
