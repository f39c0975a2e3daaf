//! Lenient-parse helpers shared by the wire types: `null` as the default value,
//! and enums that accept their proto name or number.

use serde::{Deserialize, Deserializer};

/// Deserializes `null` (or an absent field, with `#[serde(default)]`) as `T::default()`.
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `skip_serializing_if` helper for plain booleans (proto3 default `false`).
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// Defines a proto enum: emitted as its proto name, parsed from the name, its
/// number, or `null` (the `*_UNSPECIFIED` value).
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = ($num:literal, $wire:literal $(, $alias:literal)*) ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// The proto enum name, as written on the wire.
            pub const fn as_str(self) -> &'static str {
                match self { $( Self::$variant => $wire ),+ }
            }

            /// The proto enum number.
            pub const fn number(self) -> i32 {
                match self { $( Self::$variant => $num ),+ }
            }

            /// Parses the proto name (or an accepted alias).
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $wire $(| $alias)* => Some(Self::$variant), )+
                    _ => None,
                }
            }

            /// Maps a proto enum number.
            pub const fn from_number(n: i64) -> Option<Self> {
                match n {
                    $( $num => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::types::UnknownEnumValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_name(s).ok_or($crate::types::UnknownEnumValue(stringify!($name)))
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "a {} name or number", stringify!($name))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| E::unknown_variant(v, &[$($wire),+]))
                    }
                    fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        $name::from_number(v).ok_or_else(|| E::custom(concat!("unknown ", stringify!($name), " number")))
                    }
                    fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        let n = i64::try_from(v).map_err(|_| E::custom("enum number out of range"))?;
                        self.visit_i64(n)
                    }
                    fn visit_unit<E: ::serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name::default())
                    }
                    fn visit_none<E: ::serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name::default())
                    }
                    fn visit_some<D2: ::serde::Deserializer<'de>>(self, d: D2) -> Result<$name, D2::Error> {
                        d.deserialize_any(self)
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> Result<$name, A::Error> {
                        // serde_json's arbitrary_precision feature hands numbers over
                        // as a one-entry map holding the number's text.
                        let v = ::serde_json::Value::deserialize(
                            ::serde::de::value::MapAccessDeserializer::new(map),
                        )?;
                        match v.as_i64() {
                            Some(n) => self.visit_i64(n),
                            None => Err(::serde::de::Error::custom(concat!("expected a ", stringify!($name), " name or number"))),
                        }
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

pub(crate) use proto_enum;
