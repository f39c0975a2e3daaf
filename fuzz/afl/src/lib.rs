//! Helpers of the AFL targets.

use a2a_tower::Operation;
use a2a_tower::jsonrpc::codec::Id;
use serde_json::json;

/// The canonical JSON-RPC request body of `op` under `id`.
pub fn envelope(id: &Id, op: &Operation) -> Vec<u8> {
    let params = op.to_params().expect("params serialize");
    let body =
        json!({"jsonrpc": "2.0", "id": id.to_value(), "method": op.method(), "params": params});
    serde_json::to_vec(&body).expect("a body serializes")
}
