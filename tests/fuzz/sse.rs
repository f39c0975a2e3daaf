//! The client's SSE parser (`client::sse::SseParser`): arbitrary byte
//! streams give the same events and the same outcome however they are cut
//! into chunks (whole, at random points, byte by byte); no event is larger
//! than the bound; and streams encoded from events (any line endings,
//! comments, `id:` and `retry:` lines between) parse back to those events.

use a2a_tower::client::sse::{SseError, SseEvent, SseParser};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseResult;

use crate::harness::{Text, bounded, byte_mutated, fuzz};

type Outcome = (Vec<SseEvent>, Result<(), SseError>);

/// Parses `stream` cut at `cuts` (sorted offsets), within the allocation bound.
fn parse(stream: &[u8], cuts: &[usize], max: usize) -> Outcome {
    bounded(stream.len(), 64, 4096, || {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([stream.len()].iter()) {
            let cut = cut.clamp(from, stream.len());
            if let Err(e) = p.push(&stream[from..cut], &mut out) {
                return (out, Err(e));
            }
            from = cut;
        }
        let end = p.finish();
        (out, end)
    })
}

const PIECES: &[&[u8]] = &[
    b"data: ",
    b"data:",
    b"data",
    b"event: ",
    b"event:error",
    b"id: 7",
    b"retry: 10",
    b": keep-alive",
    b":",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\r\r",
    b"x",
    b"{\"a\":1}",
    b" ",
    b"\xc3\xa9",
    b"\xff",
    b"\xc3",
    b"\xe2\x9c",
    b"\x00",
    b"unknown: 1",
];

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        6 => select(PIECES).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 0..16),
        1 => (1usize..400).prop_map(|n| vec![b'y'; n]),
    ];
    prop_oneof![
        4 => prop::collection::vec(piece, 0..48).prop_map(|p| p.concat()),
        1 => prop::collection::vec(any::<u8>(), 0..256),
        1 => Just(b"event: message\ndata: {\"k\":\ndata: 1}\r\n\r\n: c\n\ndata: 2\r\r".to_vec())
            .prop_flat_map(byte_mutated),
    ]
}

fn split_invariance(stream: Vec<u8>, cuts: Vec<usize>, max: usize) -> TestCaseResult {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let whole = parse(&stream, &[], max);
    let split = parse(&stream, &cuts, max);
    let bytewise: Vec<usize> = (1..stream.len()).collect();
    let one_by_one = parse(&stream, &bytewise, max);
    prop_assert_eq!(&split, &whole);
    prop_assert_eq!(&one_by_one, &whole);
    for ev in &whole.0 {
        prop_assert!(ev.data.len() <= max, "an event over the bound");
    }
    Ok(())
}

/// Events as a server may write them: `data` without CR, names without
/// line breaks.
fn events() -> impl Strategy<Value = Vec<SseEvent>> {
    let event = (
        prop::option::of("[a-z]{0,8}"),
        prop::collection::vec("[^\r\n]{0,16}", 1..4).prop_map(|lines| lines.join("\n")),
    )
        .prop_map(|(event, data)| SseEvent {
            event,
            data,
            id: None,
        });
    prop::collection::vec(event, 0..8)
}

fn round_trip(
    evs: Vec<SseEvent>,
    endings: Vec<u8>,
    noise: Vec<bool>,
    cuts: Vec<usize>,
) -> TestCaseResult {
    let mut endings = endings.iter().cycle();
    let mut last_cr = false;
    // One line ending; an LF right after a lone CR would join it (CRLF), so
    // it becomes CRLF itself.
    let mut eol = |s: &mut Vec<u8>| {
        let e: &[u8] = match endings.next().map_or(0, |e| e % 3) {
            0 if last_cr => b"\r\n",
            0 => b"\n",
            1 => b"\r\n",
            _ => b"\r",
        };
        last_cr = e == b"\r";
        s.extend_from_slice(e);
    };
    let mut noise = noise.iter().cycle();
    let mut s = Vec::new();
    // An `id:` line among the noise is the id of the event it precedes.
    let mut want = evs.clone();
    for (ev, kept) in evs.iter().zip(&mut want) {
        if *noise.next().unwrap_or(&false) {
            kept.id = Some("3".to_owned());
            s.extend_from_slice(b": keep-alive");
            eol(&mut s);
            s.extend_from_slice(b"id: 3");
            eol(&mut s);
        }
        if let Some(name) = &ev.event {
            s.extend_from_slice(format!("event: {name}").as_bytes());
            eol(&mut s);
        }
        for line in ev.data.split('\n') {
            s.extend_from_slice(format!("data: {line}").as_bytes());
            eol(&mut s);
        }
        eol(&mut s);
    }
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (s.len() + 1)).collect();
    cuts.sort_unstable();
    let (got, end) = parse(&s, &cuts, 4096);
    prop_assert_eq!(end, Ok(()));
    prop_assert_eq!(got, want);
    Ok(())
}

#[test]
fn sse_split_invariance() {
    let case = (
        stream().prop_map(Text),
        prop::collection::vec(any::<usize>(), 0..8),
        prop_oneof![
            1usize..64,
            Just(a2a_tower::client::sse::DEFAULT_MAX_EVENT_BYTES)
        ],
    );
    fuzz("sse-split", 3000, case, |(s, cuts, max)| {
        split_invariance(s.0, cuts, max)
    });
}

#[test]
fn sse_round_trip() {
    let case = (
        events(),
        prop::collection::vec(any::<u8>(), 1..8),
        prop::collection::vec(any::<bool>(), 1..4),
        prop::collection::vec(any::<usize>(), 0..8),
    );
    fuzz("sse-round-trip", 2000, case, |(e, l, n, c)| {
        round_trip(e, l, n, c)
    });
}
