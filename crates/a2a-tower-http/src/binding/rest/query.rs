//! Percent-decoding of path segments and query strings, and typed reads of
//! query parameters (a2a-spec.md §7.2).
//!
//! Every failure is InvalidParams with a BadRequest field violation naming
//! the parameter; the description is fixed text, never the client's value.

use std::str::FromStr;

use crate::A2aError;
use crate::types::{TaskState, Timestamp};

/// Decodes `%XX` escapes (RFC 3986); with `plus_is_space`, `+` is a space
/// (`application/x-www-form-urlencoded`, how clients build query strings).
/// A malformed escape is kept as it is; `None` if the result is not UTF-8.
pub(crate) fn percent_decode(raw: &str, plus_is_space: bool) -> Option<String> {
    if !raw.contains(['%', '+']) {
        return Some(raw.to_owned());
    }
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// A decoded path segment; a segment that is not UTF-8 once decoded is
/// InvalidParams on `field`.
pub(crate) fn path_value(raw: &str, field: &str) -> Result<String, A2aError> {
    percent_decode(raw, false)
        .ok_or_else(|| A2aError::invalid_params(field, "is not UTF-8 once percent-decoded"))
}

/// The decoded `key=value` pairs of a query string, in order; a value that
/// is not UTF-8 once decoded is `None`.
#[derive(Debug, Default)]
pub(crate) struct Query(Vec<(String, Option<String>)>);

impl Query {
    /// Parses a query string; pairs whose key is not UTF-8 once decoded are
    /// dropped (no parameter of ours could match them), and a value that is
    /// not is kept as such, so a parameter of ours given one is refused
    /// (see [`get`](Self::get)) rather than taken as absent.
    pub(crate) fn parse(query: Option<&str>) -> Self {
        let pairs = query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .filter_map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                Some((percent_decode(k, true)?, percent_decode(v, true)))
            })
            .collect();
        Self(pairs)
    }

    /// The value of the parameter named by any of `names` (its camelCase
    /// JSON name, its proto name, aliases). Every parameter of the 1.0
    /// operations is singular: given more than once, it is InvalidParams;
    /// so is a value that is not UTF-8 once percent-decoded.
    pub(crate) fn get(&self, names: &[&str]) -> Result<Option<&str>, A2aError> {
        let mut found = self.0.iter().filter(|(k, _)| names.contains(&k.as_str()));
        let first = found.next().map(|(_, v)| v.as_deref());
        if found.next().is_some() {
            return Err(A2aError::invalid_params(names[0], "must be given once"));
        }
        match first {
            Some(None) => Err(A2aError::invalid_params(
                names[0],
                "is not UTF-8 once percent-decoded",
            )),
            Some(Some(v)) => Ok(Some(v)),
            None => Ok(None),
        }
    }

    /// A string parameter (empty when absent).
    pub(crate) fn string(&self, names: &[&str]) -> Result<String, A2aError> {
        Ok(self.get(names)?.unwrap_or_default().to_owned())
    }

    /// A decimal `int32`.
    pub(crate) fn int(&self, names: &[&str]) -> Result<Option<i32>, A2aError> {
        self.typed(names, "must be a decimal 32-bit integer", |v| {
            i32::from_str(v).ok()
        })
    }

    /// `true` or `false`.
    pub(crate) fn boolean(&self, names: &[&str]) -> Result<Option<bool>, A2aError> {
        self.typed(names, "must be true or false", |v| match v {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        })
    }

    /// A TaskState by its proto name (or number, as ProtoJSON parsers allow).
    pub(crate) fn state(&self, names: &[&str]) -> Result<Option<TaskState>, A2aError> {
        self.typed(names, "must be a TaskState name", |v| {
            TaskState::from_name(v).or_else(|| TaskState::from_number(i64::from_str(v).ok()?))
        })
    }

    /// An RFC 3339 timestamp.
    pub(crate) fn timestamp(&self, names: &[&str]) -> Result<Option<Timestamp>, A2aError> {
        self.typed(names, "must be an RFC 3339 timestamp", |v| {
            Timestamp::from_str(v).ok()
        })
    }

    fn typed<T>(
        &self,
        names: &[&str],
        description: &'static str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, A2aError> {
        match self.get(names)? {
            None => Ok(None),
            Some(v) => parse(v)
                .map(Some)
                .ok_or_else(|| A2aError::invalid_params(names[0], description)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%2Fb%3Ac", false).unwrap(), "a/b:c");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
        assert_eq!(percent_decode("a+b%2B", true).unwrap(), "a b+");
        assert_eq!(percent_decode("%E2%9C%93", false).unwrap(), "✓");
        // Malformed escapes are kept; truncated ones too; never a panic.
        assert_eq!(percent_decode("100%", false).unwrap(), "100%");
        assert_eq!(percent_decode("%zz%4", false).unwrap(), "%zz%4");
        assert_eq!(percent_decode("%4", false).unwrap(), "%4");
        assert!(percent_decode("%FF", false).is_none());
        assert!(path_value("%C3%28", "id").is_err());
    }

    #[test]
    fn typed_reads() {
        let q = Query::parse(Some(
            "pageSize=5&includeArtifacts=true&status=TASK_STATE_WORKING&x&contextId=a%2Cb,c",
        ));
        assert_eq!(q.int(&["pageSize"]).unwrap(), Some(5));
        assert_eq!(q.boolean(&["includeArtifacts"]).unwrap(), Some(true));
        assert_eq!(q.state(&["status"]).unwrap(), Some(TaskState::Working));
        assert_eq!(q.string(&["contextId"]).unwrap(), "a,b,c");
        assert_eq!(q.string(&["x"]).unwrap(), "");
        assert_eq!(q.int(&["historyLength"]).unwrap(), None);
        let bad = Query::parse(Some("pageSize=5x&pageSize=6"));
        let e = bad.int(&["pageSize"]).unwrap_err();
        assert_eq!(e.violations()[0].1, "must be given once");
        assert_eq!(
            Query::parse(Some("status=2")).state(&["status"]).unwrap(),
            Some(TaskState::Working)
        );
        // A value that is not UTF-8 once decoded is refused, not dropped;
        // an unknown parameter with one, or a key that is not, is ignored.
        let q = Query::parse(Some("pageToken=%00%ff&other=%ff&%ff=1"));
        let e = q.string(&["pageToken"]).unwrap_err();
        assert_eq!(
            e.violations()[0],
            (
                "pageToken".to_owned(),
                "is not UTF-8 once percent-decoded".to_owned()
            )
        );
        assert_eq!(q.string(&["contextId"]).unwrap(), "");
    }
}
