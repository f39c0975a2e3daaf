//! [`OutputPolicy`]: how values (results, questions) become parts, frozen from
//! the card's `defaultOutputModes` when the service is built.

use serde_json::Value;

use crate::ConfigError;
use crate::types::Part;

const JSON: &str = "application/json";
const TEXT: &str = "text/plain";

/// How a value is written as a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputPolicy {
    /// `application/json` (the default): every value as a data part, strings
    /// included.
    Json,
    /// `text/plain`: strings as text, other values as their exact JSON text.
    Text,
    /// Both declared: strings as text, other values as data parts.
    TextAndJson,
}

impl OutputPolicy {
    /// The policy for a card's `defaultOutputModes` (empty: `application/json`);
    /// a mode other than those two cannot be served.
    pub fn from_modes(modes: &[String]) -> Result<Self, ConfigError> {
        let essence = |m: &String| {
            m.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        };
        let (mut json, mut text) = (modes.is_empty(), false);
        for m in modes {
            match essence(m).as_str() {
                JSON => json = true,
                TEXT => text = true,
                other => {
                    return Err(ConfigError::new(format!(
                        "a managed task writes application/json or text/plain, not {other:?}"
                    )));
                }
            }
        }
        Ok(match (json, text) {
            (true, true) => Self::TextAndJson,
            (false, true) => Self::Text,
            _ => Self::Json,
        })
    }

    /// The part for `value` (numbers keep their exact text). `null` is
    /// always its JSON text: a data part cannot carry it (ProtoJSON reads a
    /// null member as absent).
    pub fn part(self, value: &Value) -> Part {
        match (self, value) {
            (_, Value::Null) => {
                let mut p = text("null".to_owned());
                p.media_type = JSON.to_owned();
                p
            }
            (Self::Text | Self::TextAndJson, Value::String(s)) => text(s.clone()),
            (Self::Text, v) => {
                let mut p = text(v.to_string());
                p.media_type = JSON.to_owned();
                p
            }
            (Self::Json | Self::TextAndJson, v) => {
                let mut p = Part::data(v.clone());
                p.media_type = JSON.to_owned();
                p
            }
        }
    }
}

fn text(s: String) -> Part {
    Part::text(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn modes(m: &[&str]) -> Vec<String> {
        m.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn modes_pick_the_policy() {
        assert_eq!(OutputPolicy::from_modes(&[]).unwrap(), OutputPolicy::Json);
        assert_eq!(
            OutputPolicy::from_modes(&modes(&["application/json"])).unwrap(),
            OutputPolicy::Json
        );
        assert_eq!(
            OutputPolicy::from_modes(&modes(&["text/plain; charset=utf-8"])).unwrap(),
            OutputPolicy::Text
        );
        assert_eq!(
            OutputPolicy::from_modes(&modes(&["text/plain", "application/json"])).unwrap(),
            OutputPolicy::TextAndJson
        );
        assert!(OutputPolicy::from_modes(&modes(&["image/png"])).is_err());
    }

    #[test]
    fn values_become_parts() {
        let exact: Value = serde_json::from_str(r#"{"n":12345678901234567890.123456789}"#).unwrap();
        let s = json!("yes");
        let json_of = |p: &Part| serde_json::to_string(p).unwrap();
        assert_eq!(
            json_of(&OutputPolicy::Json.part(&s)),
            r#"{"data":"yes","mediaType":"application/json"}"#
        );
        assert_eq!(json_of(&OutputPolicy::Text.part(&s)), r#"{"text":"yes"}"#);
        assert_eq!(
            json_of(&OutputPolicy::Text.part(&exact)),
            r#"{"text":"{\"n\":12345678901234567890.123456789}","mediaType":"application/json"}"#
        );
        assert_eq!(
            json_of(&OutputPolicy::TextAndJson.part(&s)),
            r#"{"text":"yes"}"#
        );
        for policy in [
            OutputPolicy::Json,
            OutputPolicy::Text,
            OutputPolicy::TextAndJson,
        ] {
            let null = json_of(&policy.part(&Value::Null));
            assert_eq!(null, r#"{"text":"null","mediaType":"application/json"}"#);
            assert!(serde_json::from_str::<Part>(&null).is_ok());
        }
        assert_eq!(
            json_of(&OutputPolicy::TextAndJson.part(&exact)),
            r#"{"data":{"n":12345678901234567890.123456789},"mediaType":"application/json"}"#
        );
    }
}
