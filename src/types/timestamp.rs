//! `google.protobuf.Timestamp` in its ProtoJSON form.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A point in time, written as RFC 3339 in UTC with millisecond precision
/// (`2026-03-01T09:30:00.250Z`) and parsed from any RFC 3339 value (any
/// fraction width, any offset).
///
/// ```
/// use a2a_tower::types::Timestamp;
/// let t: Timestamp = "2026-03-01T10:30:00.25+01:00".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-03-01T09:30:00.250Z");
/// assert_eq!(t, Timestamp::from_unix_millis(t.unix_millis()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Nanoseconds since the Unix epoch.
    nanos: i128,
}

/// The text was not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTimestamp;

impl fmt::Display for InvalidTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an RFC 3339 timestamp")
    }
}

impl std::error::Error for InvalidTimestamp {}

impl Timestamp {
    /// The current time, truncated to whole milliseconds (the wire precision).
    pub fn now() -> Self {
        Self::from(SystemTime::now()).truncated_to_millis()
    }

    /// A timestamp from milliseconds since the Unix epoch.
    pub const fn from_unix_millis(ms: i64) -> Self {
        Self {
            nanos: ms as i128 * 1_000_000,
        }
    }

    /// Milliseconds since the Unix epoch (rounded towards negative infinity).
    pub const fn unix_millis(self) -> i64 {
        self.nanos.div_euclid(1_000_000) as i64
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn unix_nanos(self) -> i128 {
        self.nanos
    }

    fn truncated_to_millis(self) -> Self {
        Self::from_unix_millis(self.unix_millis())
    }
}

impl From<SystemTime> for Timestamp {
    fn from(t: SystemTime) -> Self {
        let nanos = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        };
        Self { nanos }
    }
}

impl From<Timestamp> for SystemTime {
    fn from(t: Timestamp) -> Self {
        if t.nanos >= 0 {
            UNIX_EPOCH + Duration::from_nanos(t.nanos as u64)
        } else {
            UNIX_EPOCH - Duration::from_nanos((-t.nanos) as u64)
        }
    }
}

impl std::str::FromStr for Timestamp {
    type Err = InvalidTimestamp;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let dt = OffsetDateTime::parse(s.trim(), &Rfc3339).map_err(|_| InvalidTimestamp)?;
        Ok(Self {
            nanos: dt.unix_timestamp_nanos(),
        })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Ok(dt) = OffsetDateTime::from_unix_timestamp_nanos(self.nanos) else {
            return Err(fmt::Error);
        };
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            dt.year(),
            u8::from(dt.month()),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second(),
            dt.millisecond()
        )
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_any_fraction_and_offset() {
        for (input, want) in [
            ("2026-03-01T09:30:00Z", "2026-03-01T09:30:00.000Z"),
            ("2026-03-01T09:30:00.2Z", "2026-03-01T09:30:00.200Z"),
            ("2026-03-01T09:30:00.123456Z", "2026-03-01T09:30:00.123Z"),
            ("2026-03-01T09:30:00.123456789Z", "2026-03-01T09:30:00.123Z"),
            ("2026-03-01T04:30:00.5-05:00", "2026-03-01T09:30:00.500Z"),
            ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
        ] {
            let t: Timestamp = input.parse().unwrap();
            assert_eq!(t.to_string(), want, "{input}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!("yesterday".parse::<Timestamp>().is_err());
        assert!("2026-03-01".parse::<Timestamp>().is_err());
    }
}
