//! Tool names: the model-visible name of a remote agent, derived from its
//! card's name unless the endpoint overrides it.
//!
//! The derivation lower-cases the name, turns every run of characters other
//! than ASCII letters and digits into one `_`, and trims `_` from both ends,
//! so the result fits the tool-name rules of the common model APIs
//! (`[a-z0-9_]`). A name with no letter or digit derives nothing.
//!
//! ```
//! use a2a_tower::tool::tool_name;
//! assert_eq!(tool_name("Currency Agent (EU)").as_deref(), Some("currency_agent_eu"));
//! assert_eq!(tool_name("--Refunds--").as_deref(), Some("refunds"));
//! assert_eq!(tool_name("!!!"), None);
//! ```

/// The tool name derived from a card's `name`: lower-case, runs of
/// non-alphanumerics (ASCII) as one `_`, no leading or trailing `_`; `None`
/// when nothing is left.
pub fn tool_name(card_name: &str) -> Option<String> {
    let mut out = String::with_capacity(card_name.len());
    let mut gap = false;
    for c in card_name.chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_case_with_single_underscores() {
        let cases = [
            ("Echo", Some("echo")),
            ("Currency Agent", Some("currency_agent")),
            ("a  --  b", Some("a_b")),
            ("_Lead_and_trail_", Some("lead_and_trail")),
            ("Agent v2.1", Some("agent_v2_1")),
            ("Zürich Weather", Some("z_rich_weather")),
            ("ALLCAPS", Some("allcaps")),
            ("", None),
            ("  __ ", None),
            ("日本", None),
        ];
        for (card, want) in cases {
            assert_eq!(tool_name(card).as_deref(), want, "{card:?}");
        }
    }

    #[test]
    fn underscores_are_runs_of_non_alphanumerics_too() {
        assert_eq!(tool_name("a__b").as_deref(), Some("a_b"));
        assert_eq!(tool_name("a_-_b").as_deref(), Some("a_b"));
    }
}
