//! The JSON form of a [`Record`]: one externally tagged object,
//! `{"<name>": {…}}`. The log's own records are read by their derived form;
//! any other name is a [`FeatureRecord`], kept as JSON.

use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeSeed, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess, VariantAccess,
    Visitor,
};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{FeatureRecord, Record};

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Feature(f) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(f.name(), &Body(f))?;
                map.end()
            }
            core => Record::serialize_core(core, s),
        }
    }
}

struct Body<'a>(&'a FeatureRecord);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_body(s)
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RecordVisitor)
    }
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a record: one {\"<name>\": {…}} object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
        let Some(name) = map.next_key_seed(NameSeed)? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let record = match name {
            Name::Core(name) => Record::deserialize_core(Tagged {
                name,
                map: &mut map,
            })?,
            Name::Feature(name) => Record::Feature(map.next_value_seed(FeatureSeed(&name))?),
        };
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        Ok(record)
    }
}

/// A record's name: one of the log's own (read without allocating) or a
/// feature's.
enum Name {
    Core(&'static str),
    Feature(String),
}

struct NameSeed;

impl<'de> DeserializeSeed<'de> for NameSeed {
    type Value = Name;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Name, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for NameSeed {
    type Value = Name;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a record name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Name, E> {
        Ok(match Record::CORE.iter().find(|core| **core == name) {
            Some(core) => Name::Core(core),
            None => Name::Feature(name.to_owned()),
        })
    }
}

struct FeatureSeed<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for FeatureSeed<'_> {
    type Value = FeatureRecord;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FeatureRecord, D::Error> {
        FeatureRecord::deserialize_body(self.0, d)
    }
}

/// The rest of a map whose one key (`name`) was read: an enum value for the
/// derived form.
struct Tagged<'a, A> {
    name: &'static str,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Tagged<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

impl<'de, 'a, A: MapAccess<'de>> EnumAccess<'de> for Tagged<'a, A> {
    type Error = A::Error;
    type Variant = Value<'a, A>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Value<'a, A>), A::Error> {
        let name: StrDeserializer<'static, A::Error> = self.name.into_deserializer();
        Ok((seed.deserialize(name)?, Value(self.map)))
    }
}

/// The value of the read key.
struct Value<'a, A>(&'a mut A);

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Value<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.next_value()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(TupleSeed(len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(StructSeed(fields, visitor))
    }
}

struct TupleSeed<V>(usize, V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for TupleSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_tuple(self.0, self.1)
    }
}

struct StructSeed<V>(&'static [&'static str], V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for StructSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_struct("", self.0, self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{TaskState, TaskStatus};

    #[test]
    fn core_records_keep_their_derived_form() {
        let r = Record::status(TaskStatus {
            state: TaskState::Working,
            ..TaskStatus::default()
        });
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"statusChanged":{"status":{"state":"TASK_STATE_WORKING"}}}"#
        );
        assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), r);
        let c =
            serde_json::from_str::<Record>(r#"{"cancelRequested":{"at":"2026-01-01T00:00:00Z"}}"#);
        assert!(matches!(c, Ok(Record::CancelRequested { .. })));
    }

    #[test]
    fn every_core_record_is_named_in_core_and_reads_back() {
        use crate::types::{Artifact, Message, Metadata, Part, TaskPushNotificationConfig};
        let at = crate::types::Timestamp::now();
        let all = [
            Record::created("t", "c"),
            Record::MessageAdmitted {
                message: Message::user("m", "hi"),
            },
            Record::status(TaskStatus::new(TaskState::Working)),
            Record::ArtifactChunk {
                artifact: Artifact {
                    artifact_id: "a".into(),
                    parts: vec![Part::text("x")],
                    ..Artifact::default()
                },
                append: true,
                last_chunk: false,
            },
            Record::Replied {
                message: Message::agent("r", "ok"),
                at,
            },
            Record::CancelRequested { at },
            Record::PushConfigSet {
                config: TaskPushNotificationConfig::default(),
            },
            Record::PushConfigDeleted { id: "p".into() },
            Record::ExecutionStarted { host: "h".into() },
            Record::MetadataChanged {
                metadata: Metadata::new(),
            },
        ];
        let mut names: Vec<String> = Vec::new();
        for r in all {
            let json = serde_json::to_value(&r).unwrap();
            names.extend(json.as_object().unwrap().keys().cloned());
            assert_eq!(serde_json::from_value::<Record>(json).unwrap(), r);
        }
        assert_eq!(names, Record::CORE);
    }

    #[test]
    fn malformed_records_are_errors() {
        for bad in [
            "{}",
            r#"{"statusChanged":{"status":{"state":"TASK_STATE_WORKING"}},"x":{}}"#,
            r#"{"statusChanged":{}}"#,
            r#"{"feature":[1]}"#,
            "[]",
        ] {
            assert!(serde_json::from_str::<Record>(bad).is_err(), "{bad}");
        }
    }
}
