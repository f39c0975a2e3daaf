//! AFL target: the JSON-RPC envelope and params decoder. Any decoded
//! request's canonical encoding decodes to the same request; any refusal
//! is one of the four decoder kinds.

use a2a_tower::ErrorKind;
use a2a_tower::jsonrpc::codec::decode_request;

fn main() {
    afl::fuzz!(|body: &[u8]| {
        match decode_request(body) {
            Ok((id, op)) => {
                let again = a2a_tower_afl::envelope(&id, &op);
                let (id2, op2) = decode_request(&again).expect("the canonical encoding decodes");
                assert_eq!((id2, op2), (id, op));
            }
            Err(e) => assert!(matches!(
                e.error.kind(),
                ErrorKind::ParseError
                    | ErrorKind::InvalidRequest
                    | ErrorKind::MethodNotFound
                    | ErrorKind::InvalidParams
            )),
        }
    });
}
