//! [`CardTrust`]: the client's policy for card signatures.

use serde_json::Value;

use super::Origin;
use crate::signing::{SigningError, VerifyingKey, verify_card};
use crate::{A2aError, ErrorKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ignore,
    IfSigned,
    Require,
}

/// What the client requires of the card's signatures
/// (a2a-spec.md §8.4) before it calls the agent.
///
/// A card that fails the policy is refused when it is fetched: no RPC is
/// sent on its behalf, and the error (InvalidAgentResponse) says why, with
/// `signature` in its message. The keys are pinned for the card this client
/// resolves (its origin); only ES256, RS256 and EdDSA signatures count
/// (never `none`, never HMAC), and the key must be the header's `kid` and
/// `alg`. A key no longer trusted (expired, revoked) is one the host no
/// longer pins. With [`fetch_jku`](Self::fetch_jku), keys are also taken
/// from a signature's `jku` key set on the card's origin or an allowed one
/// (fetched within the card fetch's timeout and size limit, without
/// credentials or redirects, cached for its `max-age`, five minutes by
/// default; a key whose `exp` has passed is left out); a `jku` on any other
/// origin refuses the card without being fetched.
///
/// ```
/// use a2a_tower::client::CardTrust;
/// use a2a_tower::signing::{SigningKey, sign_card};
/// use a2a_tower::types::AgentCard;
///
/// let jwk = r#"{"kty":"OKP","crv":"Ed25519",
///   "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
///   "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
/// let key = SigningKey::from_text(jwk, "k1").unwrap();
/// let trust = CardTrust::require([key.verifying_key()]);
/// let unsigned = serde_json::to_value(AgentCard::new("A", "B", "1.0.0")).unwrap();
/// assert!(trust.check(&unsigned).unwrap_err().message().contains("signature"));
/// let signed = sign_card(&AgentCard::new("A", "B", "1.0.0"), &key).unwrap();
/// assert!(trust.check(&serde_json::to_value(&signed).unwrap()).is_ok());
/// assert!(CardTrust::verify_if_signed([key.verifying_key()]).check(&unsigned).is_ok());
/// // Keys from the signature's `jku` too, when on the card's origin or this one.
/// let trust = CardTrust::require([]).fetch_jku(["https://keys.example.com".parse().unwrap()]);
/// assert!(trust.check(&unsigned).unwrap_err().message().contains("signature"));
/// ```
#[derive(Debug, Clone)]
pub struct CardTrust {
    mode: Mode,
    keys: Vec<VerifyingKey>,
    jku: Option<Vec<Origin>>,
}

impl Default for CardTrust {
    fn default() -> Self {
        Self::ignore()
    }
}

impl CardTrust {
    /// Signatures are not checked (the default).
    pub fn ignore() -> Self {
        Self {
            mode: Mode::Ignore,
            keys: Vec::new(),
            jku: None,
        }
    }

    /// An unsigned card is taken; a signed one must verify with one of
    /// `keys`.
    pub fn verify_if_signed(keys: impl IntoIterator<Item = VerifyingKey>) -> Self {
        Self {
            mode: Mode::IfSigned,
            keys: keys.into_iter().collect(),
            jku: None,
        }
    }

    /// The card must carry a signature that verifies with one of `keys`.
    pub fn require(keys: impl IntoIterator<Item = VerifyingKey>) -> Self {
        Self {
            mode: Mode::Require,
            keys: keys.into_iter().collect(),
            jku: None,
        }
    }

    /// Also trusts the keys a signature's `jku` publishes, when the `jku`
    /// is on the card's origin or one of `allowed` (see the type's docs).
    pub fn fetch_jku(mut self, allowed: impl IntoIterator<Item = Origin>) -> Self {
        self.jku = Some(allowed.into_iter().collect());
        self
    }

    /// The origins besides the card's whose `jku` may be fetched, when
    /// `jku` keys are trusted at all.
    pub(crate) fn jku_origins(&self) -> Option<&[Origin]> {
        self.jku.as_deref().filter(|_| self.mode != Mode::Ignore)
    }

    /// Checks the card JSON as received.
    pub fn check(&self, card: &Value) -> Result<(), A2aError> {
        self.check_with(card, &[])
    }

    /// [`check`](Self::check), trusting `fetched` (keys from `jku`) too.
    pub(crate) fn check_with(
        &self,
        card: &Value,
        fetched: &[VerifyingKey],
    ) -> Result<(), A2aError> {
        if self.mode == Mode::Ignore {
            return Ok(());
        }
        let all;
        let keys = if fetched.is_empty() {
            &self.keys
        } else {
            all = self.keys.iter().chain(fetched).cloned().collect::<Vec<_>>();
            &all
        };
        match verify_card(card, keys) {
            Ok(_) => Ok(()),
            Err(SigningError::Unsigned) if self.mode == Mode::IfSigned => Ok(()),
            Err(e) => Err(A2aError::new(ErrorKind::InvalidAgentResponse)
                .with_message(format!("the agent card was refused: {e} (signature check)"))),
        }
    }
}
