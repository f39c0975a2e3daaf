//! The gRPC binding (a2a-spec.md §8): the specification's `a2a.proto`
//! service `lf.a2a.v1.A2AService` as a Tower service, through tonic's
//! generated server, over the same core as the other bindings.
//!
//! [`GrpcBindingLayer`] builds a [`GrpcBindingService`] over a core
//! [`A2aService`](crate::A2aService). A request whose `Content-Type` is
//! `application/grpc` (or `application/grpc+…`) is an RPC; anything else goes
//! to the fallback, so the gRPC binding can sit in front of the JSON-RPC and
//! HTTP+JSON bindings on one listener (which must then speak HTTP/2: gRPC
//! needs it; hyper-util's `auto` server serves HTTP/1.1 and h2c side by side)
//! or be served alone on a listener of its own. [`A2aServer`] does the
//! former whenever the card advertises a `GRPC` interface, whose `url` is
//! `host:port` (§8).
//!
//! Each RPC is decoded into the same [`Operation`](crate::Operation) the
//! HTTP bindings produce, checked by the same rules (required fields,
//! capabilities), and sent to the core as an [`A2aRequest`](crate::A2aRequest);
//! the [`A2aResponse`](crate::A2aResponse) is encoded back. The generated
//! messages and the crate's types both speak ProtoJSON, which bridges them.
//! `SendStreamingMessage` and `SubscribeToTask` are server-streaming RPCs of
//! `StreamResponse`: an error before the first event is the call's status, a
//! later one ends the stream with its status.
//!
//! - **Service parameters** travel as metadata: the version and extension
//!   layers ([`VersionLayer`](crate::VersionLayer),
//!   [`ExtensionsLayer`](crate::ExtensionsLayer)) read `a2a-version`
//!   and `a2a-extensions` by the same rules as the HTTP headers, and refuse a
//!   gRPC request with a gRPC status (a trailers-only response).
//! - **Errors** are statuses with the error table's gRPC code, the safe
//!   message, and a `google.rpc.Status` in `grpc-status-details-bin` whose
//!   details are a `google.rpc.ErrorInfo` (reason, domain `a2a-protocol.org`,
//!   metadata) and, for field violations, a `google.rpc.BadRequest`, the
//!   standard messages any gRPC client can read (tonic-types' `StatusExt`,
//!   for one). As on any gRPC server, a
//!   method the service lacks is UNIMPLEMENTED and a request that is not
//!   valid protobuf is INTERNAL (tonic's answers, without A2A details).
//! - **The body limit**: a message over [`GrpcBindingLayer::max_message_bytes`] (set
//!   to the stack's body limit by [`A2aServer`]) or a body over
//!   [`BodyLimitLayer`](crate::BodyLimitLayer)'s limit is
//!   RESOURCE_EXHAUSTED with the PAYLOAD_TOO_LARGE ErrorInfo.
//! - **Numbers in data parts and metadata** arrive as protobuf `Struct` and
//!   `Value`, whose numbers are doubles: `1.10` arrives as `1.1`, and
//!   integers beyond 2^53 lose digits. The call is marked
//!   [`GrpcCall`](crate::GrpcCall) in its context, and the managed layer
//!   refuses a data part holding any number over gRPC (InvalidParams) rather
//!   than run a program on a value that may have changed; send such values
//!   as text, or over a JSON binding, which keeps numbers exact.
//!
//! [`A2aServer`]: https://docs.rs/a2a-tower/latest/a2a_tower/server/struct.A2aServer.html
//!
//! # Example
//!
//! One `GetTask` call, framed by hand (a five-byte prefix, then the
//! message), against a core that knows no task:
//!
//! ```
//! use a2a_tower::grpc::GrpcBindingLayer;
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, Body, Operation};
//! use tower::{Layer, ServiceExt};
//!
//! # tokio_test();
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn tokio_test() {
//! let card = AgentCard::default().with_interface(AgentInterface::new("localhost:50051", "GRPC"));
//! let core = tower::service_fn(|req: A2aRequest| async move {
//!     match req.operation {
//!         Operation::GetTask(r) => Err::<A2aResponse, _>(A2aError::task_not_found(r.id)),
//!         _ => unreachable!(),
//!     }
//! });
//! let svc = GrpcBindingLayer::new(&card).unwrap().layer(core);
//!
//! // GetTaskRequest { id: "t-404" }: field 2, length-delimited.
//! let message = b"\x12\x05t-404";
//! let mut frame = vec![0u8];
//! frame.extend((message.len() as u32).to_be_bytes());
//! frame.extend(message);
//! let req = http::Request::post("/lf.a2a.v1.A2AService/GetTask")
//!     .header("content-type", "application/grpc")
//!     .header("a2a-version", "1.0")
//!     .body(Body::full(frame))
//!     .unwrap();
//! let res = svc.oneshot(req).await.unwrap();
//! // A trailers-only answer: the status is in the headers.
//! assert_eq!(res.headers()["grpc-status"], "5"); // NOT_FOUND
//! assert!(res.headers().contains_key("grpc-status-details-bin"));
//! # }
//! ```

mod convert;
mod handler;
mod layer;
/// The messages and service generated from `a2a.proto`, for the tests,
/// examples and fuzz targets: prost and tonic types, not part of the API.
#[doc(hidden)]
pub mod proto;
/// The generated `google.rpc` error details, for the tests: prost types, not
/// part of the API.
#[doc(hidden)]
pub mod rpc;
mod service;
pub(crate) mod status;

pub use layer::GrpcBindingLayer;
pub use service::GrpcBindingService;

/// The former name of [`GrpcBindingLayer`].
#[deprecated(note = "renamed to `GrpcBindingLayer`")]
pub type GrpcLayer<F = crate::NotFound> = GrpcBindingLayer<F>;

/// The former name of [`GrpcBindingService`].
#[deprecated(note = "renamed to `GrpcBindingService`")]
pub type GrpcService<S, F = crate::NotFound> = GrpcBindingService<S, F>;

crate::plumbing::future::opaque_future! {
    /// Response future of [`GrpcBindingService`].
    pub type ResponseFuture<F> = crate::plumbing::future::BindingFuture<F>;
}
