//! The `google.rpc` error model generated from `proto/google/rpc`:
//! [`Status`] (the `grpc-status-details-bin` trailer), [`ErrorInfo`] and
//! [`BadRequest`], for reading an A2A error's details on the client side.
#![allow(missing_docs, unreachable_pub, clippy::all, rust_2018_idioms)]
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]
include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
