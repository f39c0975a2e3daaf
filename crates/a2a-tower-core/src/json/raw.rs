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

    fn serialize_bool(self, _: bool) -> Result {
        Err(invalid_raw())
    }
    fn serialize_i8(self, _: i8) -> Result {
        Err(invalid_raw())
    }
    fn serialize_i16(self, _: i16) -> Result {
        Err(invalid_raw())
    }
    fn serialize_i32(self, _: i32) -> Result {
        Err(invalid_raw())
    }
    fn serialize_i64(self, _: i64) -> Result {
        Err(invalid_raw())
    }
    fn serialize_u8(self, _: u8) -> Result {
        Err(invalid_raw())
    }
    fn serialize_u16(self, _: u16) -> Result {
        Err(invalid_raw())
    }
    fn serialize_u32(self, _: u32) -> Result {
        Err(invalid_raw())
    }
    fn serialize_u64(self, _: u64) -> Result {
        Err(invalid_raw())
    }
    fn serialize_f32(self, _: f32) -> Result {
        Err(invalid_raw())
    }
    fn serialize_f64(self, _: f64) -> Result {
        Err(invalid_raw())
    }
    fn serialize_char(self, _: char) -> Result {
        Err(invalid_raw())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result {
        Err(invalid_raw())
    }
    fn serialize_none(self) -> Result {
        Err(invalid_raw())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result {
        Err(invalid_raw())
    }
    fn serialize_unit(self) -> Result {
        Err(invalid_raw())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result {
        Err(invalid_raw())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result {
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
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(invalid_raw())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(invalid_raw())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(invalid_raw())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(invalid_raw())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(invalid_raw())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(invalid_raw())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(invalid_raw())
    }
}
