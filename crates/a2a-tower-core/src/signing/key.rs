//! Signing and verifying keys: PEM (PKCS#8, SPKI), JWK and JWKS, for ES256,
//! RS256 and EdDSA (Ed25519) on `ring`.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{self as sig, KeyPair as _};
use serde_json::Value;

use super::SigningError;

/// A JWS algorithm a card signature may use. Nothing else is accepted
/// (never `none`, never an HMAC algorithm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (2048 to 8192 bits).
    Rs256,
    /// Ed25519.
    EdDsa,
}

impl Algorithm {
    /// The JWS `alg` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Rs256 => "RS256",
            Self::EdDsa => "EdDSA",
        }
    }

    /// The algorithm of a JWS `alg` name, if it is one of the three.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(Self::Es256),
            "RS256" => Some(Self::Rs256),
            "EdDSA" => Some(Self::EdDsa),
            _ => None,
        }
    }
}

enum Pair {
    Ec(sig::EcdsaKeyPair),
    Rsa(sig::RsaKeyPair),
    Ed(sig::Ed25519KeyPair),
}

/// A private key that signs cards.
pub struct SigningKey {
    pair: Pair,
    kid: String,
    jku: Option<String>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.algorithm().name())
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

fn bad(why: impl Into<String>) -> SigningError {
    SigningError::Key(why.into())
}

/// The DER of the first PEM block labelled `label` (any label when `None`).
fn pem_block(text: &str) -> Result<(String, Vec<u8>), SigningError> {
    let start = text
        .find("-----BEGIN ")
        .ok_or_else(|| bad("no PEM block"))?;
    let rest = &text[start + 11..];
    let end_label = rest.find("-----").ok_or_else(|| bad("no PEM block"))?;
    let label = rest[..end_label].to_owned();
    let body_start = end_label + 5;
    let end = rest
        .find("-----END ")
        .ok_or_else(|| bad("an unterminated PEM block"))?;
    let body: String = rest[body_start..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = STANDARD
        .decode(body)
        .map_err(|_| bad("PEM body is not base64"))?;
    Ok((label, der))
}

fn b64(v: &Value, field: &str) -> Result<Vec<u8>, SigningError> {
    let text = v[field]
        .as_str()
        .ok_or_else(|| bad(format!("JWK has no {field}")))?;
    URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|_| bad(format!("JWK {field} is not base64url")))
}

impl SigningKey {
    /// A key from a PEM PKCS#8 private key (`-----BEGIN PRIVATE KEY-----`)
    /// or a private JWK (`EC` P-256, `OKP` Ed25519; `kid` taken from it),
    /// signing with `kid`.
    pub fn from_text(text: &str, kid: impl Into<String>) -> Result<Self, SigningError> {
        let kid = kid.into();
        if text.trim_start().starts_with('{') {
            let jwk: Value =
                serde_json::from_str(text).map_err(|_| bad("a JWK is a JSON object"))?;
            let kid = jwk["kid"].as_str().map_or(kid, str::to_owned);
            return Self::from_jwk(&jwk, kid);
        }
        let (label, der) = pem_block(text)?;
        if label != "PRIVATE KEY" {
            return Err(bad(format!(
                "a PEM {label} is not a PKCS#8 private key (convert it with `openssl pkcs8 -topk8 -nocrypt`)"
            )));
        }
        Self::from_pkcs8(&der, kid)
    }

    /// A key from PKCS#8 DER (EC P-256, RSA or Ed25519).
    pub fn from_pkcs8(der: &[u8], kid: impl Into<String>) -> Result<Self, SigningError> {
        let rng = SystemRandom::new();
        let pair = if let Ok(k) =
            sig::EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
        {
            Pair::Ec(k)
        } else if let Ok(k) = sig::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            Pair::Ed(k)
        } else if let Ok(k) = sig::RsaKeyPair::from_pkcs8(der) {
            Pair::Rsa(k)
        } else {
            return Err(bad("not an EC P-256, RSA or Ed25519 PKCS#8 private key"));
        };
        Ok(Self {
            pair,
            kid: kid.into(),
            jku: None,
        })
    }

    fn from_jwk(jwk: &Value, kid: String) -> Result<Self, SigningError> {
        let pair = match (jwk["kty"].as_str(), jwk["crv"].as_str()) {
            (Some("EC"), Some("P-256")) => {
                let mut public = vec![4u8];
                public.extend(b64(jwk, "x")?);
                public.extend(b64(jwk, "y")?);
                Pair::Ec(
                    sig::EcdsaKeyPair::from_private_key_and_public_key(
                        &sig::ECDSA_P256_SHA256_FIXED_SIGNING,
                        &b64(jwk, "d")?,
                        &public,
                        &SystemRandom::new(),
                    )
                    .map_err(|_| bad("not a valid P-256 key"))?,
                )
            }
            (Some("OKP"), Some("Ed25519")) => Pair::Ed(
                sig::Ed25519KeyPair::from_seed_and_public_key(&b64(jwk, "d")?, &b64(jwk, "x")?)
                    .map_err(|_| bad("not a valid Ed25519 key"))?,
            ),
            _ => {
                return Err(bad(
                    "a private JWK must be EC P-256 or OKP Ed25519 (RSA: use PEM)",
                ));
            }
        };
        Ok(Self {
            pair,
            kid,
            jku: None,
        })
    }

    /// The key with a `jku` (where its JWKS is published) in each
    /// signature's protected header.
    #[must_use]
    pub fn with_jku(mut self, jku: impl Into<String>) -> Self {
        self.jku = Some(jku.into());
        self
    }

    /// The key's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self.pair {
            Pair::Ec(_) => Algorithm::Es256,
            Pair::Rsa(_) => Algorithm::Rs256,
            Pair::Ed(_) => Algorithm::EdDsa,
        }
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The `jku`, if set.
    pub fn jku(&self) -> Option<&str> {
        self.jku.as_deref()
    }

    /// The public half, to pin in a client.
    pub fn verifying_key(&self) -> VerifyingKey {
        let (alg, public) = match &self.pair {
            Pair::Ec(k) => (Algorithm::Es256, k.public_key().as_ref().to_vec()),
            Pair::Rsa(k) => (Algorithm::Rs256, k.public_key().as_ref().to_vec()),
            Pair::Ed(k) => (Algorithm::EdDsa, k.public_key().as_ref().to_vec()),
        };
        VerifyingKey {
            alg,
            public: Public::Der(public),
            kid: Some(self.kid.clone()),
        }
    }

    pub(crate) fn sign(&self, input: &[u8]) -> Result<Vec<u8>, SigningError> {
        let rng = SystemRandom::new();
        match &self.pair {
            Pair::Ec(k) => k
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| bad("ECDSA signing failed")),
            Pair::Ed(k) => Ok(k.sign(input).as_ref().to_vec()),
            Pair::Rsa(k) => {
                let mut out = vec![0; k.public().modulus_len()];
                k.sign(&sig::RSA_PKCS1_SHA256, &rng, input, &mut out)
                    .map_err(|_| bad("RSA signing failed"))?;
                Ok(out)
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Public {
    /// ring's form: the EC point, the Ed25519 bytes, or RSAPublicKey DER.
    Der(Vec<u8>),
    /// An RSA key from a JWK: modulus and exponent.
    RsaParts { n: Vec<u8>, e: Vec<u8> },
}

/// A public key that verifies card signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyingKey {
    alg: Algorithm,
    public: Public,
    kid: Option<String>,
}

const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

/// One DER element at the start of `der`: its tag, contents and the rest.
fn der_next(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&len0, mut rest) = rest.split_first()?;
    let len = if len0 < 0x80 {
        usize::from(len0)
    } else {
        let n = usize::from(len0 & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |a, b| (a << 8) | usize::from(*b));
        rest = &rest[n..];
        len
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

impl VerifyingKey {
    /// Every key in `text`: a PEM public key (`-----BEGIN PUBLIC KEY-----`,
    /// SPKI), a JWK, or a JWKS (`{"keys": [...]}`). `kid` names a key that
    /// has none of its own (a PEM file's name).
    pub fn parse_all(text: &str, kid: Option<&str>) -> Result<Vec<Self>, SigningError> {
        if text.trim_start().starts_with('{') {
            let v: Value = serde_json::from_str(text).map_err(|_| bad("not JSON"))?;
            return match v.get("keys").and_then(Value::as_array) {
                Some(keys) => keys.iter().map(|k| Self::from_jwk(k, kid)).collect(),
                None => Ok(vec![Self::from_jwk(&v, kid)?]),
            };
        }
        let (label, der) = pem_block(text)?;
        if label != "PUBLIC KEY" {
            return Err(bad(format!("a PEM {label} is not a public key")));
        }
        let mut key = Self::from_spki(&der)?;
        key.kid = kid.map(str::to_owned);
        Ok(vec![key])
    }

    /// A key from SubjectPublicKeyInfo DER.
    pub fn from_spki(der: &[u8]) -> Result<Self, SigningError> {
        let malformed = || bad("malformed SubjectPublicKeyInfo");
        let (_, spki, _) = der_next(der).ok_or_else(malformed)?;
        let (_, alg_id, rest) = der_next(spki).ok_or_else(malformed)?;
        let (_, bits, _) = der_next(rest).ok_or_else(malformed)?;
        let (_, oid, params) = der_next(alg_id).ok_or_else(malformed)?;
        let public = bits.get(1..).ok_or_else(malformed)?.to_vec();
        let alg = if oid == OID_EC {
            let (_, curve, _) = der_next(params).ok_or_else(malformed)?;
            if curve != OID_P256 {
                return Err(bad("an EC key that is not P-256"));
            }
            Algorithm::Es256
        } else if oid == OID_RSA {
            Algorithm::Rs256
        } else if oid == OID_ED25519 {
            Algorithm::EdDsa
        } else {
            return Err(bad("not an EC P-256, RSA or Ed25519 public key"));
        };
        Ok(Self {
            alg,
            public: Public::Der(public),
            kid: None,
        })
    }

    /// A key from a public JWK; `kid` when the JWK has none.
    pub fn from_jwk(jwk: &Value, kid: Option<&str>) -> Result<Self, SigningError> {
        let (alg, public) = match (jwk["kty"].as_str(), jwk["crv"].as_str()) {
            (Some("EC"), Some("P-256")) => {
                let mut p = vec![4u8];
                p.extend(b64(jwk, "x")?);
                p.extend(b64(jwk, "y")?);
                (Algorithm::Es256, Public::Der(p))
            }
            (Some("OKP"), Some("Ed25519")) => (Algorithm::EdDsa, Public::Der(b64(jwk, "x")?)),
            (Some("RSA"), _) => (
                Algorithm::Rs256,
                Public::RsaParts {
                    n: b64(jwk, "n")?,
                    e: b64(jwk, "e")?,
                },
            ),
            _ => return Err(bad("a JWK must be EC P-256, OKP Ed25519 or RSA")),
        };
        if let Some(a) = jwk["alg"].as_str()
            && Algorithm::from_name(a) != Some(alg)
        {
            return Err(bad(format!("the JWK's alg {a} does not fit its key")));
        }
        Ok(Self {
            alg,
            public,
            kid: jwk["kid"].as_str().or(kid).map(str::to_owned),
        })
    }

    /// The key's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id, if known.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// Whether `signature` over `input` is this key's (a JWS signature:
    /// ECDSA as the fixed-width `r || s`), as a card's or a JWT's.
    pub fn verify(&self, input: &[u8], signature: &[u8]) -> bool {
        let alg: &dyn sig::VerificationAlgorithm = match self.alg {
            Algorithm::Es256 => &sig::ECDSA_P256_SHA256_FIXED,
            Algorithm::Rs256 => &sig::RSA_PKCS1_2048_8192_SHA256,
            Algorithm::EdDsa => &sig::ED25519,
        };
        match &self.public {
            Public::Der(p) => sig::UnparsedPublicKey::new(alg, p)
                .verify(input, signature)
                .is_ok(),
            Public::RsaParts { n, e } => sig::RsaPublicKeyComponents { n, e }
                .verify(&sig::RSA_PKCS1_2048_8192_SHA256, input, signature)
                .is_ok(),
        }
    }
}
