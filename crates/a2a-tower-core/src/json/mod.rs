//! JSON output for the hot paths: the same bytes as `serde_json`'s compact
//! writer, with strings scanned for escapes eight bytes at a time.
//!
//! `serde_json` checks every byte of every string and key it writes against
//! its escape table, one byte per step, and that scan is not reachable
//! through its `Formatter`. Most of what an A2A server writes is ids,
//! timestamps, enum names and keys that never need an escape, so the
//! answers, the stored tasks and the events go through this writer instead.
//! Everything else is `serde_json`'s format exactly: the same escapes
//! (lowercase `\u00xx`), numbers through `itoa` and `ryu` (a non-finite
//! float is `null`), numbers kept as their text by `arbitrary_precision`
//! and `RawValue`s written as they are, enums externally tagged, map keys
//! that are numbers, bools or chars quoted. The tests compare the two
//! writers' bytes.
//!
//! ```
//! use a2a_tower_core::json;
//! use serde_json::json;
//!
//! let value = json!({"id": "t-1", "text": "line\none", "n": 1.5e300, "big": 123456789012345678901234567890u128});
//! let bytes = json::to_vec(&value).unwrap();
//! assert_eq!(bytes, serde_json::to_vec(&value).unwrap());
//! ```

/// The `serde::Serializer` methods of a serializer that writes only some
/// shapes (a map key, a number token's text): each one listed refuses its
/// value with `$error`.
macro_rules! refused {
    ($error:expr; $($name:ident($($arg:ty),*) -> $out:ty;)*) => {
        $(
            fn $name(self, $(_: $arg),*) -> $out {
                Err($error)
            }
        )*
    };
}

/// The compound shapes no map key or number token has.
macro_rules! refused_compounds {
    ($error:expr) => {
        refused! { $error;
            serialize_seq(Option<usize>) -> Result<Self::SerializeSeq>;
            serialize_tuple(usize) -> Result<Self::SerializeTuple>;
            serialize_tuple_struct(&'static str, usize) -> Result<Self::SerializeTupleStruct>;
            serialize_tuple_variant(&'static str, u32, &'static str, usize)
                -> Result<Self::SerializeTupleVariant>;
            serialize_map(Option<usize>) -> Result<Self::SerializeMap>;
            serialize_struct(&'static str, usize) -> Result<Self::SerializeStruct>;
            serialize_struct_variant(&'static str, u32, &'static str, usize)
                -> Result<Self::SerializeStructVariant>;
        }
    };
}

mod escape;
mod key;
mod raw;
mod ser;

pub use raw::Raw;

use serde::Serialize;

/// Appends `s` to `out` as a JSON string, escaped as serde_json escapes it
/// (which is also RFC 8785's escaping, for the card signatures' canonical
/// form).
#[cfg(feature = "signing")]
pub(crate) use escape::string as write_string;

/// Appends `value`'s JSON to `out`. On an error (a `Serialize` impl that
/// fails, a map key that is not a string or a number) `out` holds what was
/// written before it.
pub fn to_writer<T: ?Sized + Serialize>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    value.serialize(&mut ser::Serializer { out })
}

/// `value`'s JSON.
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(out)
}

/// `value`'s JSON as a `String`.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> Result<String, serde_json::Error> {
    // Every byte written comes from a `&str` or is ASCII, so this check
    // never fails; it is a fast scan, and it keeps the module free of
    // `unsafe`.
    String::from_utf8(to_vec(value)?)
        .map_err(|_| <serde_json::Error as serde::ser::Error>::custom("not UTF-8"))
}

#[cfg(test)]
mod tests;
