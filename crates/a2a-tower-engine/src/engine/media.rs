//! Media types of a SendMessage: whether the agent accepts the message's parts
//! (the card's input modes) and produces one of the modes the client accepts
//! (its output modes). A refusal is ContentTypeNotSupported (a2a-spec.md §3.2.2).

use crate::types::{Part, PartContent, SendMessageRequest};
use crate::{A2aError, ErrorKind};

/// The media type of a part: its `mediaType` without parameters, else the
/// type its content implies.
fn media_type(part: &Part) -> &str {
    if !part.media_type.is_empty() {
        return part.media_type.split(';').next().unwrap_or("").trim();
    }
    match part.content {
        PartContent::Text(_) => "text/plain",
        PartContent::Data(_) => "application/json",
        PartContent::Raw(_) | PartContent::Url(_) => "application/octet-stream",
    }
}

/// `pattern` (possibly `*/*` or `type/*`) covers `media`.
fn covers(pattern: &str, media: &str) -> bool {
    let pattern = pattern.split(';').next().unwrap_or("").trim();
    if pattern == "*/*" || pattern.eq_ignore_ascii_case(media) {
        return true;
    }
    match (pattern.strip_suffix("/*"), media.split_once('/')) {
        (Some(ty), Some((mty, _))) => ty.eq_ignore_ascii_case(mty),
        _ => false,
    }
}

fn refused(what: &'static str) -> A2aError {
    A2aError::new(ErrorKind::ContentTypeNotSupported).with_message(what)
}

/// Checks `req` against the agent's input and output modes (empty: any).
pub(crate) fn check(
    req: &SendMessageRequest,
    input_modes: &[String],
    output_modes: &[String],
) -> Result<(), A2aError> {
    let accepted = req
        .configuration
        .as_ref()
        .map_or(&[][..], |c| &c.accepted_output_modes[..]);
    if !accepted.is_empty()
        && !output_modes.is_empty()
        && !accepted
            .iter()
            .any(|a| output_modes.iter().any(|o| covers(a, o) || covers(o, a)))
    {
        return Err(refused(
            "None of the accepted output modes is produced by this agent",
        ));
    }
    if !input_modes.is_empty() {
        for part in &req.message.parts {
            let media = media_type(part);
            if !input_modes.iter().any(|mode| covers(mode, media)) {
                return Err(refused(
                    "A message part has a media type this agent does not accept",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, SendMessageConfiguration};

    fn modes(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_part_has_its_declared_or_implied_type() {
        let mut text = Part::text("hi");
        assert_eq!(media_type(&text), "text/plain");
        text.media_type = "text/markdown; charset=utf-8".into();
        assert_eq!(media_type(&text), "text/markdown");
        let data = Part::data(serde_json::json!({"a": 1}));
        assert_eq!(media_type(&data), "application/json");
    }

    #[test]
    fn wildcards_cover_types() {
        assert!(covers("*/*", "image/png"));
        assert!(covers("text/*", "text/plain"));
        assert!(covers("TEXT/PLAIN", "text/plain"));
        assert!(covers("text/plain; charset=utf-8", "text/plain"));
        assert!(!covers("text/*", "application/json"));
        assert!(!covers("text/plain", "text/markdown"));
        assert!(!covers("text", "text/plain"));
    }

    #[test]
    fn input_and_output_modes() {
        let send = |accepted: &[&str]| SendMessageRequest {
            message: Message::user("m", "hi"),
            configuration: Some(SendMessageConfiguration {
                accepted_output_modes: modes(accepted),
                ..Default::default()
            }),
            ..Default::default()
        };
        let text = modes(&["text/plain"]);
        let json = modes(&["application/json"]);
        assert!(
            check(&send(&[]), &[], &[]).is_ok(),
            "empty modes accept all"
        );
        assert!(check(&send(&["text/*"]), &text, &text).is_ok());
        assert!(check(&send(&["*/*"]), &text, &json).is_ok());
        let e = check(&send(&["image/png"]), &text, &text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ContentTypeNotSupported);
        let e = check(&send(&[]), &json, &text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ContentTypeNotSupported);
    }
}
