//! JSON string escaping, checked eight bytes at a time.
//!
//! A string is first tested a 64-bit word per step for any byte JSON
//! requires to be escaped (`"`, `\` or a control character below 0x20); one
//! that has none (nearly all of them: ids, timestamps, enum names, keys) is
//! copied whole. Otherwise it is copied in runs between the bytes escaped,
//! found through a table as serde_json finds them. The escapes are
//! serde_json's: the short forms `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and
//! `\u00xx` in lowercase hex for the other control characters; nothing else
//! is escaped.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is `"`, `\` or below 0x20. Exact as a whole
/// (the borrows of the subtractions only ever flag bytes above a byte that
/// is flagged rightly), not as to which byte.
#[inline]
fn needs_escape(word: u64) -> bool {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH != 0
}

/// Where the first byte of `bytes` that needs an escape may be: the start
/// of the first word holding one (words taken a word at a time, the last
/// overlapping the one before it; a string shorter than a word a byte at a
/// time), or `None` if no byte needs one.
#[inline]
fn first_escape(bytes: &[u8]) -> Option<usize> {
    let word = |at: usize| {
        let mut w = [0; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    if bytes.len() < 8 {
        return bytes.iter().position(|&b| ESCAPE[usize::from(b)] != 0);
    }
    let mut at = 0;
    while at + 8 < bytes.len() {
        if needs_escape(word(at)) {
            return Some(at);
        }
        at += 8;
    }
    let last = bytes.len() - 8;
    needs_escape(word(last)).then_some(last)
}

/// Each byte's escape: 0 for none, its short form's letter, or `u` for
/// `\u00xx`.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Appends `s` to `out` as the contents of a JSON string (no quotes).
pub(super) fn escaped(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // Nearly every string an A2A server writes needs no escape.
    let Some(from) = first_escape(bytes) else {
        out.extend_from_slice(bytes);
        return;
    };
    let mut run = 0;
    for (i, &byte) in bytes.iter().enumerate().skip(from) {
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        if escape == b'u' {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Appends `s` to `out` as a JSON string.
#[inline]
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    escaped(out, s);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(s: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_in_every_position_of_strings_up_to_three_words() {
        for b in 0u8..=0x7f {
            let c = char::from(b);
            for len in 1..=25 {
                for at in 0..len {
                    let s: String = (0..len).map(|i| if i == at { c } else { 'a' }).collect();
                    assert_eq!(
                        ours(&s),
                        serde_json::to_string(&s).unwrap(),
                        "{b:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn unicode_and_runs_of_escapes() {
        for s in [
            "",
            "héllo wörld ✓ 𝄞",
            "\"\"\"\"\"\"\"\"\"\"",
            "\\\\\\\\\\\\\\\\\\",
            "\u{1}\u{2}\u{1f}\u{7f}\u{80}\u{ff}",
            "tab\there\nnew\rline\u{8}\u{c}",
            "ÿÿÿÿÿÿÿÿ\"ÿÿÿÿÿÿÿÿ",
            "<script>&amp;</script>/",
        ] {
            assert_eq!(ours(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn the_word_test_flags_exactly_the_words_with_an_escape() {
        // Every pair of bytes in a word of otherwise harmless bytes, which
        // covers the borrows between neighbours.
        for a in 0u8..=255 {
            for b in [
                0u8, 0x1f, 0x20, b'"', b'\\', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff,
            ] {
                for (x, y) in [(0, 1), (3, 4), (6, 7), (0, 7)] {
                    let mut word = [b'a'; 8];
                    word[x] = a;
                    word[y] = b;
                    let expected = word.iter().any(|&c| ESCAPE[usize::from(c)] != 0);
                    assert_eq!(needs_escape(u64::from_le_bytes(word)), expected, "{word:?}");
                }
            }
        }
    }
}
