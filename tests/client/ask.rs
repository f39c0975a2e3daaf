//! The `ask` example as a process against the example agents: answers over
//! both bindings, streamed or not; INPUT_REQUIRED prints the question and the
//! ids and exits 2, and `--task`/`--context` continue the task; a remote
//! failure or an unreachable card exits 1 with the reason on stderr. Needs
//! the example binaries (see `support/server.rs`).

use crate::support;

use support::server::{Server, closed_port};

pub(crate) use support::ask::ask;

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

/// A fresh P-256 key: its PKCS#8 private PEM and its SPKI public PEM.
fn p256_pems() -> (String, String) {
    use base64::Engine as _;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    // SubjectPublicKeyInfo of an uncompressed P-256 point.
    let mut spki = vec![
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];
    spki.extend_from_slice(pair.public_key().as_ref());
    let pem = |label: &str, der: &[u8]| {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    };
    (pem("PRIVATE KEY", pkcs8.as_ref()), pem("PUBLIC KEY", &spki))
}

/// How many tasks the agent at `base` has.
fn task_count(base: &str) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(support::http::rpc(
        &support::http::client(),
        base,
        "ListTasks",
        serde_json::json!({}),
    ));
    list["tasks"].as_array().map_or(0, Vec::len)
}

// The echo example signs its card with the key `A2A_CARD_KEY` names (`kid`
// the file stem); `ask --card-key` takes the card signed by that key, and
// refuses one it cannot verify (exit 1, `signature` in the message) before
// sending anything.
#[test]
fn a_signed_card_is_verified_and_a_wrong_key_refuses_it_before_any_call() {
    let dir = std::env::temp_dir().join(format!("a2a-card-key-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let (private, public) = p256_pems();
    let (_, other) = p256_pems();
    let key_file = dir.join("echo-key.pem");
    std::fs::write(&key_file, private).unwrap();
    std::fs::write(dir.join("echo-key.pub.pem"), public).unwrap();
    let srv = Server::start_with(
        "echo",
        &[
            ("A2A_CARD_KEY", key_file.to_str().unwrap()),
            ("A2A_LOG", "memory"),
        ],
    );
    // The card carries an ES256 signature with kid `echo-key`.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = format!("{}/.well-known/agent-card.json", srv.base);
    let get = || {
        rt.block_on(support::http::fetch(
            &support::http::client(),
            support::http::request("GET", &url, None),
        ))
    };
    let (a, b) = (get(), get());
    assert_eq!(a.body, b.body, "signed once: the same bytes");
    assert_eq!(a.headers["etag"], b.headers["etag"]);
    let card: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    let header = a2a_tower::signing::ProtectedHeader::of(
        &serde_json::from_value(card["signatures"][0].clone()).unwrap(),
    )
    .unwrap();
    assert_eq!(header.alg, a2a_tower::signing::Algorithm::Es256);
    assert_eq!(header.kid.as_deref(), Some("echo-key"));

    let public = dir.join("echo-key.pub.pem");
    let ok = ask(&[
        &srv.base,
        "--card-key",
        public.to_str().unwrap(),
        "signed",
        "hello",
    ]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert_eq!(ok.stdout.trim(), "signed hello");
    assert_eq!(task_count(&srv.base), 1);

    // Another key under the same kid: the signature does not verify.
    let other_public = dir.join("other").join("echo-key.pem");
    std::fs::create_dir_all(other_public.parent().unwrap()).unwrap();
    std::fs::write(&other_public, other).unwrap();
    let refused = ask(&[
        &srv.base,
        "--card-key",
        other_public.to_str().unwrap(),
        "nope",
    ]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("signature"), "{refused:?}");
    assert_eq!(task_count(&srv.base), 1, "no call was sent");
    std::fs::remove_dir_all(&dir).unwrap();
}
