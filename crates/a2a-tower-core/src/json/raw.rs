//! The field of serde_json's number and raw value tokens: a struct of the
//! token's name with one field of that name, whose string is written as it
//! is (a number kept as its text by `arbitrary_precision`, a `RawValue`).

use serde::ser::{self, Impossible, Serialize, SerializeStruct};

use super::ser::{Error, RAW_VALUE_TOKEN, Result, error};

/// JSON text written as it is, not as a string: serde_json's raw value
/// token, which this writer and serde_json (with its `raw_value` feature)
/// both write verbatim. The text must be one JSON value; nothing checks it.
///
/// ```
/// use a2a_tower_core::json::{self, Raw};
/// let task = r#"{"id":"t-1"}"#;
/// let bytes = json::to_vec(&serde_json::json!({"task": Raw(task)})).unwrap();
/// assert_eq!(bytes, br#"{"task":{"id":"t-1"}}"#);
/// assert_eq!(serde_json::to_vec(&[Raw(task)]).unwrap(), br#"[{"id":"t-1"}]"#);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a>(pub &'a str);

impl Serialize for Raw<'_> {
    fn serialize<S: ser::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(RAW_VALUE_TOKEN, self.0)?;
        raw.end()
    }
}

fn invalid_raw() -> Error {
    error("invalid number or raw value")
}

/// The field of serde_json's number or raw value token: its string, raw.
pub(super) struct RawStr<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

impl ser::Serializer for RawStr<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result {
        Err(invalid_raw())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result {
        Err(invalid_raw())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result {
        Err(invalid_raw())
    }
    refused! { invalid_raw();
        serialize_bool(bool) -> Result;
        serialize_i8(i8) -> Result;
        serialize_i16(i16) -> Result;
        serialize_i32(i32) -> Result;
        serialize_i64(i64) -> Result;
        serialize_u8(u8) -> Result;
        serialize_u16(u16) -> Result;
        serialize_u32(u32) -> Result;
        serialize_u64(u64) -> Result;
        serialize_f32(f32) -> Result;
        serialize_f64(f64) -> Result;
        serialize_char(char) -> Result;
        serialize_bytes(&[u8]) -> Result;
        serialize_none() -> Result;
        serialize_unit() -> Result;
        serialize_unit_struct(&'static str) -> Result;
        serialize_unit_variant(&'static str, u32, &'static str) -> Result;
    }
    refused_compounds!(invalid_raw());
}
