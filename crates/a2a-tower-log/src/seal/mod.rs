//! Push secrets sealed with a host key: the `token` and
//! `authentication.credentials` of every push-notification config are
//! stored encrypted (AES-256-GCM), whatever the backend, and opened only
//! when the log hands a config to the engine or the push outbox.
//!
//! [`SealedPushSecrets`] wraps the records of a backend
//! ([`TaskStore::seal_push_secrets`](crate::TaskStore::seal_push_secrets)):
//! an append seals the secrets of each [`Record::PushConfigSet`](crate::Record::PushConfigSet); a read,
//! a snapshot or a watch opens them. A sealed value names the key it was
//! sealed with (the first bytes of a hash of the key, not the key), is bound
//! to its task, config and field (the AEAD's associated data), and can only
//! be opened by that key: read with another key, or with none, the task's
//! reads fail with [`LogErrorKind::Backend`](crate::LogErrorKind::Backend)
//! and a message naming both key ids, so a lost or wrong key is seen at the
//! first read rather than as webhooks sent with garbage credentials. Values
//! stored before the key was set are read as they are, and sealed the next
//! time their config is written.
//!
//! ```
//! use a2a_tower::log::{AppendRequest, MemoryTaskLog, PushSecretKey, Record, TaskLog, TaskStore};
//! use a2a_tower::types::{AuthenticationInfo, TaskPushNotificationConfig};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let memory = std::sync::Arc::new(MemoryTaskLog::new());
//! let key = PushSecretKey::from_bytes([7; 32]);
//! let store = TaskStore::from(memory.clone()).seal_push_secrets(key);
//! let config = TaskPushNotificationConfig {
//!     id: "p-1".into(),
//!     task_id: "t-1".into(),
//!     url: "https://example.com/hook".into(),
//!     token: "receiver-token".into(),
//!     authentication: Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: "s3cret".into() }),
//!     ..Default::default()
//! };
//! let records = vec![Record::created("t-1", "c-1"), Record::PushConfigSet { config: config.clone() }];
//! store.records().append(AppendRequest::create("public", "t-1", records)).await.unwrap();
//!
//! // Through the wrapper: the config as written.
//! let snap = store.records().snapshot("public", "t-1").await.unwrap();
//! assert_eq!(snap.projection.push_configs(), [config]);
//! // In the backend: sealed.
//! let raw = memory.snapshot("public", "t-1").await.unwrap();
//! assert!(raw.projection.push_configs()[0].token.starts_with(PushSecretKey::SEALED));
//! // Another key fails loudly.
//! let wrong = TaskStore::from(memory).seal_push_secrets(PushSecretKey::from_bytes([8; 32]));
//! assert!(wrong.records().snapshot("public", "t-1").await.is_err());
//! # });
//! ```

mod log;

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::LogError;
use crate::types::TaskPushNotificationConfig;

pub use log::SealedPushSecrets;

/// The host's key for push secrets: 32 bytes (AES-256-GCM).
///
/// Keep it outside the database (an environment variable, a secret
/// store): whoever holds the file and the key holds the secrets. `Debug`
/// shows only the key id.
#[derive(Clone)]
pub struct PushSecretKey {
    key: std::sync::Arc<LessSafeKey>,
    id: String,
}

impl fmt::Debug for PushSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushSecretKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A key that is not 32 bytes of base64 (standard or URL-safe, padded or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidPushSecretKey;

impl fmt::Display for InvalidPushSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a push secret key is 32 bytes, as base64")
    }
}

impl std::error::Error for InvalidPushSecretKey {}

impl PushSecretKey {
    /// What every sealed value starts with: a control character, which no
    /// config the engine accepts can hold (tokens and credentials are
    /// visible ASCII), then a format tag.
    pub const SEALED: &'static str = "\u{1}a2a-sealed.v1.";

    /// The key of these 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let unbound = UnboundKey::new(&AES_256_GCM, &bytes).expect("32 bytes is an AES-256 key");
        let digest = ring::digest::digest(
            &ring::digest::SHA256,
            &[b"a2a-tower push secret key\0".as_slice(), &bytes].concat(),
        );
        let id = digest.as_ref()[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Self {
            key: std::sync::Arc::new(LessSafeKey::new(unbound)),
            id,
        }
    }

    /// The key from its base64 text (standard or URL-safe alphabet, padded
    /// or not), as a host keeps it in an environment variable.
    pub fn from_base64(text: &str) -> Result<Self, InvalidPushSecretKey> {
        let text = text.trim().trim_end_matches('=');
        let bytes = URL_SAFE_NO_PAD
            .decode(text.replace('+', "-").replace('/', "_"))
            .map_err(|_| InvalidPushSecretKey)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| InvalidPushSecretKey)?;
        Ok(Self::from_bytes(bytes))
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .expect("the system's random source");
        Self::from_bytes(bytes)
    }

    /// The key's id: 8 hex digits of a hash of the key, stored with each
    /// sealed value so that a wrong key is named as such.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Seals the secrets of `config` in place (those already sealed stay).
    pub(crate) fn seal(&self, config: &mut TaskPushNotificationConfig) {
        let (task, id) = (config.task_id.clone(), config.id.clone());
        if !config.token.is_empty() {
            config.token = self.seal_one(&config.token, &task, &id, "token");
        }
        if let Some(auth) = &mut config.authentication
            && !auth.credentials.is_empty()
        {
            auth.credentials = self.seal_one(&auth.credentials, &task, &id, "credentials");
        }
    }

    /// Opens the sealed secrets of `config` in place.
    pub(crate) fn open(&self, config: &mut TaskPushNotificationConfig) -> Result<(), LogError> {
        let (task, id) = (config.task_id.clone(), config.id.clone());
        config.token = self.open_one(&config.token, &task, &id, "token")?;
        if let Some(auth) = &mut config.authentication {
            auth.credentials = self.open_one(&auth.credentials, &task, &id, "credentials")?;
        }
        Ok(())
    }

    fn seal_one(&self, plain: &str, task: &str, config: &str, field: &str) -> String {
        if plain.starts_with(Self::SEALED) {
            return plain.to_owned();
        }
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .expect("the system's random source");
        let mut data = plain.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad(task, config, field)),
                &mut data,
            )
            .expect("AES-GCM seals any length a config can have");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        format!(
            "{}{}.{}",
            Self::SEALED,
            self.id,
            URL_SAFE_NO_PAD.encode(out)
        )
    }

    fn open_one(
        &self,
        stored: &str,
        task: &str,
        config: &str,
        field: &str,
    ) -> Result<String, LogError> {
        let Some(rest) = stored.strip_prefix(Self::SEALED) else {
            return Ok(stored.to_owned());
        };
        let fail = |why: &str| {
            LogError::backend(format!(
                "push secret {field} of config {config:?} of task {task:?} cannot be opened: {why}"
            ))
        };
        let (key_id, body) = rest.split_once('.').ok_or_else(|| fail("malformed"))?;
        if key_id != self.id {
            return Err(fail(&format!(
                "sealed with key {key_id}, this host's key is {} (a lost or wrong push secret key)",
                self.id
            )));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| fail("malformed"))?;
        if bytes.len() < NONCE_LEN {
            return Err(fail("malformed"));
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| fail("malformed"))?;
        let mut data = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad(task, config, field)), &mut data)
            .map_err(|_| fail("authentication failed (tampered, or moved to another config)"))?;
        String::from_utf8(plain.to_vec()).map_err(|_| fail("not text"))
    }
}

/// What a sealed value is bound to: its task, config and field.
fn aad(task: &str, config: &str, field: &str) -> Vec<u8> {
    [task.as_bytes(), config.as_bytes(), field.as_bytes()].join(&0u8)
}

/// Whether `config` holds a sealed secret: read without the key that
/// sealed it (the push sender refuses to deliver it, loudly).
pub fn is_sealed(config: &TaskPushNotificationConfig) -> bool {
    config.token.starts_with(PushSecretKey::SEALED)
        || config
            .authentication
            .as_ref()
            .is_some_and(|a| a.credentials.starts_with(PushSecretKey::SEALED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AuthenticationInfo;

    fn config() -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            id: "p".into(),
            task_id: "t".into(),
            url: "https://example.com".into(),
            token: "tok".into(),
            authentication: Some(AuthenticationInfo {
                scheme: "Basic".into(),
                credentials: "dXNlcjpwYXNz".into(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn seals_and_opens() {
        let key = PushSecretKey::from_bytes([1; 32]);
        let mut c = config();
        key.seal(&mut c);
        assert!(c.token.starts_with(PushSecretKey::SEALED));
        assert!(!c.token.contains("tok"));
        let creds = &c.authentication.as_ref().unwrap().credentials;
        assert!(!creds.contains("dXNlcjpwYXNz"));
        let sealed_once = c.clone();
        key.seal(&mut c);
        assert_eq!(c, sealed_once, "sealing twice changes nothing");
        key.open(&mut c).unwrap();
        assert_eq!(c, config());
        assert!(is_sealed(&sealed_once));
        assert!(!is_sealed(&config()));
    }

    #[test]
    fn wrong_key_moved_value_and_tampering_fail() {
        let key = PushSecretKey::from_bytes([1; 32]);
        let mut c = config();
        key.seal(&mut c);
        let err = PushSecretKey::from_bytes([2; 32])
            .open(&mut c.clone())
            .unwrap_err();
        assert!(format!("{err:?}").contains(key.id()), "{err:?}");
        let mut moved = c.clone();
        moved.task_id = "other".into();
        assert!(key.open(&mut moved).is_err());
        let mut tampered = c.clone();
        let last = tampered.token.pop().unwrap();
        tampered.token.push(if last == 'A' { 'B' } else { 'A' });
        assert!(key.open(&mut tampered).is_err());
    }

    #[test]
    fn base64_keys() {
        let a = PushSecretKey::from_base64(&"A".repeat(43)).unwrap();
        let b = PushSecretKey::from_base64(&format!("{}=", "A".repeat(43))).unwrap();
        assert_eq!(a.id(), b.id());
        assert_eq!(a.id(), PushSecretKey::from_bytes([0; 32]).id());
        assert!(PushSecretKey::from_base64("short").is_err());
        assert!(format!("{a:?}").contains(a.id()));
    }
}
