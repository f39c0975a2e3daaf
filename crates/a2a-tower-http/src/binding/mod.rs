//! The HTTP bindings: HTTP ⇄ [`A2aRequest`](crate::A2aRequest) /
//! [`A2aResponse`](crate::A2aResponse), with SSE for streams.
//!
//! - [`jsonrpc`] (JSON-RPC 2.0) and [`rest`] (HTTP+JSON): each a codec
//!   ([`JsonRpcCodec`](crate::jsonrpc::JsonRpcCodec),
//!   [`RestCodec`](crate::rest::RestCodec)) filling the one generic shape,
//!   public at the crate root (and as `a2a_tower::jsonrpc` and `a2a_tower::rest`);
//! - `codec`, `layer`, `service`: that shape, the [`Codec`] trait,
//!   [`BindingLayer`] and [`BindingService`] (public here, and under
//!   `a2a_tower::server`): route the binding's requests to the core
//!   and the rest to the fallback;
//! - `exchange`: what both bindings do alike around the core (body read,
//!   media type, the readiness of the core, the answer's variant, opening a
//!   stream);
//! - `sse`: the `text/event-stream` body over an event stream;
//! - `extension_method`: methods an extension adds, registered on both
//!   bindings ([`ExtensionMethod`](crate::ExtensionMethod));
//! - `router`: the bindings the card advertises as one service
//!   ([`BindingsLayer`], public here, and under `a2a_tower::server`).
//!
//! The bindings use the wire model, the protocol core and `http`; they see the
//! core only as an [`A2aService`](crate::A2aService), never the task engine or
//! a task log.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, JsonRpcLayer};
//! use tower::Layer;
//!
//! let card = AgentCard::new("Doc", "A binding over a trivial core", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
//!     .with_skill(AgentSkill::new("none", "Nothing", "Answers nothing"));
//! let core = tower::service_fn(|_: A2aRequest| async {
//!     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
//! });
//! let _svc = JsonRpcLayer::new(&card).unwrap().layer(core);
//! ```

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub(crate) mod codec;
#[cfg(any(feature = "jsonrpc", feature = "rest", feature = "grpc"))]
mod exchange;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub(crate) mod extension_method;
#[cfg(feature = "grpc")]
#[cfg_attr(docsrs, doc(cfg(feature = "grpc")))]
pub mod grpc;
#[cfg(feature = "jsonrpc")]
#[cfg_attr(docsrs, doc(cfg(feature = "jsonrpc")))]
pub mod jsonrpc;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub(crate) mod layer;
#[cfg(feature = "rest")]
#[cfg_attr(docsrs, doc(cfg(feature = "rest")))]
pub mod rest;
#[cfg(all(feature = "jsonrpc", feature = "rest"))]
pub(crate) mod router;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub(crate) mod service;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
mod sse;

#[cfg(all(feature = "jsonrpc", feature = "rest"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "jsonrpc", feature = "rest"))))]
pub use router::{BindingsLayer, BindingsService, ResponseFuture};
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "jsonrpc", feature = "rest"))))]
pub use {codec::Codec, layer::BindingLayer, service::BindingService};

/// The binding modules' doc tables list the core's operation table.
#[cfg(all(test, feature = "jsonrpc", feature = "rest"))]
mod table_docs {
    use crate::{HttpVerb, OperationKind};

    /// The verb and path column of the HTTP+JSON binding's route table:
    /// verbs sharing a path as `` `GET` or `POST /path` ``, GET first.
    fn rest_doc_column(kind: OperationKind) -> String {
        let mut verbs: Vec<HttpVerb> = kind.http_routes().iter().map(|r| r.verb).collect();
        verbs.sort_by_key(|v| match v {
            HttpVerb::Get => 0,
            HttpVerb::Post => 1,
            _ => 2,
        });
        let path = kind.http_routes()[0].path;
        assert!(kind.http_routes().iter().all(|r| r.path == path));
        match verbs.as_slice() {
            [one] => format!("`{one} {path}`"),
            [first @ .., last] => {
                let first: Vec<String> = first.iter().map(|v| format!("`{v}`")).collect();
                format!("{} or `{last} {path}`", first.join(", "))
            }
            [] => unreachable!("every operation has a route"),
        }
    }

    /// The first `n` cells of the doc table rows of `source` that start
    /// with `| ` and a cell of `first`.
    fn doc_rows(source: &str, n: usize) -> Vec<Vec<String>> {
        source
            .lines()
            .filter_map(|l| l.strip_prefix("//! | "))
            .map(|l| l.split(" | ").take(n).map(str::to_owned).collect())
            .collect()
    }

    #[test]
    fn the_binding_docs_list_the_table() {
        let jsonrpc = doc_rows(include_str!("jsonrpc/mod.rs"), 1);
        let rest = doc_rows(include_str!("rest/mod.rs"), 2);
        for &kind in OperationKind::ALL {
            let method = vec![format!("`{}`", kind.jsonrpc_method())];
            assert_eq!(
                jsonrpc.iter().filter(|r| **r == method).count(),
                1,
                "{kind}"
            );
            let route = vec![kind.name().to_owned(), rest_doc_column(kind)];
            assert_eq!(rest.iter().filter(|r| **r == route).count(), 1, "{kind}");
        }
    }
}
