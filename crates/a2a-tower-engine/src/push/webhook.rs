//! A webhook as the sender uses it: a config's URL and headers, checked once
//! per delivery, the POST request of one hop, and the same-origin redirect
//! rule.
//!
//! The headers (A2A spec §9): `Content-Type: application/a2a+json`;
//! `Authorization: <scheme> <credentials>` when the config has
//! authentication; the token in `A2A-Notification-Token` (the spec's and
//! a2a-go's name) and in `X-A2A-Notification-Token` (a2a-python's and
//! a2a-js's). Credentials and token are marked sensitive.

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, LOCATION, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri};
use http_body_util::Full;

use super::error::PushError;
use crate::types::TaskPushNotificationConfig;

/// The content type of a push body.
pub(crate) const CONTENT_TYPE_A2A: &str = "application/a2a+json";
/// The spec's token header.
pub(crate) const TOKEN: HeaderName = HeaderName::from_static("a2a-notification-token");
/// The token header of the Python and JS SDKs.
pub(crate) const X_TOKEN: HeaderName = HeaderName::from_static("x-a2a-notification-token");

/// A secret sealed by `log::seal` (its marker, a control character, is
/// never part of an accepted config).
fn sealed(config: &TaskPushNotificationConfig) -> bool {
    const SEALED: &str = "\u{1}a2a-sealed.";
    config.token.starts_with(SEALED)
        || config
            .authentication
            .as_ref()
            .is_some_and(|a| a.credentials.starts_with(SEALED))
}

/// A config's webhook, ready to be sent to.
pub(crate) struct Webhook {
    pub(crate) uri: Uri,
    headers: HeaderMap,
}

impl Webhook {
    /// Checks `config` and builds its headers. Errors name what is wrong,
    /// never the value.
    pub(crate) fn new(config: &TaskPushNotificationConfig) -> Result<Self, PushError> {
        let uri: Uri = config
            .url
            .parse()
            .map_err(|_| PushError::invalid("the webhook URL is not a valid URL"))?;
        if origin(&uri).is_none() {
            return Err(PushError::invalid(
                "the webhook URL is not an absolute http(s) URL without user info",
            ));
        }
        if sealed(config) {
            return Err(PushError::invalid(
                "the config's secrets are sealed and this store opens them with no key \
                 (a lost push secret key: TaskStore::seal_push_secrets)",
            ));
        }
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_A2A));
        if let Some(auth) = &config.authentication
            && !auth.credentials.is_empty()
        {
            if auth.scheme.is_empty() || !auth.scheme.bytes().all(is_tchar) {
                return Err(PushError::invalid(
                    "the authentication scheme is not an HTTP auth scheme",
                ));
            }
            let value = format!("{} {}", auth.scheme, auth.credentials);
            headers.insert(
                AUTHORIZATION,
                sensitive(&value, "the credentials are not a valid header value")?,
            );
        }
        if !config.token.is_empty() {
            let token = sensitive(&config.token, "the token is not a valid header value")?;
            headers.insert(TOKEN, token.clone());
            headers.insert(X_TOKEN, token);
        }
        Ok(Self { uri, headers })
    }

    /// The POST of `body` to `uri` (the webhook's URL or a redirect target
    /// on its origin).
    pub(crate) fn request(
        &self,
        uri: Uri,
        body: Bytes,
        user_agent: &HeaderValue,
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = uri;
        let headers = req.headers_mut();
        headers.clone_from(&self.headers);
        headers.insert(USER_AGENT, user_agent.clone());
        // The delivery's span, a child of the commit's: the receiver sees
        // the trace that caused the event.
        a2a_tower_core::telemetry::inject(headers);
        req
    }
}

/// A header value marked sensitive; `err` says which is invalid.
fn sensitive(value: &str, err: &'static str) -> Result<HeaderValue, PushError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| PushError::invalid(err))?;
    v.set_sensitive(true);
    Ok(v)
}

/// RFC 9110 `tchar`, the characters of an auth scheme.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `(scheme, lower-cased host, port)` of an absolute `http`/`https` URI
/// without user info; `None` for anything else.
pub(crate) fn origin(uri: &Uri) -> Option<(&str, String, u16)> {
    let scheme = match uri.scheme_str()? {
        s if s.eq_ignore_ascii_case("http") => ("http", 80),
        s if s.eq_ignore_ascii_case("https") => ("https", 443),
        _ => return None,
    };
    let auth = uri.authority()?;
    if auth.as_str().contains('@') || auth.host().is_empty() {
        return None;
    }
    let port = uri.port_u16().unwrap_or(scheme.1);
    Some((scheme.0, auth.host().to_ascii_lowercase(), port))
}

/// Why a redirect is not followed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// No usable `Location`.
    Malformed,
    /// The target is on another origin (or not `http`/`https`).
    CrossOrigin,
}

/// The target of a redirect from `from` to `location`, when it stays on
/// `from`'s origin: an absolute URL, a scheme-relative `//host/…`, an
/// absolute path, or a relative path (resolved against `from`'s directory).
pub(crate) fn redirect(from: &Uri, location: Option<&HeaderValue>) -> Result<Uri, Redirect> {
    let loc = location
        .and_then(|l| l.to_str().ok())
        .filter(|l| !l.is_empty())
        .ok_or(Redirect::Malformed)?;
    let scheme = from.scheme_str().ok_or(Redirect::Malformed)?;
    let target: Uri = if let Some(rest) = loc.strip_prefix("//") {
        format!("{scheme}://{rest}")
            .parse()
            .map_err(|_| Redirect::Malformed)
    } else if loc.contains("://") || !loc.starts_with(['/', '?', '.']) && loc.contains(':') {
        loc.parse().map_err(|_| Redirect::Malformed)
    } else {
        let path = if loc.starts_with('/') {
            loc.to_owned()
        } else {
            let base = from.path();
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{}{loc}", if dir.is_empty() { "/" } else { dir })
        };
        let mut parts = from.clone().into_parts();
        parts.path_and_query = Some(path.parse().map_err(|_| Redirect::Malformed)?);
        Uri::from_parts(parts).map_err(|_| Redirect::Malformed)
    }?;
    match (origin(from), origin(&target)) {
        (Some(a), Some(b)) if a == b => Ok(target),
        _ => Err(Redirect::CrossOrigin),
    }
}

/// The `Location` of a redirect answer.
pub(crate) fn location(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers.get(LOCATION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::PushErrorKind;
    use crate::types::AuthenticationInfo;

    fn config(url: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            url: url.into(),
            ..Default::default()
        }
    }

    #[test]
    fn headers_of_a_config() {
        let mut c = config("https://hooks.example.com/a2a?x=1");
        c.token = "tok-1".into();
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "secret-2".into(),
        });
        let hook = Webhook::new(&c).unwrap();
        let ua = HeaderValue::from_static("ua");
        let req = hook.request(hook.uri.clone(), Bytes::from_static(b"{}"), &ua);
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri(), "https://hooks.example.com/a2a?x=1");
        let h = req.headers();
        assert_eq!(h[CONTENT_TYPE], "application/a2a+json");
        assert_eq!(h[AUTHORIZATION], "Bearer secret-2");
        assert_eq!(h["a2a-notification-token"], "tok-1");
        assert_eq!(h["x-a2a-notification-token"], "tok-1");
        assert_eq!(h[USER_AGENT], "ua");
        assert!(h[AUTHORIZATION].is_sensitive() && h[TOKEN].is_sensitive());
        let dbg = format!("{h:?}");
        assert!(!dbg.contains("secret-2") && !dbg.contains("tok-1"), "{dbg}");
    }

    #[test]
    fn no_token_no_auth_no_headers() {
        let mut c = config("http://h/");
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: String::new(),
        });
        let hook = Webhook::new(&c).unwrap();
        for name in [AUTHORIZATION, TOKEN, X_TOKEN] {
            assert!(!hook.headers.contains_key(&name), "{name}");
        }
    }

    #[test]
    fn invalid_configs_never_echo_their_values() {
        let auth = |scheme: &str, credentials: &str| AuthenticationInfo {
            scheme: scheme.into(),
            credentials: credentials.into(),
        };
        let mut cases = vec![];
        for url in [
            "",
            "/relative",
            "ftp://h/",
            "http://user:pw@h/",
            "http://",
            "h:80",
        ] {
            cases.push(config(url));
        }
        let mut c = config("http://h/");
        c.token = "bad\ntoken".into();
        cases.push(c);
        for a in [
            auth("", "s3cr3t"),
            auth("Bad Scheme", "s3cr3t"),
            auth("Bearer", "x\r\ny"),
        ] {
            let mut c = config("http://h/");
            c.authentication = Some(a);
            cases.push(c);
        }
        for c in cases {
            let err = Webhook::new(&c).err().expect("invalid");
            assert_eq!(err.kind(), PushErrorKind::Invalid);
            let text = format!("{err} {err:?}");
            for secret in ["user:pw", "bad\ntoken", "s3cr3t", "x\r\ny"] {
                assert!(!text.contains(secret), "{text}");
            }
        }
    }

    #[test]
    fn redirects_stay_on_the_origin() {
        let from: Uri = "http://h.example:8080/hooks/a?q=1".parse().unwrap();
        let go = |l: &str| redirect(&from, Some(&HeaderValue::from_str(l).unwrap()));
        let ok = |l: &str| go(l).unwrap().to_string();
        assert_eq!(ok("/other"), "http://h.example:8080/other");
        assert_eq!(ok("b"), "http://h.example:8080/hooks/b");
        assert_eq!(ok("http://H.example:8080/x"), "http://H.example:8080/x");
        assert_eq!(ok("//h.example:8080/y"), "http://h.example:8080/y");
        for cross in [
            "http://h.example/x",
            "https://h.example:8080/x",
            "http://other.example:8080/x",
            "//other.example:8080/x",
            "http://u@h.example:8080/x",
            "ftp://h.example:8080/x",
            "mailto:a@h.example",
        ] {
            assert_eq!(go(cross), Err(Redirect::CrossOrigin), "{cross}");
        }
        assert_eq!(redirect(&from, None), Err(Redirect::Malformed));
        assert_eq!(go(""), Err(Redirect::Malformed));
        let default: Uri = "https://h/x".parse().unwrap();
        let same = HeaderValue::from_static("https://h:443/y");
        assert!(redirect(&default, Some(&same)).is_ok(), "the default port");
    }
}
