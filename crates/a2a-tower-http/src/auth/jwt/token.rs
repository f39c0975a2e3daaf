//! Checking one compact JWS token: signature, algorithm, issuer,
//! audience, expiry and not-before.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use super::layer::JwtConfig;
use crate::signing::Algorithm;

/// The claims of a verified bearer JWT, inserted into the request
/// extensions by [`JwtService`](super::JwtService): the principal.
#[derive(Debug, Clone, PartialEq)]
pub struct JwtClaims {
    claims: Map<String, Value>,
}

impl JwtClaims {
    /// The `sub` claim, if it is a string.
    pub fn subject(&self) -> Option<&str> {
        self.claims.get("sub").and_then(Value::as_str)
    }

    /// The `iss` claim (the layer's issuer).
    pub fn issuer(&self) -> Option<&str> {
        self.claims.get("iss").and_then(Value::as_str)
    }

    /// One claim by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// Every claim of the token.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }
}

/// Why a token was refused: the `error_description` of the challenge
/// (fixed texts; nothing from the token is echoed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Invalid {
    Malformed,
    Algorithm,
    Signature,
    Expired,
    NotYetValid,
    Issuer,
    Audience,
}

impl Invalid {
    pub(super) fn description(self) -> &'static str {
        match self {
            Self::Malformed => "malformed token",
            Self::Algorithm => "algorithm not accepted",
            Self::Signature => "signature does not verify",
            Self::Expired => "token expired",
            Self::NotYetValid => "token not yet valid",
            Self::Issuer => "wrong issuer",
            Self::Audience => "wrong audience",
        }
    }
}

fn json_object(segment: &str) -> Result<Map<String, Value>, Invalid> {
    let bytes = URL_SAFE_NO_PAD
        .decode(segment)
        .map_err(|_| Invalid::Malformed)?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(Invalid::Malformed),
    }
}

/// Seconds since the Unix epoch.
pub(super) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The claims of `token` if it passes every check of `config` at `now`.
pub(super) fn validate(config: &JwtConfig, token: &str, now: f64) -> Result<JwtClaims, Invalid> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Invalid::Malformed);
    };
    let header = json_object(h)?;
    // RFC 7515 §4.1.11: extensions we do not understand make it invalid.
    if header.contains_key("crit") {
        return Err(Invalid::Malformed);
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(Algorithm::from_name)
        .ok_or(Invalid::Algorithm)?;
    let kid = header.get("kid").and_then(Value::as_str);
    let signature = URL_SAFE_NO_PAD.decode(s).map_err(|_| Invalid::Malformed)?;
    let input = &token.as_bytes()[..h.len() + 1 + p.len()];
    let keys = config.keys.keys();
    let verified = keys.iter().any(|key| {
        key.algorithm() == alg
            && match (kid, key.kid()) {
                (Some(want), Some(have)) => want == have,
                _ => true,
            }
            && key.verify(input, &signature)
    });
    if !verified {
        return Err(Invalid::Signature);
    }
    let claims = json_object(p)?;
    let time = |name: &str| {
        claims
            .get(name)
            .map(|v| v.as_f64().ok_or(Invalid::Malformed))
    };
    let leeway = config.leeway.as_secs_f64();
    match time("exp") {
        None => return Err(Invalid::Malformed),
        Some(exp) if now >= exp? + leeway => return Err(Invalid::Expired),
        Some(_) => {}
    }
    if let Some(nbf) = time("nbf")
        && now + leeway < nbf?
    {
        return Err(Invalid::NotYetValid);
    }
    if claims.get("iss").and_then(Value::as_str) != Some(config.issuer.as_str()) {
        return Err(Invalid::Issuer);
    }
    let audience = config.audience.as_str();
    let aud_ok = match claims.get("aud") {
        Some(Value::String(a)) => a == audience,
        Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(audience)),
        _ => false,
    };
    if !aud_ok {
        return Err(Invalid::Audience);
    }
    Ok(JwtClaims { claims })
}
