//! Property-based fuzzing of every decoder that reads untrusted bytes
//! (issue 18, item 6), on stable Rust: the JSON-RPC envelope and params
//! decoder, the HTTP+JSON routes and queries, the agent-card parser and
//! validation, the client's SSE parser, the managed layer's input and answer
//! admission, and the gRPC messages' bridge to the crate's types.
//!
//! Each target draws arbitrary bytes, mutated valid inputs (JSON-aware edits
//! and byte edits of seeds) and deep nesting; asserts what the answer must
//! be (round trips, the error kind of each refusal, split-invariance); and
//! counts the bytes the library allocates per input (a counting global
//! allocator, every thread), which must stay under a multiple of the input's
//! size plus a constant.
//!
//! A default run is short (CI). `A2A_FUZZ_SECS=600` runs each target for ten
//! minutes instead, `A2A_FUZZ_CASES=n` runs `n` cases, `A2A_FUZZ_SEED=n`
//! picks the seed (a long run takes one from the clock and prints it). See
//! `docs/fuzzing.md`.

#![cfg(all(
    feature = "jsonrpc",
    feature = "rest",
    feature = "client",
    feature = "managed"
))]

#[path = "../support/mod.rs"]
mod support;

mod harness;

mod card;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod jsonrpc;
mod managed;
mod sse;
