//! Push secrets sealed with a host key (`TaskStore::seal_push_secrets`) on
//! the durable logs: the stored form holds no token or credentials, the
//! same key opens them, and a wrong or lost key fails loudly.

use crate::support;

use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, PushSecretKey, Record, SqliteTaskLog, TaskBackend, TaskLog, TaskStore, is_sealed,
};
use a2a_tower::types::{AuthenticationInfo, TaskPushNotificationConfig};

const TOKEN: &str = "receiver-token-5f1e";
const CREDENTIALS: &str = "very-secret-credentials-9c2a";

fn config(task: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        id: "p-1".into(),
        task_id: task.into(),
        url: "https://example.com/hook".into(),
        token: TOKEN.into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: CREDENTIALS.into(),
        }),
        ..Default::default()
    }
}

/// Writes a task with a config through a sealed store over `backend`, and
/// checks what the store and the bare backend read.
async fn write_and_check(backend: Arc<dyn TaskBackend>, key: &PushSecretKey) {
    let store = TaskStore::from(backend.clone()).seal_push_secrets(key.clone());
    let records = vec![
        Record::created("t-1", "c-1"),
        Record::PushConfigSet {
            config: config("t-1"),
        },
    ];
    let appended = store
        .records()
        .append(AppendRequest::create("public", "t-1", records))
        .await
        .unwrap();
    assert_eq!(appended.snapshot.projection.push_configs(), [config("t-1")]);
    let snap = store.records().snapshot("public", "t-1").await.unwrap();
    assert_eq!(snap.projection.push_configs(), [config("t-1")]);
    let read = store.records().read("public", "t-1", 0).await.unwrap();
    assert!(matches!(&*read[1].record, Record::PushConfigSet { config: c } if *c == config("t-1")));
    // The backend alone reads them sealed.
    let raw = backend.snapshot("public", "t-1").await.unwrap();
    let stored = &raw.projection.push_configs()[0];
    assert!(is_sealed(stored));
    let json = serde_json::to_string(stored).unwrap();
    assert!(
        !json.contains(TOKEN) && !json.contains(CREDENTIALS),
        "{json}"
    );
    let raw = backend.read("public", "t-1", 0).await.unwrap();
    let json = serde_json::to_string(&*raw[1].record).unwrap();
    assert!(
        !json.contains(TOKEN) && !json.contains(CREDENTIALS),
        "{json}"
    );
}

/// Reads through a store sealed with `key`: the error, if any.
async fn read_with(backend: Arc<dyn TaskBackend>, key: PushSecretKey) -> Option<String> {
    let store = TaskStore::from(backend).seal_push_secrets(key);
    match store.records().snapshot("public", "t-1").await {
        Ok(s) => {
            assert_eq!(s.projection.push_configs(), [config("t-1")]);
            None
        }
        Err(e) => Some(format!("{e:?}")),
    }
}

#[tokio::test]
async fn sqlite_file_holds_no_push_secret_and_a_wrong_key_fails() {
    let dir = std::env::temp_dir().join(format!("a2a-seal-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("tasks.db");
    let key = PushSecretKey::generate();
    {
        let log = SqliteTaskLog::open(&db).unwrap();
        write_and_check(Arc::new(log), &key).await;
    }
    // Every byte SQLite wrote: the file, its WAL.
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("example.com/hook"), "the config is stored");
    assert!(!text.contains(TOKEN), "the token is not in the file");
    assert!(
        !text.contains(CREDENTIALS),
        "the credentials are not in the file"
    );

    let reopen = || Arc::new(SqliteTaskLog::open(&db).unwrap()) as Arc<dyn TaskBackend>;
    assert_eq!(read_with(reopen(), key.clone()).await, None);
    let err = read_with(reopen(), PushSecretKey::generate())
        .await
        .expect("a wrong key fails");
    assert!(err.contains(key.id()), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_stores_push_secrets_sealed_and_a_wrong_key_fails() {
    support::postgres::with_schema(|schema| async move {
        let key = PushSecretKey::from_bytes([9; 32]);
        let log: Arc<dyn TaskBackend> = Arc::new(support::postgres::connect(&schema).await);
        write_and_check(log.clone(), &key).await;
        let other: Arc<dyn TaskBackend> = Arc::new(support::postgres::connect(&schema).await);
        assert_eq!(read_with(other.clone(), key.clone()).await, None);
        let err = read_with(other, PushSecretKey::generate())
            .await
            .expect("a wrong key fails");
        assert!(err.contains("lost or wrong"), "{err}");
    })
    .await;
}
