//! The messages and service generated from the specification's `a2a.proto`
//! (package `lf.a2a.v1`), with ProtoJSON serde: the server side
//! ([`a2a_service_server`]) this binding implements, and a client
//! ([`a2a_service_client`]) over any tonic `GrpcService`.
#![allow(missing_docs, unreachable_pub, clippy::all, rust_2018_idioms)]
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]
include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));
