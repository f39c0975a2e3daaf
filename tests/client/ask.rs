//! The `ask` example as a process against the example agents: answers over
//! both bindings, streamed or not; INPUT_REQUIRED prints the question and the
//! ids and exits 2, and `--task`/`--context` continue the task; a remote
//! failure or an unreachable card exits 1 with the reason on stderr. Needs
//! the example binaries (see `support/server.rs`).

use crate::support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::server::{Server, closed_port, example_binary};

/// How long one `ask` run may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// What one `ask` run printed, and its exit status.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `ask` with `args`, killing it (and failing) after [`PATIENCE`].
fn ask(args: &[&str]) -> Run {
    let bin = example_binary("ask");
    let mut child = Command::new(&bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            pipe.read_to_string(&mut s).expect("utf-8 output");
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ask {args:?} did not exit within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.code().expect("an exit code, not a signal"),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    };
    eprintln!("ask {args:?} -> {run:?}");
    run
}

/// The value of the `name: VALUE` line of `text`.
fn line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {name:?} line in {text:?}"))
}

#[test]
fn echo_answers_over_both_bindings_streamed_or_not() {
    let srv = Server::start("echo");
    for transport in ["jsonrpc", "http+json"] {
        for stream in [false, true] {
            let mut args = vec![srv.base.as_str(), "--transport", transport];
            if stream {
                args.push("--stream");
            }
            args.extend(["hello", "there"]);
            let r = ask(&args);
            assert_eq!(r.code, 0, "{r:?}");
            assert_eq!(r.stdout, "hello there\n", "{r:?}");
        }
    }
    // The card's full URL works as well as the bare origin.
    let card = format!("{}/.well-known/agent-card.json", srv.base);
    let r = ask(&[&card, "hi"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "hi\n"), "{r:?}");
}

#[test]
fn managed_input_required_prints_the_question_and_ids() {
    let srv = Server::start("managed");
    for transport in ["jsonrpc", "http+json"] {
        for stream in [false, true] {
            let mut args = vec![srv.base.as_str(), "--transport", transport];
            if stream {
                args.push("--stream");
            }
            args.push(r#"{"order":"A-1","amount":12.5}"#);
            let r = ask(&args);
            assert_eq!(r.code, 2, "{r:?}");
            assert!(!line(&r.stdout, "task").is_empty(), "{r:?}");
            assert!(!line(&r.stdout, "context").is_empty(), "{r:?}");
            assert!(r.stdout.contains("Refund 12.5 for A-1?"), "{r:?}");
        }
    }
}

#[test]
fn input_required_then_task_and_context_continue_it() {
    let srv = Server::start("conformance");
    for transport in ["jsonrpc", "http+json"] {
        let base = srv.base.as_str();
        let r = ask(&[
            base,
            "--transport",
            transport,
            "--message-id",
            &format!("tck-input-required-{transport}"),
            "hi",
        ]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stdout.starts_with("Please provide more input\n"), "{r:?}");
        let (task, context) = (line(&r.stdout, "task"), line(&r.stdout, "context"));
        let r = ask(&[
            base,
            "--transport",
            transport,
            "--task",
            task,
            "--context",
            context,
            "more",
            "input",
        ]);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, "Input received, task completed\n"),
            "{r:?}"
        );
    }
}

#[test]
fn a_rejected_task_exits_1_with_its_status_message() {
    let srv = Server::start("conformance");
    for stream in [false, true] {
        let mut args = vec![srv.base.as_str(), "--message-id", "tck-reject-task-1"];
        if stream {
            args.push("--stream");
        }
        args.push("hi");
        let r = ask(&args);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(r.stderr.contains("Task rejected"), "{r:?}");
    }
}

#[test]
fn an_unreachable_card_exits_1_with_the_error() {
    let port = closed_port();
    let r = ask(&[&format!("http://127.0.0.1:{port}"), "hi"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.starts_with("ask: "), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
}

#[test]
fn a_bad_command_line_exits_1_with_the_usage() {
    let r = ask(&["http://127.0.0.1:1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("usage: ask CARD_URL"), "{r:?}");
}
