//! [`FeatureRecord`]: a record that belongs to a feature built on the log
//! (managed runs, the delivery queue, a host's own), stored by the log
//! without the log knowing its type.

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::Record;
use crate::types::Message;

/// The member of a feature record's body that admits a message to the
/// task's history.
const MESSAGE: &str = "message";

/// The member of a feature record's body that holds the task.
const HOLD: &str = "hold";

/// One fact of a feature, committed with a task's records: a name (the
/// record's tag, `{"<name>": {…}}` in the stored JSON, as every record's)
/// and a JSON object the feature reads back with
/// [`decode`](Self::decode). The log reads two members only, and only
/// these change the task:
///
/// - `message` ([`admitting`](Self::admitting)): the message joins the
///   task's history, as [`Record::MessageAdmitted`](super::Record::MessageAdmitted)
///   does (an answer that carries its message);
/// - `hold` ([`holding`](Self::holding)): the feature holds the task (see
///   [`Hold`]), so that start-up recovery of the engine leaves it to the
///   feature.
///
/// ```
/// use a2a_tower::log::{FeatureRecord, Hold, Record};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// struct Rated { stars: u8 }
///
/// let r = Record::Feature(FeatureRecord::new("rated", &Rated { stars: 5 }).unwrap());
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"rated":{"stars":5}}"#);
/// let Record::Feature(back) = serde_json::from_str::<Record>(&json).unwrap() else { panic!() };
/// assert_eq!(back.name(), "rated");
/// assert_eq!(back.decode::<Rated>().unwrap(), Rated { stars: 5 });
///
/// let held = FeatureRecord::new("parked", &Rated { stars: 1 }).unwrap().holding(Hold::until_admitted("parking"));
/// assert_eq!(
///     serde_json::to_string(&Record::Feature(held)).unwrap(),
///     r#"{"parked":{"hold":{"by":"parking","untilAdmitted":true},"stars":1}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureRecord {
    /// `{"<name>": {body}}`, the form the feature's typed records decode
    /// from by reference (the log's members kept apart).
    tagged: Value,
    /// Boxed: a `Message` inline would make the record, and so every
    /// [`Record`](super::Record), a third larger.
    message: Option<Box<Message>>,
    hold: Option<Hold>,
}

/// A feature's hold on a task: while it holds, the task is the feature's to
/// run (or to wait for), and the engine's start-up recovery does not close
/// it. A hold that lasts until a message is admitted (a queued task) ends
/// with the task's next [`MessageAdmitted`](super::Record::MessageAdmitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    /// The feature holding the task.
    pub by: String,
    /// The hold ends when a message is admitted to the task.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_admitted: bool,
}

impl Hold {
    /// A hold by `feature` for the rest of the task's life (a managed run:
    /// the task is live while it waits for its answers).
    pub fn always(feature: impl Into<String>) -> Self {
        Self {
            by: feature.into(),
            until_admitted: false,
        }
    }

    /// A hold by `feature` until a message is admitted (a queued task).
    pub fn until_admitted(feature: impl Into<String>) -> Self {
        Self {
            by: feature.into(),
            until_admitted: true,
        }
    }
}

impl FeatureRecord {
    /// The record `name` with `body`, which must serialize to a JSON object
    /// without the members `message` and `hold` (the log's; set them with
    /// [`admitting`](Self::admitting) and [`holding`](Self::holding)). The
    /// name must not be one of the log's own records' (`created`,
    /// `statusChanged`, …), which would read back as that record.
    pub fn new(name: impl Into<String>, body: &impl Serialize) -> Result<Self, serde_json::Error> {
        let mut tagged = Map::with_capacity(1);
        tagged.insert(name.into(), serde_json::to_value(body)?);
        Self::checked(tagged)
    }

    /// A feature's typed record, whose serde form is one externally tagged
    /// object (an enum's `{"<variant>": {…}}`): the tag becomes the name.
    pub fn tagged(record: &impl Serialize) -> Result<Self, serde_json::Error> {
        match serde_json::to_value(record)? {
            Value::Object(tagged) => Self::checked(tagged),
            _ => Err(Self::not_tagged()),
        }
    }

    /// `tagged` as a record, if it is one name of a feature's over an object
    /// without the log's members.
    fn checked(tagged: Map<String, Value>) -> Result<Self, serde_json::Error> {
        let mut entries = tagged.iter();
        let (Some((name, Value::Object(body))), None) = (entries.next(), entries.next()) else {
            return Err(Self::not_tagged());
        };
        if Record::CORE.contains(&name.as_str()) {
            return Err(serde_json::Error::custom(format!(
                "`{name}` is a record of the log's own, not a feature's"
            )));
        }
        if body.contains_key(MESSAGE) || body.contains_key(HOLD) {
            return Err(serde_json::Error::custom(
                "a feature record's body must not have the log's `message` or `hold`",
            ));
        }
        Ok(Self {
            tagged: Value::Object(tagged),
            message: None,
            hold: None,
        })
    }

    fn not_tagged() -> serde_json::Error {
        serde_json::Error::custom("a feature record is one {\"<name>\": {…}} object")
    }

    /// The record with `message`, which joins the task's history.
    #[must_use]
    pub fn admitting(mut self, message: Message) -> Self {
        self.message = Some(Box::new(message));
        self
    }

    /// The record with the feature's hold on the task.
    #[must_use]
    pub fn holding(mut self, hold: Hold) -> Self {
        self.hold = Some(hold);
        self
    }

    /// The record's name.
    pub fn name(&self) -> &str {
        self.entry().map_or("", |(name, _)| name.as_str())
    }

    /// The body (a JSON object), without the log's members.
    pub fn body(&self) -> &Value {
        self.entry().map_or(&Value::Null, |(_, body)| body)
    }

    /// The one member of `tagged` (always there: the constructors check).
    fn entry(&self) -> Option<(&String, &Value)> {
        self.tagged.as_object().and_then(|t| t.iter().next())
    }

    /// The message the record admits, if any.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_deref()
    }

    /// The hold the record sets, if any.
    pub fn hold(&self) -> Option<&Hold> {
        self.hold.as_ref()
    }

    /// The body as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(self.body())
    }

    /// The record as the feature's typed, externally tagged `T` (the
    /// inverse of [`tagged`](Self::tagged)).
    pub fn decode_tagged<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.tagged)
    }

    /// An estimate of the bytes the record holds (memory bounds).
    pub(crate) fn approx_bytes(&self) -> usize {
        super::projection::value_bytes(&self.tagged)
            + self
                .message
                .as_deref()
                .map_or(0, super::projection::message_bytes)
            + self.hold.as_ref().map_or(0, |h| h.by.len())
    }

    /// Serializes the record's value (the body with the log's members: the
    /// hold first, the message last).
    pub(crate) fn serialize_body<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let body = self.body().as_object();
        let extra = usize::from(self.hold.is_some()) + usize::from(self.message.is_some());
        let mut map = s.serialize_map(Some(body.map_or(0, Map::len) + extra))?;
        if let Some(hold) = &self.hold {
            map.serialize_entry(HOLD, hold)?;
        }
        for (k, v) in body.into_iter().flatten() {
            map.serialize_entry(k, v)?;
        }
        if let Some(message) = &self.message {
            map.serialize_entry(MESSAGE, message)?;
        }
        map.end()
    }

    /// Reads the record's value (see [`serialize_body`](Self::serialize_body)).
    pub(crate) fn deserialize_body<'de, D: Deserializer<'de>>(
        name: &str,
        d: D,
    ) -> Result<Self, D::Error> {
        let mut body = Map::<String, Value>::deserialize(d)?;
        // `shift_remove`: the other members keep their order.
        let message = body
            .shift_remove(MESSAGE)
            .map(|m| Message::deserialize(m).map(Box::new))
            .transpose()
            .map_err(D::Error::custom)?;
        let hold = body
            .shift_remove(HOLD)
            .map(Hold::deserialize)
            .transpose()
            .map_err(D::Error::custom)?;
        let mut tagged = Map::with_capacity(1);
        tagged.insert(name.to_owned(), Value::Object(body));
        Ok(Self {
            tagged: Value::Object(tagged),
            message,
            hold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    #[test]
    fn a_feature_record_does_not_set_the_size_of_every_record() {
        // Every record is as large as its largest variant: a feature's
        // (rare) must not outgrow a status change's (two per task).
        assert!(size_of::<FeatureRecord>() <= size_of::<crate::types::TaskStatus>());
        assert!(size_of::<Record>() <= size_of::<crate::types::TaskStatus>() + 8);
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Journal {
        #[serde(rename_all = "camelCase")]
        Answered { key: String, answer: Value },
    }

    #[test]
    fn tagged_records_keep_their_json_and_members() {
        let typed = Journal::Answered {
            key: "k".into(),
            answer: serde_json::from_str("1.50").unwrap(),
        };
        let r = FeatureRecord::tagged(&typed)
            .unwrap()
            .admitting(Message::user("m", "yes"));
        let json = serde_json::to_string(&Record::Feature(r.clone())).unwrap();
        assert!(
            json.starts_with(r#"{"answered":{"key":"k","answer":1.50,"message":{"#),
            "{json}"
        );
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Record::Feature(r.clone()));
        let Record::Feature(back) = back else {
            unreachable!()
        };
        assert_eq!(back.decode_tagged::<Journal>().unwrap(), typed);
        assert_eq!(back.message().unwrap().message_id, "m");
    }

    #[test]
    fn reading_the_logs_members_keeps_the_others_order() {
        let json = r#"{"runStarted":{"hold":{"by":"managed"},"program":"p","root":"r","input":{"n":1.50}}}"#;
        let record: Record = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), json);
    }

    #[test]
    fn the_logs_members_are_refused_in_a_body() {
        assert!(FeatureRecord::new("x", &serde_json::json!({"message": 1})).is_err());
        assert!(FeatureRecord::new("x", &serde_json::json!({"hold": 1})).is_err());
        assert!(FeatureRecord::new("x", &serde_json::json!([1])).is_err());
        assert!(FeatureRecord::new("statusChanged", &serde_json::json!({})).is_err());
    }
}
