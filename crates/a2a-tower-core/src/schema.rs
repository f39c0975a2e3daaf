//! [`Schema`]: a compiled JSON Schema that never fetches anything and compares
//! numbers by their exact text. Shared by managed tasks (inputs, answers,

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::{A2aError, ConfigError, ErrorKind};

/// Refuses every remote or file `$ref`: a schema can never make the server
/// fetch a URL or read a file.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("schema references are not retrieved ({uri})").into())
    }
}

/// A JSON Schema, compiled once.
///
/// ```
/// use a2a_tower::managed::Schema;
/// let s = Schema::new(serde_json::json!({"type": "integer", "maximum": 100})).unwrap();
/// assert!(s.check(&serde_json::json!(42)).is_ok());
/// assert!(s.check(&serde_json::json!(101)).is_err());
/// assert!(Schema::new(serde_json::json!({"$ref": "https://example.com/s.json"})).is_err());
/// ```
#[derive(Clone)]
pub struct Schema {
    value: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Schema").field(&self.value).finish()
    }
}

impl Schema {
    /// Compiles `schema`; a schema that is not valid, or that refers to a
    /// document outside itself, is a configuration error.
    pub fn new(schema: Value) -> Result<Self, ConfigError> {
        let validator = jsonschema::options()
            .with_retriever(NoRetrieval)
            .build(&schema)
            .map_err(|e| ConfigError::new(format!("invalid JSON Schema: {}", e.masked())))?;
        Ok(Self {
            value: Arc::new(schema),
            validator: Arc::new(validator),
        })
    }

    /// The unrestricted schema `true`.
    pub fn any() -> Self {
        Self::new(Value::Bool(true)).expect("`true` is a valid schema")
    }

    /// The schema as given.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The schema accepts exactly the strings (`{"type": "string"}`), so a
    /// text part is the value itself rather than JSON text.
    #[doc(hidden)]
    pub fn is_string(&self) -> bool {
        self.value.get("type").and_then(Value::as_str) == Some("string")
    }

    /// Checks `value`: InvalidParams naming every violation's instance path
    /// (under `field`) and what is wrong, without echoing the value.
    pub fn check(&self, value: &Value) -> Result<(), A2aError> {
        self.check_at(value, "")
    }

    #[doc(hidden)]
    pub fn check_at(&self, value: &Value, field: &str) -> Result<(), A2aError> {
        let mut err: Option<A2aError> = None;
        for e in self.validator.iter_errors(value).take(16) {
            let path = format!("{field}{}", e.instance_path().as_str());
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            let description = e.masked().to_string();
            err = Some(
                err.unwrap_or_else(|| {
                    A2aError::new(ErrorKind::InvalidParams)
                        .with_message("The value does not match its JSON Schema")
                })
                .with_violation(path, description),
            );
        }
        err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_the_instance_path() {
        let s = Schema::new(json!({
            "type": "object",
            "required": ["amount"],
            "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}},
            "additionalProperties": false
        }))
        .unwrap();
        let e = s.check(&json!({"amount": -1})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        assert_eq!(e.violations()[0].0, "/amount");
        let e = s
            .check_at(&json!({"amount": 1, "x": 2}), "input")
            .unwrap_err();
        assert_eq!(e.violations()[0].0, "input");
    }

    #[test]
    fn numbers_are_compared_exactly() {
        // `json!` would pass the literal through f64; parse the exact text.
        let schema = r#"{"type": "number", "maximum": 12345678901234567890.5}"#;
        let s = Schema::new(serde_json::from_str(schema).unwrap()).unwrap();
        let big: Value = serde_json::from_str("12345678901234567890.123456789").unwrap();
        assert!(s.check(&big).is_ok());
        let over: Value = serde_json::from_str("12345678901234567890.6").unwrap();
        assert!(s.check(&over).is_err());
    }

    #[test]
    fn references_are_never_fetched() {
        for r in ["https://example.com/s.json", "file:///etc/passwd"] {
            assert!(Schema::new(json!({"$ref": r})).is_err(), "{r}");
        }
        let local = json!({"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"});
        assert!(Schema::new(local).unwrap().check(&json!(3)).is_ok());
    }
}
