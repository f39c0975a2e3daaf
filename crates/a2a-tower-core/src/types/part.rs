//! `Part`: one piece of message or artifact content (text, raw bytes, URL, or JSON data).

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::{DecodePaddingMode, general_purpose};
use bytes::Bytes;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Metadata;
use super::serde_util::null_default;

/// The one content member of a [`Part`] (the proto `oneof content`).
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Text content.
    Text(String),
    /// Inline file content; base64 on the wire.
    Raw(Bytes),
    /// A reference to file content.
    Url(String),
    /// Any JSON value. Numbers keep their exact text.
    Data(Value),
}

/// A section of content: exactly one [`PartContent`] plus optional media type,
/// file name and metadata.
///
/// ```
/// use a2a_tower::types::Part;
/// let part: Part = serde_json::from_str(r#"{"data":{"amount":10.50}}"#).unwrap();
/// assert_eq!(serde_json::to_string(&part).unwrap(), r#"{"data":{"amount":10.50}}"#);
/// assert!(serde_json::from_str::<Part>(r#"{"text":"a","url":"b"}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content.
    pub content: PartContent,
    /// Media type (MIME type) of the content; empty when unset.
    pub media_type: String,
    /// File name; empty when unset.
    pub filename: String,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A raw-bytes part.
    pub fn raw(bytes: impl Into<Bytes>) -> Self {
        Self::new(PartContent::Raw(bytes.into()))
    }

    /// A URL part.
    pub fn url(url: impl Into<String>) -> Self {
        Self::new(PartContent::Url(url.into()))
    }

    /// A data part.
    pub fn data(value: Value) -> Self {
        Self::new(PartContent::Data(value))
    }

    /// A part with the given content and no media type, file name or metadata.
    pub fn new(content: PartContent) -> Self {
        Self {
            content,
            media_type: String::new(),
            filename: String::new(),
            metadata: None,
        }
    }

    /// Sets the media type.
    #[must_use]
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = media_type.into();
        self
    }

    /// Sets the file name.
    #[must_use]
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = filename.into();
        self
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => m.serialize_entry("raw", &STANDARD.encode(b))?,
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(v) => m.serialize_entry("data", v)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if !self.filename.is_empty() {
            m.serialize_entry("filename", &self.filename)?;
        }
        if !self.media_type.is_empty() {
            m.serialize_entry("mediaType", &self.media_type)?;
        }
        m.end()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartRepr {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default, deserialize_with = "null_default")]
    filename: String,
    #[serde(default, deserialize_with = "null_default", alias = "media_type")]
    media_type: String,
}

const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// Decodes standard or URL-safe base64, padded or not.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let _ = general_purpose::STANDARD; // the alphabet we emit
    STANDARD_LENIENT
        .decode(s)
        .or_else(|_| URL_SAFE_LENIENT.decode(s))
        .ok()
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let r = PartRepr::deserialize(d)?;
        let mut contents = Vec::with_capacity(1);
        if let Some(t) = r.text {
            contents.push(PartContent::Text(t));
        }
        if let Some(raw) = r.raw {
            let bytes =
                decode_base64(&raw).ok_or_else(|| D::Error::custom("part raw is not base64"))?;
            contents.push(PartContent::Raw(Bytes::from(bytes)));
        }
        if let Some(u) = r.url {
            contents.push(PartContent::Url(u));
        }
        if let Some(v) = r.data {
            contents.push(PartContent::Data(v));
        }
        if contents.len() != 1 {
            return Err(D::Error::custom(
                "a part must have exactly one of text, raw, url or data",
            ));
        }
        Ok(Part {
            content: contents.pop().expect("one content member"),
            media_type: r.media_type,
            filename: r.filename,
            metadata: r.metadata,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_accepts_both_alphabets_and_emits_standard() {
        for enc in ["+/8=", "+/8", "-_8=", "-_8"] {
            let p: Part = serde_json::from_str(&format!(r#"{{"raw":"{enc}"}}"#)).unwrap();
            assert_eq!(
                p.content,
                PartContent::Raw(Bytes::from_static(&[0xfb, 0xff]))
            );
            assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"raw":"+/8="}"#);
        }
    }

    #[test]
    fn zero_or_two_members_are_invalid() {
        assert!(serde_json::from_str::<Part>("{}").is_err());
        assert!(serde_json::from_str::<Part>(r#"{"mediaType":"text/plain"}"#).is_err());
        assert!(serde_json::from_str::<Part>(r#"{"text":"a","data":1}"#).is_err());
    }

    #[test]
    fn numbers_keep_exact_text() {
        let src = r#"{"data":[1.10,1e+400,123456789012345678901234567890,-0.0]}"#;
        let p: Part = serde_json::from_str(src).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), src);
    }

    #[test]
    fn snake_case_and_null_are_accepted() {
        let p: Part =
            serde_json::from_str(r#"{"text":"hi","media_type":"text/plain","filename":null}"#)
                .unwrap();
        assert_eq!(p.media_type, "text/plain");
        assert_eq!(p.filename, "");
    }
}
