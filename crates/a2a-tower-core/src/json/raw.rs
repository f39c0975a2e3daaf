//! The field of serde_json's number and raw value tokens: a struct of the
//! token's name with one field of that name, whose string is written as it
//! is (a number kept as its text by `arbitrary_precision`, a `RawValue`).

use serde::ser::{self, Impossible, Serialize};

use super::ser::{Error, Result, error};

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
