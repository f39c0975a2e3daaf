//! [`PathTemplate`]: the path of an extension method's HTTP+JSON route,
//! relative to the interface prefix and an optional tenant segment.
//!
//! A template is `/`-separated segments, each a literal (`queue`,
//! `queue:reorder`) or a capture `{name}`, optionally followed by a literal
//! suffix (`{contextId}:reorder`, as the core's `/tasks/{id}:cancel`).
//! Literals are matched against the raw (still percent-encoded) request
//! segment; a capture matches a non-empty raw segment ending with its suffix.

use crate::ConfigError;

/// The most path segments a request below the interface prefix may have
/// (a tenant segment plus a route's segments).
pub(crate) const MAX_SEGMENTS: usize = 16;

/// One segment of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Capture { name: String, suffix: String },
}

impl Segment {
    /// Some request segment matches both.
    fn overlaps(&self, other: &Self) -> bool {
        use Segment::*;
        match (self, other) {
            (Literal(a), Literal(b)) => a == b,
            (Capture { suffix, .. }, Literal(l)) | (Literal(l), Capture { suffix, .. }) => {
                l.len() > suffix.len() && l.ends_with(suffix.as_str())
            }
            (Capture { suffix: a, .. }, Capture { suffix: b, .. }) => {
                a.ends_with(b.as_str()) || b.ends_with(a.as_str())
            }
        }
    }
}

/// A parsed, validated path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathTemplate {
    text: String,
    segments: Vec<Segment>,
}

/// A character a literal or suffix may not hold: template syntax, and what
/// a raw request segment never holds unescaped.
fn reserved(c: char) -> bool {
    matches!(c, '{' | '}' | '%' | '?' | '#') || c.is_whitespace() || c.is_control()
}

impl PathTemplate {
    /// Parses `text` (a leading `/`, a trailing `/` ignored). Captures are
    /// named with ASCII letters, digits and `_`, once each; `tenant` is the
    /// tenant segment's name and may not be captured.
    pub(crate) fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad = |why: &str| ConfigError::new(format!("extension route {text:?}: {why}"));
        let trimmed = text
            .strip_prefix('/')
            .ok_or_else(|| bad("must start with /"))?;
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Err(bad("must have a segment"));
        }
        let mut segments = Vec::new();
        for seg in trimmed.split('/') {
            if seg.is_empty() {
                return Err(bad("has an empty segment"));
            }
            let segment = match seg.strip_prefix('{') {
                None if seg.contains(reserved) => {
                    return Err(bad("a literal holds {, }, %, ?, # or a space"));
                }
                None => Segment::Literal(seg.to_owned()),
                Some(rest) => {
                    let (name, suffix) = rest
                        .split_once('}')
                        .ok_or_else(|| bad("has an unclosed {"))?;
                    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
                    if name.is_empty() || !name.chars().all(ident) {
                        return Err(bad("a capture name is not [A-Za-z0-9_]+"));
                    }
                    if suffix.contains(reserved) {
                        return Err(bad("a capture suffix holds {, }, %, ?, # or a space"));
                    }
                    Segment::Capture {
                        name: name.to_owned(),
                        suffix: suffix.to_owned(),
                    }
                }
            };
            segments.push(segment);
        }
        let names: Vec<&str> = segments
            .iter()
            .filter_map(|s| match s {
                Segment::Capture { name, .. } => Some(name.as_str()),
                Segment::Literal(_) => None,
            })
            .collect();
        if names.contains(&"tenant") {
            return Err(bad("{tenant} is the tenant segment's; pick another name"));
        }
        if names
            .iter()
            .enumerate()
            .any(|(i, n)| names[..i].contains(n))
        {
            return Err(bad("captures the same name twice"));
        }
        if segments.len() >= MAX_SEGMENTS {
            return Err(bad("has too many segments"));
        }
        Ok(Self {
            text: text.to_owned(),
            segments,
        })
    }

    /// The template as it was given.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Some request path matches both templates.
    pub(crate) fn overlaps(&self, other: &Self) -> bool {
        self.segments.len() == other.segments.len()
            && self
                .segments
                .iter()
                .zip(&other.segments)
                .all(|(a, b)| a.overlaps(b))
    }

    /// The raw (still percent-encoded) captures when `segments` match, by name.
    #[cfg_attr(not(feature = "rest"), allow(dead_code))] // HTTP+JSON routing
    pub(crate) fn matches<'t, 'p>(
        &'t self,
        segments: &[&'p str],
    ) -> Option<Vec<(&'t str, &'p str)>> {
        if segments.len() != self.segments.len() {
            return None;
        }
        let mut captures = Vec::new();
        for (template, &seg) in self.segments.iter().zip(segments) {
            match template {
                Segment::Literal(l) if l == seg => {}
                Segment::Capture { name, suffix } => {
                    let raw = seg
                        .strip_suffix(suffix.as_str())
                        .filter(|v| !v.is_empty())?;
                    captures.push((name.as_str(), raw));
                }
                Segment::Literal(_) => return None,
            }
        }
        Some(captures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> PathTemplate {
        PathTemplate::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(t("/contexts/{contextId}/queue/").segments.len(), 3);
        for bad in [
            "",
            "contexts",
            "/",
            "//x",
            "/a//b",
            "/{}",
            "/{a-b}",
            "/{a",
            "/x{a}",
            "/{a}{b}",
            "/a%2Fb",
            "/a b",
            "/a?b",
            "/{tenant}/q",
            "/{a}/{a}",
            "/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16",
        ] {
            assert!(PathTemplate::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn captures_raw_values() {
        let q = t("/contexts/{contextId}/queue:reorder");
        assert_eq!(
            q.matches(&["contexts", "c%2F1", "queue:reorder"]),
            Some(vec![("contextId", "c%2F1")])
        );
        assert_eq!(q.matches(&["contexts", "c", "queue"]), None);
        assert_eq!(q.matches(&["contexts", "c"]), None);
        let s = t("/items/{id}:move");
        assert_eq!(s.matches(&["items", "a:b:move"]), Some(vec![("id", "a:b")]));
        assert_eq!(s.matches(&["items", ":move"]), None);
        assert_eq!(s.matches(&["items", "a"]), None);
    }

    #[test]
    fn overlaps() {
        for (a, b, overlap) in [
            ("/tasks/{id}", "/tasks/queue", true),
            ("/tasks/{id}", "/tasks/{x}:reorder", true),
            ("/{a}/b", "/a/{b}", true),
            ("/x/{a}:go", "/x/{b}o", true),
            ("/tasks/{id}", "/tasks/{id}/queue", false),
            ("/tasks/{id}:cancel", "/tasks/{id}:reorder", false),
            ("/tasks/{id}:cancel", "/tasks/:cancel", false),
            ("/contexts/{c}/queue", "/tasks/{c}/queue", false),
        ] {
            assert_eq!(t(a).overlaps(&t(b)), overlap, "{a} {b}");
            assert_eq!(t(b).overlaps(&t(a)), overlap, "{b} {a}");
        }
    }
}
