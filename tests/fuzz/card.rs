//! The agent-card parser (serde of `types::AgentCard`, as the client's card
//! resolver reads it) and the card's validation (`AgentCardLayer`): any
//! card that parses serializes to a text that parses to the same card; the
//! layer either refuses it with a `ConfigError` or serves a card whose bytes
//! parse back to it.

use a2a_tower::card::{AgentCardLayer, StackCapabilities};
use a2a_tower::types::{AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill};
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;
use serde_json::{Value, json};

use crate::harness::{Text, bounded, bytes, deep, edited, fuzz, json};

fn seeds() -> Vec<Value> {
    let mut card = AgentCard::new("Fuzz", "A card with everything", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/rest"))
        .with_interface(AgentInterface::grpc("agent.example:50051"))
        .with_skill(AgentSkill::new("s", "Skill", "Does things"))
        .with_streaming(true)
        .with_push_notifications(true);
    card.provider = Some(AgentProvider {
        organization: "Org".into(),
        url: "https://org.example".into(),
    });
    card.documentation_url = Some("https://docs.example".into());
    card.capabilities.extensions.push(AgentExtension {
        uri: "https://ext.example/v1".into(),
        required: true,
        ..Default::default()
    });
    let mut full = serde_json::to_value(&card).unwrap();
    full["securitySchemes"] = json!({
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": "https://auth.example/token", "scopes": {"read": "Read"}}}}}
    });
    full["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    let minimal = serde_json::to_value(AgentCard::new("M", "Minimal", "0")).unwrap();
    vec![full, minimal]
}

fn cards() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => bytes(),
        1 => json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        9 => edited(seeds()),
        1 => deep(r#"{"name":"n","capabilities":{"extensions":[{"uri":"u","params":"#),
    ]
}

fn check(text: &[u8], stack: StackCapabilities) -> TestCaseResult {
    let parsed = bounded(text.len(), 128, 64 * 1024, || {
        serde_json::from_slice::<AgentCard>(text)
    });
    let Ok(card) = parsed else {
        return Ok(());
    };
    let again = serde_json::to_vec(&card).unwrap();
    let back: AgentCard = serde_json::from_slice(&again).expect("a serialized card parses");
    prop_assert_eq!(&back, &card);
    let layer = bounded(again.len(), 128, 64 * 1024, || {
        AgentCardLayer::with_capabilities(&card, stack)
    });
    if let Ok(layer) = layer {
        let served: AgentCard =
            serde_json::from_slice(&layer.card_bytes()).expect("served bytes parse");
        prop_assert_eq!(&served, &*layer.card());
    }
    Ok(())
}

#[test]
fn every_seed_is_a_valid_card() {
    for seed in seeds() {
        let card: AgentCard = serde_json::from_value(seed.clone()).unwrap();
        if card.skills.is_empty() {
            continue; // the minimal seed: a card validation refuses
        }
        let stack = StackCapabilities::new().push_notifications(true).grpc(true);
        let _layer = AgentCardLayer::with_capabilities(&card, stack)
            .unwrap_or_else(|e| panic!("{seed}: {e}"));
    }
}

#[test]
fn card_parser_and_validation() {
    let stack = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(s, p, g)| {
        StackCapabilities::new()
            .streaming(s)
            .push_notifications(p)
            .grpc(g)
    });
    fuzz(
        "card",
        2000,
        (cards().prop_map(Text), stack),
        |(text, stack)| check(&text.0, stack),
    );
}
