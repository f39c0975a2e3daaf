//! AFL target: the client's SSE parser. The first byte picks a chunk size;
//! the rest parsed whole and in chunks must give the same events and outcome.

use a2a_tower::client::sse::SseParser;

fn parse(stream: &[u8], chunk: usize) -> (Vec<a2a_tower::client::sse::SseEvent>, bool) {
    let mut p = SseParser::new(256);
    let mut out = Vec::new();
    for c in stream.chunks(chunk.max(1)) {
        if p.push(c, &mut out).is_err() {
            return (out, false);
        }
    }
    let ok = p.finish().is_ok();
    (out, ok)
}

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&chunk, stream)) = data.split_first() else {
            return;
        };
        let whole = parse(stream, stream.len());
        assert_eq!(parse(stream, usize::from(chunk % 16)), whole);
        for ev in &whole.0 {
            assert!(ev.data.len() <= 256);
        }
    });
}
