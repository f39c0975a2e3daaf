//! AFL target: the agent-card parser and validation. A parsed card
//! serializes to a text that parses to the same card; validation never panics.

use a2a_tower::AgentCardLayer;
use a2a_tower::types::AgentCard;

fn main() {
    afl::fuzz!(|text: &[u8]| {
        let Ok(card) = serde_json::from_slice::<AgentCard>(text) else {
            return;
        };
        let again = serde_json::to_vec(&card).expect("a card serializes");
        let back: AgentCard = serde_json::from_slice(&again).expect("a serialized card parses");
        assert_eq!(back, card);
        let _ = AgentCardLayer::new(&card);
    });
}
