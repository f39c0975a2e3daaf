//! Where packed tasks keep their JSON: chunks of [`CHUNK`] bytes, one being
//! filled per thread, each packed task's JSON a [`Bytes`] view of its part.
//!
//! A log at its bound packs a task and evicts the oldest for every task it
//! takes in, so each packed task's JSON is written once and freed about a
//! bound's worth of tasks later. One allocation per task scattered those
//! copies over the allocator's pages among the requests' short-lived
//! allocations; written one after another into a chunk, they take their
//! exact size, side by side, and leave in about the order they came. A
//! chunk is freed when the last of its tasks is evicted, unpacked or
//! dropped; a task whose JSON is over [`OWN`] bytes gets an allocation of
//! its own, so that no chunk is left mostly empty.

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

/// The bytes of a chunk.
const CHUNK: usize = 64 << 10;

/// A task's JSON longer than this is not put in a chunk.
const OWN: usize = CHUNK / 8;

thread_local! {
    /// The rest of this thread's chunk.
    static FILLING: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// `json`, copied into this thread's chunk (a new one if it does not fit),
/// or into an allocation of its own if longer than [`OWN`].
pub(super) fn store(json: &[u8]) -> Bytes {
    if json.len() > OWN {
        return Bytes::copy_from_slice(json);
    }
    FILLING.with_borrow_mut(|rest| {
        // Empty after each split: its capacity is what is left.
        if rest.capacity() < json.len() {
            *rest = BytesMut::with_capacity(CHUNK);
        }
        rest.extend_from_slice(json);
        rest.split().freeze()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_packed_one_after_another_share_a_chunk() {
        // A fresh thread: a chunk of its own.
        std::thread::spawn(|| {
            let a = store(br#"{"id":"a"}"#);
            let b = store(br#"{"id":"bb"}"#);
            assert_eq!(&a[..], br#"{"id":"a"}"#);
            assert_eq!(&b[..], br#"{"id":"bb"}"#);
            // Side by side in one allocation.
            assert_eq!(a.as_ptr().wrapping_add(a.len()), b.as_ptr());
            // What does not fit in the rest starts the next chunk.
            let fill = vec![b'x'; OWN];
            let mut last = store(&fill);
            let mut chunks = 1;
            for _ in 0..CHUNK / OWN + 1 {
                let next = store(&fill);
                if last.as_ptr().wrapping_add(last.len()) != next.as_ptr() {
                    chunks += 1;
                }
                assert_eq!(&next[..], &fill[..]);
                last = next;
            }
            assert_eq!(chunks, 2, "the first chunk full, then one more");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_long_json_gets_an_allocation_of_its_own() {
        std::thread::spawn(|| {
            let a = store(b"{}");
            let long = vec![b'y'; OWN + 1];
            let big = store(&long);
            let b = store(b"[]");
            assert_eq!(&big[..], &long[..]);
            // The chunk goes on after the small one, not after the long one.
            assert_eq!(a.as_ptr().wrapping_add(a.len()), b.as_ptr());
            assert!(big.is_unique(), "the long one shares nothing");
        })
        .join()
        .unwrap();
    }
}
