//! Agent card signatures (a2a-spec.md §8.4): a JWS (RFC 7515) with a
//! detached payload, the RFC 8785 canonical form of the card without its
//! `signatures`.
//!
//! [`sign_card`] appends one signature by a [`SigningKey`] (ES256 on P-256,
//! RS256, or EdDSA on Ed25519; PEM PKCS#8 or a private JWK): its protected
//! header is `{"alg", "kid", "typ": "JOSE"}` and `jku` when the key has one.
//! The payload is the card as this crate serializes it, which already
//! follows §8.4.1's field-presence rules (defaults and empty optional lists
//! are left out, required fields always written).
//!
//! [`verify_card`] checks the card's JSON as received against trusted
//! [`VerifyingKey`]s (PEM SPKI, JWK or JWKS): only ES256, RS256 and EdDSA
//! are accepted (never `none` or an HMAC algorithm), the header's `alg`
//! must be the key's, and a header `kid` must name the key. One valid
//! signature is enough (several are allowed for key rotation). The payload
//! is the received JSON without `signatures`, so fields this crate does not
//! know are covered too; when that does not verify, the form a2a-sdk 1.3
//! (Python) signs is tried: the same JSON with every empty string, list and
//! object removed recursively (see CONFORMANCE.md).
//!
//! ```
//! use a2a_tower::signing::{SigningKey, sign_card, verify_card};
//! use a2a_tower::types::AgentCard;
//!
//! // An Ed25519 key as a private JWK (RFC 8037's example key).
//! let jwk = r#"{"kty":"OKP","crv":"Ed25519",
//!   "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
//!   "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
//! let key = SigningKey::from_text(jwk, "k1").unwrap();
//! let card = sign_card(&AgentCard::new("Echo", "Echoes", "1.0.0"), &key).unwrap();
//! let json = serde_json::to_value(&card).unwrap();
//! assert_eq!(verify_card(&json, &[key.verifying_key()]).unwrap(), "k1");
//!
//! let mut tampered = json.clone();
//! tampered["name"] = "Evil".into();
//! assert!(verify_card(&tampered, &[key.verifying_key()]).unwrap_err().to_string().contains("signature"));
//! ```

mod jcs;
mod key;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use crate::types::{AgentCard, AgentCardSignature};

pub use jcs::{NotCanonical, canonicalize};
pub use key::{Algorithm, SigningKey, VerifyingKey};

/// Why a card could not be signed or verified.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningError {
    /// A key could not be read.
    Key(String),
    /// The card has no signature.
    Unsigned,
    /// No signature of the card verifies with a trusted key.
    Invalid(String),
}

impl std::fmt::Display for SigningError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Key(why) => write!(f, "card signature key: {why}"),
            Self::Unsigned => f.write_str("the agent card has no signature"),
            Self::Invalid(why) => write!(f, "the agent card's signature does not verify: {why}"),
        }
    }
}

impl std::error::Error for SigningError {}

/// The payload a signature covers: `card` without `signatures`,
/// canonicalized.
fn payload(card: &Value) -> Result<String, SigningError> {
    let mut card = card.clone();
    if let Value::Object(m) = &mut card {
        m.remove("signatures");
    }
    canonicalize(&card).map_err(|e| SigningError::Invalid(e.to_string()))
}

/// `v` without empty strings, lists and objects, recursively: the form
/// a2a-sdk 1.3's signer canonicalizes.
fn stripped(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) => {
            let a: Vec<Value> = a.iter().filter_map(stripped).collect();
            (!a.is_empty()).then_some(Value::Array(a))
        }
        Value::Object(m) => {
            let m: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| stripped(v).map(|v| (k.clone(), v)))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        v => Some(v.clone()),
    }
}

/// `card` with one more signature, by `key`.
pub fn sign_card(card: &AgentCard, key: &SigningKey) -> Result<AgentCard, SigningError> {
    let value = serde_json::to_value(card).map_err(|e| SigningError::Invalid(e.to_string()))?;
    let payload = payload(&value)?;
    let mut header = json!({"alg": key.algorithm().name(), "kid": key.kid(), "typ": "JOSE"});
    if let Some(jku) = key.jku() {
        header["jku"] = jku.into();
    }
    let protected = URL_SAFE_NO_PAD.encode(canonicalize(&header).expect("a header of strings"));
    let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
    let signature = URL_SAFE_NO_PAD.encode(key.sign(input.as_bytes())?);
    let mut card = card.clone();
    card.signatures.push(AgentCardSignature {
        protected,
        signature,
        header: None,
    });
    Ok(card)
}

/// The protected header of one signature: its `alg`, `kid` and `jku`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedHeader {
    /// The algorithm, one of the accepted three.
    pub alg: Algorithm,
    /// The key id, if given.
    pub kid: Option<String>,
    /// Where the key set is published, if given.
    pub jku: Option<String>,
}

impl ProtectedHeader {
    /// The header of `signature`: refused when it is not base64url JSON or
    /// its `alg` is not ES256, RS256 or EdDSA.
    pub fn of(signature: &AgentCardSignature) -> Result<Self, SigningError> {
        let bad = |why: &str| SigningError::Invalid(why.to_owned());
        let bytes = URL_SAFE_NO_PAD
            .decode(signature.protected.trim_end_matches('='))
            .map_err(|_| bad("a protected header that is not base64url"))?;
        let header: Value = serde_json::from_slice(&bytes)
            .map_err(|_| bad("a protected header that is not JSON"))?;
        let alg = header["alg"].as_str().unwrap_or_default();
        let alg = Algorithm::from_name(alg)
            .ok_or_else(|| bad(&format!("the algorithm {alg:?} is not accepted")))?;
        let text = |k: &str| header[k].as_str().map(str::to_owned);
        Ok(Self {
            alg,
            kid: text("kid"),
            jku: text("jku"),
        })
    }
}

/// Verifies the card JSON `card` (as received) against `keys`: the kid of
/// the key whose signature verifies, or why none does.
pub fn verify_card(card: &Value, keys: &[VerifyingKey]) -> Result<String, SigningError> {
    let signatures: Vec<AgentCardSignature> = card
        .get("signatures")
        .map(|s| serde_json::from_value(s.clone()))
        .transpose()
        .map_err(|_| SigningError::Invalid("malformed signatures".into()))?
        .unwrap_or_default();
    if signatures.is_empty() {
        return Err(SigningError::Unsigned);
    }
    let mut payloads = vec![payload(card)?];
    let mut without = card.clone();
    if let Value::Object(m) = &mut without {
        m.remove("signatures");
    }
    if let Some(s) = stripped(&without) {
        let s = canonicalize(&s).map_err(|e| SigningError::Invalid(e.to_string()))?;
        if s != payloads[0] {
            payloads.push(s);
        }
    }
    let mut why = String::from("no trusted key matches");
    for s in &signatures {
        let header = match ProtectedHeader::of(s) {
            Ok(h) => h,
            Err(SigningError::Invalid(w)) => {
                why = w;
                continue;
            }
            Err(e) => return Err(e),
        };
        let Ok(sig) = URL_SAFE_NO_PAD.decode(s.signature.trim_end_matches('=')) else {
            why = "a signature that is not base64url".into();
            continue;
        };
        let candidates = keys.iter().filter(|k| {
            k.algorithm() == header.alg
                && match (&header.kid, k.kid()) {
                    (Some(want), Some(have)) => want == have,
                    _ => true,
                }
        });
        for key in candidates {
            for p in &payloads {
                let input = format!("{}.{}", s.protected, URL_SAFE_NO_PAD.encode(p));
                if key.verify(input.as_bytes(), &sig) {
                    return Ok(header
                        .kid
                        .clone()
                        .or_else(|| key.kid().map(str::to_owned))
                        .unwrap_or_default());
                }
            }
            why = format!(
                "the signature by {:?} does not match the card",
                header.kid.as_deref().unwrap_or("")
            );
        }
    }
    Err(SigningError::Invalid(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED_JWK: &str = r#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;

    fn ec_key() -> SigningKey {
        let rng = ring::rand::SystemRandom::new();
        let doc = ring::signature::EcdsaKeyPair::generate_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &rng,
        )
        .unwrap();
        SigningKey::from_pkcs8(doc.as_ref(), "ec").unwrap()
    }

    // §8.4.1's example card: what is signed is the canonical form without
    // the default-valued and empty optional fields.
    #[test]
    fn the_specs_example_payload() {
        let card: Value = serde_json::from_str(
            r#"{"name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},"skills":[]}"#,
        )
        .unwrap();
        assert_eq!(
            payload(&card).unwrap(),
            r#"{"capabilities":{"extensions":[],"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
        assert_eq!(
            canonicalize(&stripped(&card).unwrap()).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}"#
        );
    }

    #[test]
    fn every_algorithm_signs_and_verifies_and_tampering_fails() {
        let ed = SigningKey::from_text(ED_JWK, "ed").unwrap();
        assert_eq!(ed.algorithm(), Algorithm::EdDsa);
        let ec = ec_key();
        for key in [ed, ec] {
            let card = sign_card(&AgentCard::new("A", "B", "1.0.0"), &key).unwrap();
            let json = serde_json::to_value(&card).unwrap();
            assert_eq!(
                verify_card(&json, &[key.verifying_key()]).unwrap(),
                key.kid()
            );
            let mut t = json.clone();
            t["version"] = "2.0.0".into();
            assert!(matches!(
                verify_card(&t, &[key.verifying_key()]),
                Err(SigningError::Invalid(_))
            ));
            let header = ProtectedHeader::of(&card.signatures[0]).unwrap();
            assert_eq!(header.alg, key.algorithm());
        }
    }

    #[test]
    fn unknown_algorithms_other_keys_and_unsigned_cards_are_refused() {
        let key = ec_key();
        let card = sign_card(&AgentCard::new("A", "B", "1.0.0"), &key).unwrap();
        let mut json = serde_json::to_value(&card).unwrap();
        let other = SigningKey::from_text(ED_JWK, "ec").unwrap();
        assert!(verify_card(&json, &[other.verifying_key()]).is_err());
        for alg in ["none", "HS256"] {
            let header = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{alg}","kid":"ec"}}"#));
            json["signatures"][0]["protected"] = header.into();
            let err = verify_card(&json, &[key.verifying_key()]).unwrap_err();
            assert!(err.to_string().contains("not accepted"), "{err}");
        }
        let unsigned = serde_json::to_value(AgentCard::new("A", "B", "1.0.0")).unwrap();
        assert_eq!(
            verify_card(&unsigned, &[key.verifying_key()]),
            Err(SigningError::Unsigned)
        );
    }

    #[test]
    fn public_keys_from_jwk_and_jwks() {
        let jwks = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"ed","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
        let keys = VerifyingKey::parse_all(jwks, None).unwrap();
        let key = SigningKey::from_text(ED_JWK, "ed").unwrap();
        let card = sign_card(&AgentCard::new("A", "B", "1.0.0"), &key).unwrap();
        let json = serde_json::to_value(&card).unwrap();
        assert_eq!(verify_card(&json, &keys).unwrap(), "ed");
        let wrong_alg = r#"{"kty":"OKP","crv":"Ed25519","alg":"HS256","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        assert!(VerifyingKey::parse_all(wrong_alg, None).is_err());
    }
}
