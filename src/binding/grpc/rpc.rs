//! The `google.rpc` error model generated from `proto/google/rpc`:
//! [`Status`] (the `grpc-status-details-bin` trailer), [`ErrorInfo`] and
//! [`BadRequest`], for reading an A2A error's details on the client side.
#![allow(missing_docs, unreachable_pub, clippy::all, rust_2018_idioms)]
include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
