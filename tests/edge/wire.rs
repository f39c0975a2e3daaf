//! Round trips of every wire type against JSON composed from the spec digest
//! (a2a-spec.md §2–§4, §6.3, §6.4): strict emit, lenient parse.

use a2a_tower::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Parses `src`, emits it again, and checks the emitted JSON equals `src`
/// exactly (as text, so key order, number text and omissions all count).
fn exact<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(src: &str) -> T {
    let parsed: T = serde_json::from_str(src).unwrap_or_else(|e| panic!("parse {src}: {e}"));
    let emitted = serde_json::to_string(&parsed).unwrap();
    assert_eq!(emitted, src, "emit of {}", std::any::type_name::<T>());
    let again: T = serde_json::from_str(&emitted).unwrap();
    assert_eq!(again, parsed);
    parsed
}

/// Parses the lenient form and checks it emits the strict form.
fn lenient<T: Serialize + DeserializeOwned>(lenient: &str, strict: &str) {
    let parsed: T =
        serde_json::from_str(lenient).unwrap_or_else(|e| panic!("parse {lenient}: {e}"));
    assert_eq!(serde_json::to_string(&parsed).unwrap(), strict);
}

// §2.3
#[test]
fn agent_card_example() {
    let card: AgentCard = exact(
        r#"{"name":"Invoice Agent","description":"Extracts and validates invoice data.","supportedInterfaces":[{"url":"https://agents.example.net/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"https://agents.example.net/a2a/rest","protocolBinding":"HTTP+JSON","tenant":"acme","protocolVersion":"1.0"}],"provider":{"organization":"Example Ltd","url":"https://example.net"},"version":"0.4.0","documentationUrl":"https://example.net/docs","capabilities":{"streaming":true,"pushNotifications":false,"extensions":[{"uri":"urn:x","description":"d","required":true,"params":{"k":1.50}}],"extendedAgentCard":false},"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},"securityRequirements":[{"schemes":{"bearer":{"list":[]}}}],"defaultInputModes":["text/plain","application/pdf"],"defaultOutputModes":["application/json"],"skills":[{"id":"extract","name":"Extract invoice","description":"Returns line items as JSON.","tags":["invoice","ocr"],"examples":["Extract the totals from this PDF"],"inputModes":["application/pdf"],"outputModes":["application/json"],"securityRequirements":[{"schemes":{"bearer":{"list":["read"]}}}]}],"signatures":[{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"c2ln","header":{"kid":"k1"}}],"iconUrl":"https://example.net/icon.png"}"#,
    );
    assert_eq!(card.capabilities.streaming, Some(true));
    // proto3 `optional`: an explicit false is kept.
    assert_eq!(card.capabilities.push_notifications, Some(false));
}

#[test]
fn card_required_arrays_always_emitted() {
    let v = serde_json::to_value(AgentCard::default()).unwrap();
    for k in [
        "supportedInterfaces",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ] {
        assert_eq!(v[k], json!([]), "{k}");
    }
    assert_eq!(v["capabilities"], json!({}));
    assert!(v.get("securitySchemes").is_none());
    assert!(v.get("signatures").is_none());
}

// §2.4: every scheme kind and every OAuth flow.
#[test]
fn security_schemes_every_kind() {
    exact::<SecurityScheme>(
        r#"{"apiKeySecurityScheme":{"description":"k","location":"header","name":"X-Key"}}"#,
    );
    exact::<SecurityScheme>(r#"{"httpAuthSecurityScheme":{"scheme":"Basic"}}"#);
    exact::<SecurityScheme>(
        r#"{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://id.example/.well-known/openid-configuration"}}"#,
    );
    exact::<SecurityScheme>(r#"{"mtlsSecurityScheme":{"description":"client cert"}}"#);
    exact::<SecurityScheme>(r#"{"mtlsSecurityScheme":{}}"#);
    for flows in [
        r#"{"authorizationCode":{"authorizationUrl":"https://a/auth","tokenUrl":"https://a/token","refreshUrl":"https://a/r","scopes":{"read":"Read"},"pkceRequired":true}}"#,
        r#"{"clientCredentials":{"tokenUrl":"https://a/token","scopes":{}}}"#,
        r#"{"deviceCode":{"deviceAuthorizationUrl":"https://a/device","tokenUrl":"https://a/token","scopes":{"x":"y"}}}"#,
        r#"{"implicit":{"authorizationUrl":"https://a/auth","scopes":{"x":"y"}}}"#,
        r#"{"password":{"tokenUrl":"https://a/token"}}"#,
    ] {
        exact::<SecurityScheme>(&format!(
            r#"{{"oauth2SecurityScheme":{{"flows":{flows},"oauth2MetadataUrl":"https://a/.well-known/oauth-authorization-server"}}}}"#
        ));
    }
    // Zero or two members of a oneof are invalid.
    assert!(serde_json::from_str::<SecurityScheme>("{}").is_err());
    assert!(
        serde_json::from_str::<SecurityScheme>(
            r#"{"mtlsSecurityScheme":{},"httpAuthSecurityScheme":{"scheme":"Basic"}}"#
        )
        .is_err()
    );
    // snake_case member names are accepted.
    lenient::<SecurityScheme>(
        r#"{"api_key_security_scheme":{"location":"query","name":"k"}}"#,
        r#"{"apiKeySecurityScheme":{"location":"query","name":"k"}}"#,
    );
}

#[test]
fn security_requirement_list_form_and_bare_array() {
    exact::<SecurityRequirement>(r#"{"schemes":{"google":{"list":["openid","email"]}}}"#);
    lenient::<SecurityRequirement>(
        r#"{"schemes":{"google":["openid"],"b":null}}"#,
        r#"{"schemes":{"b":{"list":[]},"google":{"list":["openid"]}}}"#,
    );
}

// §3.1
#[test]
fn task_example() {
    exact::<Task>(
        r#"{"id":"7d0c","contextId":"c41a","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m-9","role":"ROLE_AGENT","parts":[{"text":"Which currency?"}]},"timestamp":"2026-03-01T09:30:00.250Z"},"artifacts":[{"artifactId":"a-1","name":"n","description":"d","parts":[{"data":{"EUR":9.21}}],"metadata":{"m":true},"extensions":["urn:x"]}],"history":[{"messageId":"m-1","contextId":"c41a","taskId":"7d0c","role":"ROLE_USER","parts":[{"text":"Convert 10"}],"metadata":{"k":"v"},"extensions":["urn:x"],"referenceTaskIds":["t-0"]}],"metadata":{"n":12345678901234567890.000}}"#,
    );
}

#[test]
fn every_task_state_by_name_and_number() {
    let names = [
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    ];
    for (n, name) in names.iter().enumerate() {
        let by_name: TaskState = serde_json::from_value(json!(name)).unwrap();
        let by_num: TaskState = serde_json::from_value(json!(n)).unwrap();
        assert_eq!(by_name, by_num);
        assert_eq!(serde_json::to_value(by_name).unwrap(), json!(name));
    }
    let terminal: Vec<_> = names
        .iter()
        .filter(|n| n.parse::<TaskState>().unwrap().is_terminal())
        .collect();
    assert_eq!(
        terminal,
        [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_REJECTED"
        ]
        .iter()
        .collect::<Vec<_>>()
    );
    assert!(serde_json::from_value::<TaskState>(json!("completed")).is_err());
    assert!(serde_json::from_value::<TaskState>(json!(42)).is_err());
    for (n, name) in ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]
        .iter()
        .enumerate()
    {
        assert_eq!(
            serde_json::from_value::<Role>(json!(n)).unwrap().as_str(),
            *name
        );
    }
}

// §3.3
#[test]
fn parts_every_kind() {
    exact::<Vec<Part>>(
        r#"[{"text":"Summarise this","mediaType":"text/plain"},{"raw":"JVBERi0xLjcK","filename":"q1.pdf","mediaType":"application/pdf"},{"url":"https://files.example.net/q1.pdf","filename":"q1.pdf","mediaType":"application/pdf"},{"data":{"currency":"EUR","amount":10},"mediaType":"application/json"},{"data":[1,"two",null,false],"metadata":{"k":0.1}}]"#,
    );
}

// §3.0: lenient parsing.
#[test]
fn lenient_message() {
    lenient::<Message>(
        r#"{"message_id":"m","context_id":null,"task_id":"t","role":1,"parts":[{"text":"x"}],"extensions":null,"reference_task_ids":["a"],"kind":"message"}"#,
        r#"{"messageId":"m","taskId":"t","role":"ROLE_USER","parts":[{"text":"x"}],"referenceTaskIds":["a"]}"#,
    );
}

#[test]
fn timestamps_any_offset_emitted_utc_millis() {
    lenient::<TaskStatus>(
        r#"{"state":"TASK_STATE_WORKING","timestamp":"2026-03-01T11:30:00.123456789+02:00"}"#,
        r#"{"state":"TASK_STATE_WORKING","timestamp":"2026-03-01T09:30:00.123Z"}"#,
    );
    assert!(serde_json::from_str::<TaskStatus>(r#"{"timestamp":"soon"}"#).is_err());
}

// §3.5, §6.4
#[test]
fn stream_responses() {
    exact::<StreamResponse>(
        r#"{"task":{"id":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}"#,
    );
    exact::<StreamResponse>(
        r#"{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}"#,
    );
    exact::<StreamResponse>(
        r#"{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part 1"}]},"append":true,"lastChunk":true,"metadata":{}}}"#,
    );
    exact::<StreamResponse>(
        r#"{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}"#,
    );
    // `lastChunk: false` is a default and is omitted.
    lenient::<StreamResponse>(
        r#"{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"lastChunk":false}}"#,
        r#"{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]}}}"#,
    );
    assert!(serde_json::from_str::<StreamResponse>("{}").is_err());
}

#[test]
fn send_message_response() {
    exact::<SendMessageResponse>(
        r#"{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-01T09:31:02.004Z"},"artifacts":[{"artifactId":"a-1","parts":[{"data":{"EUR":9.21}}]}]}}"#,
    );
    exact::<SendMessageResponse>(
        r#"{"message":{"messageId":"m","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}"#,
    );
}

// §3.7
#[test]
fn requests() {
    exact::<SendMessageRequest>(
        r#"{"tenant":"acme","message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"Convert 10 USD"}]},"configuration":{"acceptedOutputModes":["application/json"],"taskPushNotificationConfig":{"url":"https://hook.example/a2a","token":"tok","authentication":{"scheme":"Bearer","credentials":"s3cret"}},"historyLength":0,"returnImmediately":true},"metadata":{"trace":"x"}}"#,
    );
    exact::<GetTaskRequest>(r#"{"id":"t-1","historyLength":3}"#);
    exact::<ListTasksRequest>(
        r#"{"tenant":"t","contextId":"c","status":"TASK_STATE_WORKING","pageSize":10,"pageToken":"p","historyLength":0,"statusTimestampAfter":"2026-03-01T00:00:00.000Z","includeArtifacts":false}"#,
    );
    lenient::<ListTasksRequest>(
        r#"{"lastUpdatedAfter":"2026-03-01T00:00:00Z","status":2}"#,
        r#"{"status":"TASK_STATE_WORKING","statusTimestampAfter":"2026-03-01T00:00:00.000Z"}"#,
    );
    exact::<ListTasksResponse>(r#"{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}"#);
    lenient::<ListTasksResponse>(
        r#"{"tasks":null}"#,
        r#"{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}"#,
    );
    exact::<CancelTaskRequest>(r#"{"id":"t-1","metadata":{"why":"user"}}"#);
    exact::<SubscribeToTaskRequest>(r#"{"tenant":"a","id":"t-1"}"#);
    exact::<TaskPushNotificationConfig>(
        r#"{"tenant":"a","id":"cfg-1","taskId":"t-1","url":"https://hook","token":"tok","authentication":{"scheme":"Basic","credentials":"dTpw"}}"#,
    );
    exact::<TaskPushNotificationConfigId>(r#"{"taskId":"t-1","id":"cfg-1"}"#);
    exact::<ListTaskPushNotificationConfigsRequest>(
        r#"{"taskId":"t-1","pageSize":5,"pageToken":"x"}"#,
    );
    exact::<ListTaskPushNotificationConfigsResponse>(
        r#"{"configs":[{"taskId":"t","url":"https://h"}],"nextPageToken":""}"#,
    );
    exact::<GetExtendedAgentCardRequest>(r#"{}"#);
    exact::<GetExtendedAgentCardRequest>(r#"{"tenant":"x"}"#);
}

#[test]
fn unknown_fields_are_ignored() {
    let v: Value = json!({"name":"a","url":"https://old","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",
        "description":"d","version":"1","capabilities":{"stateTransitionHistory":true},
        "defaultInputModes":[],"defaultOutputModes":[],"skills":[],"supportedInterfaces":[]});
    let card: AgentCard = serde_json::from_value(v).unwrap();
    assert_eq!(card.name, "a");
}
