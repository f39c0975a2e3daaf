//! RFC 8785 (JSON Canonicalization Scheme): the bytes a card signature
//! covers.
//!
//! Objects have their members sorted by the UTF-16 code units of their
//! names, no whitespace is written, strings are escaped as ECMAScript's
//! `JSON.stringify` does (only `"`, `\` and the control characters, with
//! the short forms where they exist and lowercase `\u00xx` otherwise), and
//! numbers are written as ECMAScript writes an IEEE 754 double (`1e+21`,
//! `1e-7`, `0.000001`, `100`): a number kept exactly by `arbitrary_precision`
//! is read as the nearest double first, as RFC 8785 §3.2.2.3 requires.

use serde_json::Value;

use crate::json;

/// A number that JSON can carry but RFC 8785 cannot write (NaN or an
/// infinity: a number text too large for a double).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCanonical(pub String);

impl std::fmt::Display for NotCanonical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the number {} has no RFC 8785 form", self.0)
    }
}

impl std::error::Error for NotCanonical {}

/// The RFC 8785 canonical form of `value`.
pub fn canonicalize(value: &Value) -> Result<String, NotCanonical> {
    let mut out = Vec::new();
    write_value(value, &mut out)?;
    // Every byte written comes from a `&str` or is ASCII, so nothing is
    // replaced.
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn write_value(value: &Value, out: &mut Vec<u8>) -> Result<(), NotCanonical> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            let text = n.to_string();
            let f: f64 = text.parse().map_err(|_| NotCanonical(text.clone()))?;
            if !f.is_finite() {
                return Err(NotCanonical(text));
            }
            out.extend_from_slice(number(f).as_bytes());
        }
        // RFC 8785's string escapes (§3.2.2.2, ECMAScript's JSON.stringify)
        // are serde_json's, which the crate's JSON writer makes.
        Value::String(s) => json::write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json::write_string(out, k);
                out.push(b':');
                write_value(v, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// ECMAScript's `Number.prototype.toString()` of a finite double (ECMA-262
/// §6.1.6.1.20), from the shortest round-trip digits.
pub(crate) fn number(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if f < 0.0 {
        return format!("-{}", number(-f));
    }
    // Rust's `{:e}` is the shortest round-trip form: d[.ddd]e<exp>.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut digits = digits.trim_end_matches('0').to_owned();
    let mut exp = exp;
    // ECMAScript breaks a tie between two shortest forms towards the even
    // last digit; Rust's rounds half up. The exact value decides.
    let k = digits.len();
    let exact = format!("{f:.800e}");
    let (exact_m, exact_e) = exact.split_once('e').expect("an exponent");
    let exact_digits: String = exact_m.chars().filter(|c| *c != '.').collect();
    let tail = &exact_digits[k..];
    if tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0') {
        let lower = &exact_digits[..k];
        let even = lower
            .bytes()
            .last()
            .is_some_and(|b| (b - b'0').is_multiple_of(2));
        let lower_exp: i32 = exact_e.parse().expect("an integer exponent");
        let text = format!("{}.{}e{lower_exp}", &lower[..1], &lower[1..]);
        if even && text.parse::<f64>() == Ok(f) {
            digits = lower.trim_end_matches('0').to_owned();
            exp = lower_exp;
        }
    }
    let digits = if digits.is_empty() {
        "0"
    } else {
        digits.as_str()
    };
    let k = digits.len() as i32;
    // value = 0.digits × 10^n
    let n = exp + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{sign}{}", e.abs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn rfc8785_numbers() {
        for (bits, want) in [
            (0x0000000000000000u64, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            assert_eq!(number(f64::from_bits(bits)), want, "{bits:#x}");
        }
    }

    // RFC 8785 §3.2.3: the sorting example (UTF-16 order) and §3.2.4's
    // whole example.
    #[test]
    fn rfc8785_examples() {
        let sorting: Value = serde_json::from_str(
            r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
                "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}"#,
        )
        .unwrap();
        let keys: Vec<String> =
            match serde_json::from_str::<Value>(&canonicalize(&sorting).unwrap()).unwrap() {
                Value::Object(m) => m.keys().cloned().collect(),
                _ => unreachable!(),
            };
        assert_eq!(
            keys,
            [
                "\r",
                "1",
                "\u{80}",
                "\u{f6}",
                "\u{20ac}",
                "\u{1f600}",
                "\u{fb33}"
            ]
        );
        let input: Value = serde_json::from_str(
            r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
                "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
                "literals": [null, true, false]}"#,
        )
        .unwrap();
        assert_eq!(
            canonicalize(&input).unwrap(),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn integers_and_huge_texts() {
        assert_eq!(
            canonicalize(&json!([1, -1, 100, 1.5])).unwrap(),
            "[1,-1,100,1.5]"
        );
        let huge: Value = serde_json::from_str("1e400").unwrap();
        assert!(canonicalize(&huge).is_err());
    }
}
