//! The messages and client generated from the specification's `a2a.proto`
//! (package `lf.a2a.v1`) with ProtoJSON serde, and the `google.rpc` error
//! model (`rpc`) a server's status details carry.
#![allow(
    missing_docs,
    unreachable_pub,
    dead_code,
    clippy::all,
    rust_2018_idioms
)]
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]
include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));

/// `google.rpc`: `Status`, `ErrorInfo`, `BadRequest`.
pub mod rpc {
    include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
}
