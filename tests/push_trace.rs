//! The `a2a.push.deliver` tracing span (its own test binary: tracing caches
//! callsite interest process-wide). It names the task, the config, the
//! attempts and the outcome, never the URL, token or credentials.

#![cfg(feature = "push")]

mod support;

use std::time::Duration;

use a2a_tower::push::{Backoff, PushSender, WebhookGuard};
use a2a_tower::types::{AuthenticationInfo, StreamResponse, TaskPushNotificationConfig};
use support::trace::Fields;
use support::webhook::{Receiver, Reply};

const SPAN: &str = "a2a.push.deliver";

#[test]
fn span_records_the_outcome_and_no_secret() {
    let fields = Fields::default();
    tracing::subscriber::with_default(fields.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let rx = Receiver::start().await;
            rx.script([Reply::Status(503)]);
            let config = TaskPushNotificationConfig {
                id: "cfg-9".into(),
                task_id: "task-9".into(),
                url: rx.url("/hook?sig=query-secret"),
                token: "token-secret".into(),
                authentication: Some(AuthenticationInfo {
                    scheme: "Bearer".into(),
                    credentials: "credential-secret".into(),
                }),
                ..Default::default()
            };
            let event: StreamResponse = serde_json::from_str(
                r#"{"statusUpdate":{"taskId":"task-9","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}"#,
            )
            .unwrap();
            let allowed = PushSender::builder()
                .guard(WebhookGuard::new().allow("127.0.0.1".parse().unwrap()))
                .backoff(Backoff::new(Duration::from_millis(5), Duration::from_millis(5)))
                .build()
                .unwrap();
            allowed.deliver(&config, &event).await.unwrap();
            let guarded = PushSender::new();
            guarded.deliver(&config, &event).await.unwrap_err();
            assert_eq!(rx.hits().len(), 2);
        });
    });
    assert_eq!(fields.of(SPAN, "task_id"), ["task-9", "task-9"]);
    assert_eq!(fields.of(SPAN, "config_id"), ["cfg-9", "cfg-9"]);
    assert_eq!(fields.of(SPAN, "attempts"), ["2", "1"]);
    assert_eq!(fields.of(SPAN, "outcome"), ["delivered", "refused"]);
    assert_eq!(fields.of(SPAN, "http.status"), ["200"]);
    for secret in [
        "query-secret",
        "token-secret",
        "credential-secret",
        "/hook",
        "127.0.0.1",
    ] {
        assert!(fields.never(secret), "a span recorded {secret}");
    }
}
