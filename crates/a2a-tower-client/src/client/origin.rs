//! [`Origin`]: `scheme://host[:port]`, the unit of the client's origin
//! policy (card fetches and redirects stay on the card's origin; RPC
//! interfaces must be on it or on an allowed origin; credentials never cross).
//!
//! ```
//! use a2a_tower::client::Origin;
//! let o: Origin = "https://agents.example.com".parse().unwrap();
//! assert_eq!(o.to_string(), "https://agents.example.com:443");
//! let u: http::Uri = "https://agents.example.com:443/a2a".parse().unwrap();
//! assert_eq!(Origin::of(&u), Some(o));
//! assert!("https://agents.example.com/path".parse::<Origin>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use http::Uri;

use crate::ConfigError;

/// A web origin: scheme (`http` or `https`), lower-cased host, and port (the
/// scheme's default when not written).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an absolute `http`/`https` URI.
    pub fn of(uri: &Uri) -> Option<Self> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let auth = uri.authority()?;
        if auth.as_str().contains('@') || auth.host().is_empty() {
            return None;
        }
        // The text after the host: nothing, or `:` and a valid port.
        let rest = auth.as_str().strip_prefix(auth.host())?;
        let port = match rest.strip_prefix(':') {
            None if rest.is_empty() => default,
            Some(p) => p.parse().ok()?,
            None => return None,
        };
        Some(Self {
            scheme,
            host: auth.host().to_ascii_lowercase(),
            port,
        })
    }

    /// The scheme.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

impl FromStr for Origin {
    type Err = ConfigError;

    /// Parses exactly `scheme://host[:port]`: no path (not even `/`), query,
    /// fragment or user info.
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError::new(format!("{s:?} is not an origin (scheme://host[:port])"));
        let uri: Uri = s.parse().map_err(|_| bad())?;
        let (_, rest) = s.split_once("://").ok_or_else(bad)?;
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return Err(bad());
        }
        Self::of(&uri).ok_or_else(bad)
    }
}

/// Parses an allow-list of origins; any malformed entry is a [`ConfigError`].
pub(crate) fn parse_all<I, T>(entries: I) -> Result<Vec<Origin>, ConfigError>
where
    I: IntoIterator<Item = T>,
    T: AsRef<str>,
{
    entries.into_iter().map(|e| e.as_ref().parse()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_forms() {
        let ok = parse_all([
            "http://a.example",
            "http://a.example:80",
            "HTTPS://A.Example:8443",
            "http://127.0.0.1:9",
            "http://[::1]:8080",
        ])
        .unwrap();
        assert_eq!(ok[0], ok[1], "the default port is implied");
        assert_eq!(ok[2].to_string(), "https://a.example:8443");
        assert_eq!(ok[4].to_string(), "http://[::1]:8080");
        for bad in [
            "",
            "a.example",
            "http://",
            "http://a.example/",
            "http://a.example/x",
            "http://a.example?q",
            "http://a.example#f",
            "http://u@a.example",
            "ftp://a.example",
            "http://a.example:99999",
            "http://a b",
        ] {
            assert!(parse_all([bad]).is_err(), "{bad:?}");
        }
        assert!(parse_all(["http://ok.example", "nope"]).is_err());
    }

    #[test]
    fn origins_of_uris() {
        let o = |s: &str| Origin::of(&s.parse().unwrap());
        assert_eq!(o("http://h/x"), o("http://H:80/y"));
        assert_ne!(o("http://h/"), o("https://h/"));
        assert_ne!(o("http://h:1/"), o("http://h:2/"));
        assert_eq!(o("/relative"), None);
        assert_eq!(o("http://user@h/"), None);
    }
}
