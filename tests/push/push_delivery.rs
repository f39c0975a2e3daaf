//! Push delivery (`push::PushSender`) to webhook receivers on loopback: the
//! payload and headers (A2A spec §9), retries, timeouts, redirects, and the
//! SSRF guard (issue 17 items 2 and 4).

use crate::support;

use std::time::{Duration, Instant};

use a2a_tower::push::{AddressClass, Backoff, PushError, PushErrorKind, PushSender, WebhookGuard};
use a2a_tower::types::{AuthenticationInfo, StreamResponse, TaskPushNotificationConfig};
use support::webhook::{Receiver, Reply};

const TOKEN: &str = "tok-7f3a9c";
const CREDENTIALS: &str = "cred-91b2e4";
const MS: Duration = Duration::from_millis(1);

/// Loopback allowed explicitly, as the tests' receivers listen there.
fn loopback() -> WebhookGuard {
    WebhookGuard::new()
        .allow_networks(["127.0.0.0/8", "::1"])
        .unwrap()
}

/// A sender with short waits: 2 s per attempt, 3 retries, 50–200 ms backoff.
fn sender(guard: WebhookGuard) -> PushSender {
    PushSender::builder()
        .guard(guard)
        .timeout(Duration::from_secs(2))
        .retries(3)
        .backoff(Backoff::new(50 * MS, 200 * MS))
        .build()
        .unwrap()
}

fn config(url: String) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        id: "cfg-1".into(),
        task_id: "task-1".into(),
        url,
        token: TOKEN.into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: CREDENTIALS.into(),
        }),
        ..Default::default()
    }
}

/// A status update, as the ProtoJSON every webhook gets.
const EVENT: &str = r#"{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-02T03:04:05.678Z"}}}"#;

fn event() -> StreamResponse {
    serde_json::from_str(EVENT).unwrap()
}

/// One delivery, bounded so that a hang fails the test.
async fn deliver(
    sender: &PushSender,
    config: &TaskPushNotificationConfig,
) -> Result<(), PushError> {
    tokio::time::timeout(Duration::from_secs(30), sender.deliver(config, &event()))
        .await
        .expect("the delivery settles")
}

#[tokio::test]
async fn posts_the_stream_response_with_the_spec_headers() {
    let rx = Receiver::start().await;
    deliver(&sender(loopback()), &config(rx.url("/hook?k=1")))
        .await
        .unwrap();
    let hits = rx.hits();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(hit.path, "/hook");
    // Exactly the ProtoJSON of the StreamResponse (the REST SSE event bytes).
    assert_eq!(hit.body, serde_json::to_vec(&event()).unwrap());
    let json: serde_json::Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(json["statusUpdate"]["taskId"], "task-1");
    assert_eq!(json["statusUpdate"]["contextId"], "ctx-1");
    assert_eq!(
        json["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let h = &hit.headers;
    assert_eq!(h["content-type"], "application/a2a+json");
    assert_eq!(h["authorization"], format!("Bearer {CREDENTIALS}").as_str());
    assert_eq!(h["a2a-notification-token"], TOKEN);
    assert_eq!(h["x-a2a-notification-token"], TOKEN);
    assert!(h["user-agent"].to_str().unwrap().starts_with("a2a-tower/"));
}

#[tokio::test]
async fn retries_5xx_with_backoff_then_delivers() {
    let rx = Receiver::start().await;
    rx.script([Reply::Status(500), Reply::Status(503)]);
    deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap();
    let hits = rx.hits();
    assert_eq!(hits.len(), 3);
    // Jittered backoff: at least half of 50 ms, then of 100 ms.
    assert!(hits[1].at - hits[0].at >= 25 * MS);
    assert!(hits[2].at - hits[1].at >= 50 * MS);
    assert!(hits.iter().all(|h| h.body == hits[0].body));
}

#[tokio::test]
async fn retries_a_refused_connection_then_delivers() {
    // A port with nothing listening yet; the receiver binds it later.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let late = tokio::spawn(async move {
        tokio::time::sleep(120 * MS).await;
        Receiver::on(
            tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .unwrap(),
        )
    });
    let s = PushSender::builder()
        .guard(loopback())
        .retries(6)
        .backoff(Backoff::new(50 * MS, 100 * MS).without_jitter())
        .build()
        .unwrap();
    deliver(&s, &config(format!("http://127.0.0.1:{port}/late")))
        .await
        .unwrap();
    let rx = late.await.unwrap();
    assert_eq!(rx.hits().len(), 1);
}

#[tokio::test]
async fn gives_up_after_the_retry_bound() {
    let rx = Receiver::start().await;
    rx.script(std::iter::repeat_n(Reply::Status(503), 10));
    let s = PushSender::builder()
        .guard(loopback())
        .retries(2)
        .backoff(Backoff::new(10 * MS, 20 * MS))
        .build()
        .unwrap();
    let err = deliver(&s, &config(rx.url("/"))).await.unwrap_err();
    assert_eq!(err.kind(), PushErrorKind::GaveUp);
    assert_eq!(err.attempts(), 3);
    assert_eq!(err.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(rx.hits().len(), 3);
}

#[tokio::test]
async fn an_attempt_that_gets_no_answer_times_out() {
    let rx = Receiver::start().await;
    rx.script([Reply::Hang, Reply::Hang]);
    let s = PushSender::builder()
        .guard(loopback())
        .timeout(200 * MS)
        .retries(1)
        .backoff(Backoff::new(10 * MS, 10 * MS))
        .build()
        .unwrap();
    let start = Instant::now();
    let err = deliver(&s, &config(rx.url("/"))).await.unwrap_err();
    let took = start.elapsed();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::GaveUp, 2));
    assert_eq!(err.detail(), "the webhook did not answer in time");
    assert_eq!(err.status(), None);
    assert!(
        took >= 400 * MS && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(rx.hits().len(), 2);
}

#[tokio::test]
async fn a_4xx_is_not_retried() {
    let rx = Receiver::start().await;
    rx.script([Reply::Status(400)]);
    let err = deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap_err();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::GaveUp, 1));
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
    assert_eq!(rx.hits().len(), 1);
}

#[tokio::test]
async fn a_see_other_is_not_followed() {
    // 303 asks for a GET of another resource: a webhook POST is not redone.
    let rx = Receiver::start().await;
    rx.script([Reply::With(303, "location", "/result".into())]);
    let err = deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap_err();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::GaveUp, 1));
    assert_eq!(err.status().map(|s| s.as_u16()), Some(303));
    assert_eq!(rx.hits().len(), 1);
}

#[tokio::test]
async fn retry_after_is_honoured_within_the_cap() {
    let rx = Receiver::start().await;
    rx.script([Reply::With(429, "retry-after", "1".into())]);
    let s = PushSender::builder()
        .guard(loopback())
        .backoff(Backoff::new(10 * MS, Duration::from_secs(2)))
        .build()
        .unwrap();
    deliver(&s, &config(rx.url("/"))).await.unwrap();
    let hits = rx.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits[1].at - hits[0].at >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_with_the_same_request() {
    let rx = Receiver::start().await;
    rx.script([Reply::With(307, "location", "/moved".into())]);
    deliver(&sender(loopback()), &config(rx.url("/hook")))
        .await
        .unwrap();
    let hits = rx.hits();
    assert_eq!(hits.len(), 2);
    assert_eq!(
        (hits[0].path.as_str(), hits[1].path.as_str()),
        ("/hook", "/moved")
    );
    assert_eq!(hits[1].body, hits[0].body);
    assert_eq!(hits[1].headers["x-a2a-notification-token"], TOKEN);
}

#[tokio::test]
async fn a_redirect_hop_connects_through_the_guard_again() {
    // The receiver closes the connection after the redirect, so the hop
    // needs a new one: it is made by the guarded connector like the first.
    let rx = Receiver::start().await;
    rx.script([Reply::Closing(308, "location", "/next".into())]);
    deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap();
    assert_eq!(rx.hits().len(), 2);
    assert_eq!(rx.connections(), 2);
}

#[tokio::test]
async fn redirects_are_bounded() {
    let rx = Receiver::start().await;
    rx.script(std::iter::repeat_n(
        Reply::With(302, "location", "/again".into()),
        10,
    ));
    let s = PushSender::builder()
        .guard(loopback())
        .max_redirects(2)
        .build()
        .unwrap();
    let err = deliver(&s, &config(rx.url("/"))).await.unwrap_err();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::GaveUp, 1));
    assert_eq!(err.detail(), "the webhook redirected too many times");
    assert_eq!(rx.hits().len(), 3);
}

#[tokio::test]
async fn a_cross_origin_redirect_is_refused_and_the_other_origin_gets_nothing() {
    let rx = Receiver::start().await;
    let other = Receiver::start().await;
    rx.script([Reply::With(307, "location", other.url("/steal"))]);
    let err = deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap_err();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::Refused, 1));
    assert_eq!(err.detail(), "the webhook redirected to another origin");
    assert_eq!(rx.hits().len(), 1);
    assert_eq!(other.connections(), 0, "the other origin was contacted");
    // Same host and port but another scheme is another origin too.
    rx.script([Reply::With(
        301,
        "location",
        format!("https://127.0.0.1:{}/", rx.port),
    )]);
    let err = deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PushErrorKind::Refused);
}

#[tokio::test]
async fn loopback_is_refused_without_the_allow_list_and_nothing_connects() {
    let rx = Receiver::start().await;
    for url in [rx.url("/"), format!("http://localhost:{}/", rx.port)] {
        let err = deliver(&sender(WebhookGuard::new()), &config(url))
            .await
            .unwrap_err();
        assert_eq!((err.kind(), err.attempts()), (PushErrorKind::Refused, 1));
        assert_eq!(err.address_class(), Some(AddressClass::Loopback));
    }
    tokio::time::sleep(50 * MS).await;
    assert_eq!(rx.connections(), 0);
    assert!(rx.hits().is_empty());
}

#[tokio::test]
async fn an_allowed_network_opens_a_name_resolving_into_it() {
    let rx = Receiver::start().await;
    let guard = WebhookGuard::new().allow("127.0.0.0/8".parse().unwrap());
    deliver(
        &sender(guard),
        &config(format!("http://localhost:{}/", rx.port)),
    )
    .await
    .unwrap();
    assert_eq!(rx.hits().len(), 1);
}

#[tokio::test]
async fn every_non_public_class_is_refused_before_connecting() {
    // Addresses that would hang or fail if connected to: the refusal comes
    // at once, on the first attempt, with the address's class.
    let s = sender(WebhookGuard::new());
    let cases = [
        ("0.0.0.0", AddressClass::Unspecified),
        ("10.0.0.1", AddressClass::Private),
        ("172.16.5.4", AddressClass::Private),
        ("192.168.1.1", AddressClass::Private),
        ("169.254.169.254", AddressClass::LinkLocal),
        ("100.64.0.1", AddressClass::SharedAddressSpace),
        ("192.0.2.1", AddressClass::Documentation),
        ("198.18.0.1", AddressClass::Benchmarking),
        ("224.0.0.1", AddressClass::Multicast),
        ("255.255.255.255", AddressClass::Broadcast),
        ("240.0.0.1", AddressClass::Reserved),
        ("[::]", AddressClass::Unspecified),
        ("[::1]", AddressClass::Loopback),
        ("[fe80::1]", AddressClass::LinkLocal),
        ("[fd00::1]", AddressClass::UniqueLocal),
        ("[ff02::1]", AddressClass::Multicast),
        ("[2001:db8::1]", AddressClass::Documentation),
        ("[::ffff:127.0.0.1]", AddressClass::Loopback),
        ("[::ffff:10.0.0.1]", AddressClass::Private),
        ("[64:ff9b::a9fe:a9fe]", AddressClass::LinkLocal),
        ("[2002:c0a8:101::1]", AddressClass::Private),
    ];
    for (host, class) in cases {
        let start = Instant::now();
        let err = deliver(&s, &config(format!("http://{host}:8080/")))
            .await
            .unwrap_err();
        assert_eq!(
            (err.kind(), err.attempts()),
            (PushErrorKind::Refused, 1),
            "{host}"
        );
        assert_eq!(err.address_class(), Some(class), "{host}");
        assert!(start.elapsed() < Duration::from_secs(1), "{host}");
        let https = deliver(&s, &config(format!("https://{host}/")))
            .await
            .unwrap_err();
        assert_eq!(https.address_class(), Some(class), "{host} over https");
    }
}

#[tokio::test]
async fn a_stalled_webhook_does_not_delay_another_config() {
    let stalled = Receiver::start().await;
    stalled.script(std::iter::repeat_n(Reply::Hang, 4));
    let good = Receiver::start().await;
    let s = PushSender::builder()
        .guard(loopback())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let slow = {
        let (s, c) = (s.clone(), config(stalled.url("/")));
        tokio::spawn(async move { s.deliver(&c, &event()).await })
    };
    tokio::time::sleep(50 * MS).await; // the stalled one is waiting
    let start = Instant::now();
    for _ in 0..5 {
        deliver(&s, &config(good.url("/"))).await.unwrap();
    }
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(good.hits().len(), 5);
    assert!(!slow.is_finished());
    slow.abort();
}

#[tokio::test]
async fn an_invalid_config_is_not_attempted() {
    let s = sender(loopback());
    let mut c = config("http://user:pw@127.0.0.1:1/".into());
    let err = deliver(&s, &c).await.unwrap_err();
    assert_eq!((err.kind(), err.attempts()), (PushErrorKind::Invalid, 0));
    c.url = "ftp://127.0.0.1/".into();
    assert_eq!(
        deliver(&s, &c).await.unwrap_err().kind(),
        PushErrorKind::Invalid
    );
    let text = format!("{err} {err:?}");
    assert!(!text.contains("pw") && !text.contains(TOKEN) && !text.contains(CREDENTIALS));
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn deliveries_are_counted_by_outcome_and_retries() {
    use a2a_tower::telemetry::names;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    // This thread's recorder: the deliveries run on this (current-thread)
    // runtime.
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _local = metrics::set_default_local_recorder(&recorder);
    let rx = Receiver::start().await;
    // Delivered at the third attempt (two retries)...
    rx.script([Reply::Status(500), Reply::Status(503)]);
    deliver(&sender(loopback()), &config(rx.url("/")))
        .await
        .unwrap();
    // ...then given up after three attempts (two more retries).
    rx.script(std::iter::repeat_n(Reply::Status(503), 3));
    let s = PushSender::builder()
        .guard(loopback())
        .retries(2)
        .backoff(Backoff::new(10 * MS, 20 * MS))
        .build()
        .unwrap();
    deliver(&s, &config(rx.url("/"))).await.unwrap_err();
    assert_eq!(rx.hits().len(), 6);

    let snap = snapshotter.snapshot().into_vec();
    let count = |outcome: &str| {
        snap.iter()
            .find(|(k, _, _, _)| {
                let key = k.key();
                key.name() == names::PUSH_DELIVERIES
                    && key
                        .labels()
                        .any(|l| l.key() == "outcome" && l.value() == outcome)
            })
            .map(|(_, _, _, v)| match v {
                DebugValue::Counter(n) => *n,
                other => panic!("{other:?}"),
            })
            .unwrap_or(0)
    };
    assert_eq!(count("delivered"), 1);
    assert_eq!(count("gave_up"), 1);
    assert_eq!(count("retry"), 4);
    assert_eq!(count("refused"), 0);
}
