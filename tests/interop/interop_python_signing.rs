//! Agent card signatures across SDKs (a2a-spec.md §8.4), with the official
//! Python `a2a-sdk` 1.x signer and verifier (`a2a.utils.signing`, the
//! `signing` extra), driven by `tests/interop/python_signing.py`, for ES256,
//! RS256 and EdDSA keys the script generates:
//!
//! - a card signed by a2a-sdk's signer and served by its own card route
//!   verifies in our client (`CardTrust::require` with the public key), and
//!   is refused, before any call, when it was changed after signing or the
//!   key is another one;
//! - with a `jku` in its protected header (the key set served beside the
//!   card), the card verifies in our client with no pinned key
//!   (`CardTrust::fetch_jku`);
//! - the card the echo example signs (`A2A_CARD_KEY`) verifies with
//!   a2a-sdk's verifier (after its client's `parse_agent_card`), and a
//!   changed copy of it is refused there.
//!
//! The Python card uses an empty optional string (`documentationUrl: ""`),
//! extension params with an integer (a double in protobuf) and non-ASCII
//! text: a2a-sdk signs its card with every empty value stripped, so our
//! verifier verifies it through its second payload form (CONFORMANCE.md).
//!
//! Python comes from `A2A_PYTHON`, else `.venv/bin/python` (`scripts/test.sh`
//! installs `a2a-sdk[http-server,grpc,signing]` there). A missing
//! interpreter or package fails these tests with the install command; they
//! never skip.

use crate::support;

use std::path::Path;
use std::process::Command;

use a2a_tower::client::{A2aClient, CardTrust};
use a2a_tower::signing::{VerifyingKey, verify_card};
use support::client::{bounded, card_url};
use support::python::{python_with, script};
use support::server::{Server, TempDir};

const ALGORITHMS: [&str; 3] = ["ES256", "RS256", "EdDSA"];

const MODULES: &str = "a2a.utils.signing, a2a.server.routes, starlette, uvicorn, httpx";

/// A fresh key pair per algorithm, `ALG.pem` and `ALG.pub.pem`, made by the
/// script (Python's `cryptography`).
fn keys() -> TempDir {
    let dir = TempDir::new("card-keys");
    let out = Command::new(python_with(MODULES))
        .arg(script("python_signing.py"))
        .arg("keygen")
        .arg(&dir.0)
        .output()
        .expect("run python_signing.py keygen");
    assert!(
        out.status.success(),
        "keygen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn public_key(dir: &Path, alg: &str) -> VerifyingKey {
    let pem = std::fs::read_to_string(dir.join(format!("{alg}.pub.pem"))).unwrap();
    let mut keys = VerifyingKey::parse_all(&pem, Some(alg)).unwrap();
    assert_eq!(keys.len(), 1);
    keys.remove(0)
}

/// a2a-sdk serving a card its signer signed with `dir/ALG.pem`; `flag`:
/// none, `--tamper` or `--jku`.
fn python_signed(dir: &Path, alg: &str, flag: Option<&str>) -> Server {
    let mut cmd = Command::new(python_with(MODULES));
    cmd.arg(script("python_signing.py"))
        .arg("serve")
        .arg(dir.join(format!("{alg}.pem")))
        .arg(alg)
        .arg("0");
    cmd.args(flag);
    Server::start_command("python_signing.py", cmd)
}

async fn connect(base: &str, trust: CardTrust) -> Result<(), a2a_tower::A2aError> {
    let c = A2aClient::builder(card_url(base))
        .card_trust(trust)
        .build()
        .unwrap();
    bounded(c.connect()).await.map(drop)
}

#[tokio::test]
async fn a_card_signed_by_the_python_sdk_verifies_in_our_client() {
    let dir = keys();
    for alg in ALGORITHMS {
        let srv = python_signed(&dir.0, alg, None);
        let card = support::http::fetch(
            &support::http::client(),
            support::http::request("GET", &card_url(&srv.base), None),
        )
        .await;
        let card: serde_json::Value = serde_json::from_slice(&card.body).unwrap();
        // Python's signer drops empty values before signing; the card it
        // serves still has them.
        assert_eq!(card["documentationUrl"], "", "{alg}: {card}");
        assert_eq!(
            verify_card(&card, &[public_key(&dir.0, alg)]).as_deref(),
            Ok(alg),
            "{alg}: {card}"
        );
        connect(&srv.base, CardTrust::require([public_key(&dir.0, alg)]))
            .await
            .unwrap_or_else(|e| panic!("{alg}: {e}"));

        // Another key of the same algorithm and kid.
        let other = keys();
        let err = connect(&srv.base, CardTrust::require([public_key(&other.0, alg)]))
            .await
            .expect_err("another key");
        assert!(err.message().contains("signature"), "{alg}: {err}");
    }
}

#[tokio::test]
async fn a_card_changed_after_the_python_sdk_signed_it_is_refused() {
    let dir = keys();
    for alg in ALGORITHMS {
        let srv = python_signed(&dir.0, alg, Some("--tamper"));
        for trust in [
            CardTrust::require([public_key(&dir.0, alg)]),
            CardTrust::verify_if_signed([public_key(&dir.0, alg)]),
        ] {
            let err = connect(&srv.base, trust).await.expect_err("tampered");
            assert!(err.message().contains("signature"), "{alg}: {err}");
        }
        // Without a trust policy the card is taken as it is.
        connect(&srv.base, CardTrust::ignore())
            .await
            .unwrap_or_else(|e| panic!("{alg}: {e}"));
    }
}

#[tokio::test]
async fn a_card_the_python_sdk_signed_with_a_jku_verifies_with_the_fetched_key() {
    let dir = keys();
    for alg in ALGORITHMS {
        let srv = python_signed(&dir.0, alg, Some("--jku"));
        // No pinned key: only the key set at the header's `jku` (same origin).
        connect(&srv.base, CardTrust::require([]).fetch_jku([]))
            .await
            .unwrap_or_else(|e| panic!("{alg}: {e}"));
        let err = connect(&srv.base, CardTrust::require([]))
            .await
            .expect_err("no key without fetch_jku");
        assert!(err.message().contains("signature"), "{alg}: {err}");
    }
}

#[tokio::test]
async fn a_card_our_server_signed_verifies_with_the_python_sdk() {
    let dir = keys();
    for alg in ALGORITHMS {
        let key = dir.0.join(format!("{alg}.pem"));
        let srv = Server::start_with(
            "echo",
            &[
                ("A2A_CARD_KEY", key.to_str().unwrap()),
                ("A2A_LOG", "memory"),
            ],
        );
        let out = tokio::process::Command::new(python_with(MODULES))
            .arg(script("python_signing.py"))
            .arg("verify")
            .arg(card_url(&srv.base))
            .arg(dir.0.join(format!("{alg}.pub.pem")))
            .arg(alg)
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(std::time::Duration::from_secs(120), out)
            .await
            .expect("python_signing.py verify ran too long")
            .expect("run python_signing.py verify");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("PYTHON SIGNING OK"),
            "{alg}: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains("as served: VERIFIED"), "{alg}: {stdout}");
        assert!(
            stdout.contains("tampered: REFUSED: InvalidSignaturesError"),
            "{alg}: {stdout}"
        );
    }
}
