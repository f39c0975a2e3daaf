//! The serializer: serde_json's compact output, into a `Vec<u8>`.

use serde::ser::{self, Serialize};

use super::escape;
use super::key::MapKey;
use super::raw::RawStr;

/// serde_json's names for a number kept as its text (`arbitrary_precision`)
/// and for a `RawValue`: a struct of that name has one field of that name,
/// whose string is written as it is.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
pub(super) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

pub(super) type Error = serde_json::Error;
pub(super) type Result<T = ()> = std::result::Result<T, Error>;

pub(super) fn error(msg: &str) -> Error {
    <Error as ser::Error>::custom(msg)
}

/// Writes JSON into `out`.
pub(super) struct Serializer<'w> {
    pub(super) out: &'w mut Vec<u8>,
}

impl Serializer<'_> {
    pub(super) fn integer(&mut self, i: impl itoa::Integer) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    }

    pub(super) fn float(&mut self, f: impl ryu::Float, finite: bool) {
        if finite {
            self.out
                .extend_from_slice(ryu::Buffer::new().format_finite(f).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
    }

    /// `{"variant":`, the start of an enum's externally tagged form.
    fn tagged(&mut self, variant: &str) {
        self.out.push(b'{');
        escape::string(self.out, variant);
        self.out.push(b':');
    }
}

/// The state of an array or an object being written.
pub(super) enum Compound<'a, 'w> {
    /// An array or object; `first`: nothing written in it yet.
    Items {
        ser: &'a mut Serializer<'w>,
        first: bool,
    },
    /// serde_json's number or raw value token: its one field is written raw.
    Raw { ser: &'a mut Serializer<'w> },
}

impl<'w> Compound<'_, 'w> {
    fn items<'a>(ser: &'a mut Serializer<'w>, open: u8) -> Compound<'a, 'w> {
        ser.out.push(open);
        Compound::Items { ser, first: true }
    }

    /// The serializer, after a comma unless this is the first item.
    fn next(&mut self) -> &mut Serializer<'w> {
        match self {
            Compound::Items { ser, first } => {
                if !std::mem::take(first) {
                    ser.out.push(b',');
                }
                ser
            }
            Compound::Raw { ser } => ser,
        }
    }

    fn close(self, closing: &[u8]) {
        // A number or raw value token has no brackets of its own.
        if let Compound::Items { ser, .. } = self {
            ser.out.extend_from_slice(closing);
        }
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result {
        if let Compound::Raw { ser } = self {
            return if key == NUMBER_TOKEN || key == RAW_VALUE_TOKEN {
                value.serialize(RawStr { out: ser.out })
            } else {
                Err(error("invalid number or raw value"))
            };
        }
        let ser = self.next();
        escape::string(ser.out, key);
        ser.out.push(b':');
        value.serialize(&mut *ser)
    }
}

impl<'a, 'w> ser::Serializer for &'a mut Serializer<'w> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'w>;
    type SerializeTuple = Compound<'a, 'w>;
    type SerializeTupleStruct = Compound<'a, 'w>;
    type SerializeTupleVariant = Compound<'a, 'w>;
    type SerializeMap = Compound<'a, 'w>;
    type SerializeStruct = Compound<'a, 'w>;
    type SerializeStructVariant = Compound<'a, 'w>;

    fn serialize_bool(self, v: bool) -> Result {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.float(v, v.is_finite());
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result {
        self.float(v, v.is_finite());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result {
        escape::string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result {
        escape::string(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result {
        let mut seq = Compound::items(self, b'[');
        for b in v {
            seq.next().integer(*b);
        }
        seq.close(b"]");
        Ok(())
    }
    fn serialize_none(self) -> Result {
        self.serialize_unit()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Result {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        self.tagged(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Ok(Compound::items(self, b'['))
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self::SerializeTuple> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        self.tagged(variant);
        Ok(Compound::items(self, b'['))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Ok(Compound::items(self, b'{'))
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        if name == NUMBER_TOKEN || name == RAW_VALUE_TOKEN {
            return Ok(Compound::Raw { ser: self });
        }
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        self.tagged(variant);
        Ok(Compound::items(self, b'{'))
    }
    fn collect_str<T: ?Sized + std::fmt::Display>(self, value: &T) -> Result {
        struct Escaping<'a>(&'a mut Vec<u8>);
        impl std::fmt::Write for Escaping<'_> {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                escape::escaped(self.0, s);
                Ok(())
            }
        }
        use std::fmt::Write as _;
        self.out.push(b'"');
        write!(Escaping(self.out), "{value}").map_err(|_| error("a Display failed"))?;
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result {
        value.serialize(self.next())
    }
    fn end(self) -> Result {
        self.close(b"]");
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        self.close(b"]}");
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result {
        key.serialize(MapKey { ser: self.next() })
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result {
        let ser = match self {
            Compound::Items { ser, .. } | Compound::Raw { ser } => ser,
        };
        ser.out.push(b':');
        value.serialize(&mut **ser)
    }
    fn end(self) -> Result {
        self.close(b"}");
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result {
        self.field(key, value)
    }
    fn end(self) -> Result {
        self.close(b"}");
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result {
        self.field(key, value)
    }
    fn end(self) -> Result {
        self.close(b"}}");
        Ok(())
    }
}
