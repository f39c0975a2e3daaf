//! The agent card: the 0.3 fields beside the 1.0 ones (for a server
//! serving both), and a 0.3 card read as a 1.0 one (for a client).

use serde_json::{Map, Value, json};

use super::objects::obj;

/// The protocol version a 0.3 card states.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// Whether a 1.0 interface binding exists in 0.3 over HTTP with the same
/// wire shape family (JSON-RPC, HTTP+JSON): gRPC 0.3 is another service.
fn served_in_v03(binding: &str) -> bool {
    matches!(binding, "JSONRPC" | "HTTP+JSON")
}

/// Whether an interface's `protocolVersion` is a 0.3 one.
pub fn is_v03_version(version: &str) -> bool {
    version == "0.3" || version.starts_with("0.3.")
}

/// A 1.0 card with the 0.3 fields added: `protocolVersion` `0.3.0`,
/// `url` and `preferredTransport` (the first JSON-RPC or HTTP+JSON
/// interface), `additionalInterfaces` (each of them),
/// `supportsAuthenticatedExtendedCard`, `security`, and the members 0.3
/// clients require (`tags` of each skill, the default modes); each such
/// interface is also listed in `supportedInterfaces` with
/// `protocolVersion` `0.3`, after the 1.0 ones.
pub fn card_from_v10(card: &Value) -> Value {
    let mut c = obj(card);
    let ifaces: Vec<Map<String, Value>> = c
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter(|i| {
            let binding = i
                .get("protocolBinding")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = i
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            served_in_v03(binding) && !is_v03_version(version)
        })
        .cloned()
        .collect();
    if let Some(first) = ifaces.first() {
        c.insert("url".into(), first.get("url").cloned().unwrap_or_default());
        c.insert(
            "preferredTransport".into(),
            first.get("protocolBinding").cloned().unwrap_or_default(),
        );
        let additional: Vec<Value> = ifaces
            .iter()
            .map(|i| json!({"url": i.get("url"), "transport": i.get("protocolBinding")}))
            .collect();
        c.insert("additionalInterfaces".into(), Value::Array(additional));
        if let Some(Value::Array(all)) = c.get_mut("supportedInterfaces") {
            for i in &ifaces {
                let mut v03 = i.clone();
                v03.insert("protocolVersion".into(), "0.3".into());
                all.push(Value::Object(v03));
            }
        }
    }
    c.insert("protocolVersion".into(), PROTOCOL_VERSION.into());
    let extended = card
        .pointer("/capabilities/extendedAgentCard")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    c.insert("supportsAuthenticatedExtendedCard".into(), extended.into());
    c.entry("capabilities").or_insert_with(|| json!({}));
    for key in ["defaultInputModes", "defaultOutputModes", "skills"] {
        c.entry(key).or_insert_with(|| json!([]));
    }
    if let Some(Value::Array(skills)) = c.get_mut("skills") {
        for s in skills.iter_mut().filter_map(Value::as_object_mut) {
            s.entry("tags").or_insert_with(|| json!([]));
            s.entry("description").or_insert_with(|| json!(""));
        }
    }
    if let Some(Value::Array(reqs)) = card.get("securityRequirements") {
        let security: Vec<Value> = reqs
            .iter()
            .map(|r| {
                let schemes = obj(r.get("schemes").unwrap_or(&Value::Null));
                let m: Map<String, Value> = schemes
                    .into_iter()
                    .map(|(k, v)| (k, v.get("list").cloned().unwrap_or(json!([]))))
                    .collect();
                Value::Object(m)
            })
            .collect();
        c.insert("security".into(), Value::Array(security));
    }
    Value::Object(c)
}

/// A card as a 1.0 client reads it: a card with `supportedInterfaces` is
/// taken as it is; a 0.3 card (none, but `url`) gets them from `url` with
/// `preferredTransport` (default JSONRPC) and `additionalInterfaces`, each
/// with the card's `protocolVersion` (default `0.3`), plus
/// `capabilities.extendedAgentCard` from
/// `supportsAuthenticatedExtendedCard` and `securityRequirements` from
/// `security`.
pub fn card_to_v10(card: &Value) -> Value {
    let mut c = obj(card);
    let has_v10 = c
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if has_v10 || !c.contains_key("url") {
        return Value::Object(c);
    }
    let version = c
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("0.3")
        .to_owned();
    let mut ifaces: Vec<(String, String)> = Vec::new();
    let url = c
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let preferred = c
        .get("preferredTransport")
        .and_then(Value::as_str)
        .unwrap_or("JSONRPC")
        .to_owned();
    ifaces.push((url, preferred));
    for i in c
        .get("additionalInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let url = i
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let t = i
            .get("transport")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if !ifaces.contains(&(url.clone(), t.clone())) {
            ifaces.push((url, t));
        }
    }
    let list: Vec<Value> = ifaces
        .into_iter()
        .map(|(url, t)| json!({"url": url, "protocolBinding": t, "protocolVersion": version}))
        .collect();
    c.insert("supportedInterfaces".into(), Value::Array(list));
    if card.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true)) {
        let caps = c.entry("capabilities").or_insert_with(|| json!({}));
        if let Some(caps) = caps.as_object_mut() {
            caps.insert("extendedAgentCard".into(), true.into());
        }
    }
    if let Some(Value::Array(sec)) = card.get("security") {
        let reqs: Vec<Value> = sec
            .iter()
            .map(|r| {
                let m: Map<String, Value> = obj(r)
                    .into_iter()
                    .map(|(k, v)| (k, json!({ "list": v })))
                    .collect();
                json!({ "schemes": m })
            })
            .collect();
        c.insert("securityRequirements".into(), Value::Array(reqs));
    }
    Value::Object(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_served_card_carries_both() {
        let c10 = json!({"name": "E", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://h/g", "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true},
            "skills": [{"id": "s", "name": "S"}],
            "securityRequirements": [{"schemes": {"bearer": {"list": ["r"]}}}]});
        let c = card_from_v10(&c10);
        assert_eq!(c["url"], "http://h/");
        assert_eq!(c["preferredTransport"], "JSONRPC");
        assert_eq!(c["additionalInterfaces"][1]["transport"], "HTTP+JSON");
        assert_eq!(c["additionalInterfaces"].as_array().unwrap().len(), 2);
        assert_eq!(c["protocolVersion"], "0.3.0");
        assert_eq!(c["skills"][0]["tags"], json!([]));
        assert_eq!(c["defaultInputModes"], json!([]));
        assert_eq!(c["security"], json!([{"bearer": ["r"]}]));
        let all = c["supportedInterfaces"].as_array().unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[3]["protocolVersion"], "0.3");
        // Read back by a client: the 1.0 interfaces are there as they were.
        assert_eq!(
            card_to_v10(&c)["supportedInterfaces"][0],
            c10["supportedInterfaces"][0]
        );
    }

    #[test]
    fn a_v03_card_is_read_as_v10() {
        let c03 = json!({"name": "P", "url": "http://p/", "preferredTransport": "JSONRPC",
            "protocolVersion": "0.3.0", "supportsAuthenticatedExtendedCard": true,
            "additionalInterfaces": [{"url": "http://p/", "transport": "JSONRPC"},
                {"url": "http://p/rest", "transport": "HTTP+JSON"}],
            "security": [{"bearer": []}]});
        let c = card_to_v10(&c03);
        assert_eq!(
            c["supportedInterfaces"],
            json!([
                {"url": "http://p/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
                {"url": "http://p/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"}
            ])
        );
        assert_eq!(c["capabilities"]["extendedAgentCard"], true);
        assert_eq!(
            c["securityRequirements"],
            json!([{"schemes": {"bearer": {"list": []}}}])
        );
        assert!(is_v03_version("0.3.0") && is_v03_version("0.3") && !is_v03_version("1.0"));
    }
}
