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

impl Timestamp {
    /// The RFC 3339 text written without `fmt` (a hot path: every status
    /// and record carries a timestamp); `None` outside years 0–9999.
    fn rfc3339(self) -> Option<[u8; 24]> {
        let dt = OffsetDateTime::from_unix_timestamp_nanos(self.nanos).ok()?;
        let year = u32::try_from(dt.year()).ok().filter(|y| *y <= 9999)?;
        let mut out = *b"0000-00-00T00:00:00.000Z";
        for (range, value) in [
            (0..4, year),
            (5..7, u32::from(u8::from(dt.month()))),
            (8..10, u32::from(dt.day())),
            (11..13, u32::from(dt.hour())),
            (14..16, u32::from(dt.minute())),
            (17..19, u32::from(dt.second())),
            (20..23, u32::from(dt.millisecond())),
        ] {
            let mut v = value;
            for slot in out[range].iter_mut().rev() {
                *slot = b'0' + (v % 10) as u8;
                v /= 10;
            }
        }
        Some(out)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = self.rfc3339() {
            return f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?);
        }
        let Ok(dt) = OffsetDateTime::from_unix_timestamp_nanos(self.nanos) else {
            return Err(fmt::Error);
        };
        write_formatted(f, &dt)
    }
}

/// The text of `dt` written with `fmt`: for years before 0, and the
/// reference the `fmt`-free text is tested against.
fn write_formatted(f: &mut impl fmt::Write, dt: &OffsetDateTime) -> fmt::Result {
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

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.rfc3339() {
            Some(text) => match std::str::from_utf8(&text) {
                Ok(text) => s.serialize_str(text),
                Err(_) => s.collect_str(self),
            },
            None => s.collect_str(self),
        }
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

    /// The `fmt`-free text equals the `write!` one it replaces.
    fn slow(t: Timestamp) -> String {
        let dt = OffsetDateTime::from_unix_timestamp_nanos(t.nanos).unwrap();
        let mut text = String::new();
        write_formatted(&mut text, &dt).unwrap();
        text
    }

    #[test]
    fn fast_text_equals_the_formatted_one() {
        let mut ms: i64 = -62_135_596_800_000; // 0001-01-01T00:00:00Z
        let end: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
        // Steps that are prime in milliseconds, so every field varies.
        while ms <= end {
            let t = Timestamp::from_unix_millis(ms);
            assert_eq!(t.to_string(), slow(t));
            assert_eq!(
                serde_json::to_string(&t).unwrap(),
                format!("\"{}\"", slow(t))
            );
            ms += 7_919_993_311;
        }
        for ms in [0, -1, 951_782_400_000, 4_107_542_399_999, end] {
            let t = Timestamp::from_unix_millis(ms);
            assert_eq!(t.to_string(), slow(t), "{ms}");
        }
    }

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
