//! Map keys as serde_json writes them: a string, or a number, a bool or a
//! char written as one; anything else is refused.

use serde::ser::{self, Impossible, Serialize};

use super::escape;
use super::ser::{Error, Result, Serializer, error};

fn key_must_be_a_string() -> Error {
    error("key must be a string")
}

/// A map key: a string, or a number, a bool or a char written as one
/// (serde_json's rules); anything else is refused.
pub(super) struct MapKey<'a, 'w> {
    pub(super) ser: &'a mut Serializer<'w>,
}

impl MapKey<'_, '_> {
    fn quoted(self, write: impl FnOnce(&mut Serializer<'_>)) -> Result {
        self.ser.out.push(b'"');
        write(self.ser);
        self.ser.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for MapKey<'_, '_> {
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
        escape::string(self.ser.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Result {
        v.serialize(self)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result {
        v.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result {
        self.quoted(|s| s.out.extend_from_slice(if v { b"true" } else { b"false" }))
    }
    fn serialize_i8(self, v: i8) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_i128(self, v: i128) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_u8(self, v: u8) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_u64(self, v: u64) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_u128(self, v: u128) -> Result {
        self.quoted(|s| s.integer(v))
    }
    fn serialize_f32(self, v: f32) -> Result {
        if !v.is_finite() {
            return Err(error("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|s| s.float(v, true))
    }
    fn serialize_f64(self, v: f64) -> Result {
        if !v.is_finite() {
            return Err(error("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|s| s.float(v, true))
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result {
        Err(key_must_be_a_string())
    }
    refused! { key_must_be_a_string();
        serialize_bytes(&[u8]) -> Result;
        serialize_none() -> Result;
        serialize_unit() -> Result;
        serialize_unit_struct(&'static str) -> Result;
    }
    refused_compounds!(key_must_be_a_string());
}
