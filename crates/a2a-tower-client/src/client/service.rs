//! [`A2aClient`]: the client as a `Service<A2aRequest>`, the mirror of the
//! server's core, so the same `A2aRequest` layers serve both directions and
//! a client can be mounted as the core of an `A2aServer` (a proxy).
//!
//! Its trace span `a2a.client` carries the operation, the transport and,
//! on failure, the error kind only: never a remote message.
//!
//! Of the call context, only `A2A-Extensions` headers are forwarded (so a
//! proxy passes its caller's extension requests on); other headers, such as
//! the caller's own `Authorization`, never are. Calls have no deadline of
//! their own: a host adds one as a layer (the card timeout never applies).
//!
//! An [`Operation::Extension`](crate::Operation::Extension) call is sent over
//! JSON-RPC as its method name and params, and its result comes back as
//! [`A2aResponse::Extension`]; over HTTP+JSON the client knows no route for
//! it and answers UnsupportedOperation without sending anything.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_tower::client::A2aClient;
//! use a2a_tower::types::{Message, SendMessageRequest};
//! use a2a_tower::{A2aRequest, A2aResponse, Operation};
//! use tower::ServiceExt;
//!
//! let client = A2aClient::builder("http://localhost:8080/.well-known/agent-card.json")
//!     .build()?
//!     .connect()
//!     .await?;
//! let send = SendMessageRequest { message: Message::user("m-1", "hi"), ..Default::default() };
//! let res = client.oneshot(A2aRequest::new(Operation::SendMessage(send))).await?;
//! if let A2aResponse::SendMessage(answer) = res {
//!     println!("{answer:?}");
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tower_service::Service;
use tracing::Instrument;

use super::http::HttpService;
use super::request::{self, Target};
use super::response::{self, Expect, Limits, unavailable};
use super::resume::{self, Resume};
use super::transport::Transport;
use crate::types::AgentCard;
use crate::{A2aError, A2aRequest, A2aResponse, Operation};

/// A connected A2A client; see the module docs. Built by
/// [`Connector::connect`](super::Connector::connect). Cheap to clone.
///
/// Readiness: `poll_ready` is always ready; each call clones the HTTP
/// service and waits for its readiness inside the response future.
#[derive(Debug, Clone)]
pub struct A2aClient<S> {
    http: S,
    target: Arc<Target>,
    limits: Limits,
    card: Arc<AgentCard>,
    next_id: Arc<AtomicU64>,
    resume: Resume,
    /// The gRPC channel, when the transport is gRPC.
    #[cfg(feature = "grpc")]
    grpc: Option<tonic::transport::Channel>,
}

impl<S> A2aClient<S> {
    pub(crate) fn new(
        http: S,
        target: Target,
        limits: Limits,
        card: AgentCard,
        resume: Resume,
    ) -> Self {
        Self {
            http,
            target: Arc::new(target),
            limits,
            card: Arc::new(card),
            next_id: Arc::new(AtomicU64::new(1)),
            resume,
            #[cfg(feature = "grpc")]
            grpc: None,
        }
    }

    /// Sends calls over `channel` (the gRPC transport).
    #[cfg(feature = "grpc")]
    pub(crate) fn with_grpc(mut self, channel: tonic::transport::Channel) -> Self {
        self.grpc = Some(channel);
        self
    }

    /// The agent card the client was connected from.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The binding in use.
    pub fn transport(&self) -> Transport {
        self.target.transport
    }

    /// The interface URL in use, as the card gives it.
    pub fn url(&self) -> &str {
        &self.target.url
    }
}

/// The response future of [`A2aClient`].
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<A2aResponse, A2aError>> + Send>>;

impl<S: HttpService> Service<A2aRequest> for A2aClient<S> {
    type Response = A2aResponse;
    type Error = A2aError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), A2aError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: A2aRequest) -> Self::Future {
        let resumable = self.resume.attempts > 0
            && matches!(
                req.operation,
                Operation::SendStreamingMessage(_) | Operation::SubscribeToTask(_)
            );
        if !resumable {
            return self.call_once(req);
        }
        let tenant = match &req.operation {
            Operation::SendStreamingMessage(r) => r.tenant.clone(),
            Operation::SubscribeToTask(r) => r.tenant.clone(),
            _ => String::new(),
        };
        let headers = req.context.headers.clone();
        let (client, resume) = (self.clone(), self.resume);
        let call = self.call_once(req);
        Box::pin(async move {
            match call.await? {
                A2aResponse::Stream(events) => Ok(A2aResponse::Stream(resume::resuming(
                    client, events, tenant, &headers, resume,
                ))),
                other => Ok(other),
            }
        })
    }
}

impl<S: HttpService> A2aClient<S> {
    /// One call, its stream (if any) not resumed.
    pub(crate) fn call_once(&mut self, req: A2aRequest) -> ResponseFuture {
        let span = tracing::info_span!(
            "a2a.client",
            otel.kind = "client",
            rpc.system = self.target.transport.rpc_system(),
            rpc.method = req.operation.method(),
            server.address = tracing::field::Empty,
            operation = req.operation.method(),
            transport = self.target.transport.binding(),
            error = tracing::field::Empty,
        );
        if let Some(host) = self.target.host() {
            span.record("server.address", host);
        }
        let operation = req.operation.method();
        #[cfg(feature = "grpc")]
        if let Some(channel) = self.grpc.clone() {
            let target = self.target.clone();
            let record = span.clone();
            return Box::pin(
                async move {
                    let out = super::grpc::call(channel, &target, req).await;
                    if let Err(e) = &out {
                        record.record("error", e.kind().reason());
                    }
                    out
                }
                .instrument(span),
            );
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let expect = Expect::of(&req.operation);
        let encoded = request::encode(&self.target, &req, id);
        let mut http = self.http.clone();
        let credentials = self.target.credentials.clone();
        let (transport, limits) = (self.target.transport, self.limits);
        let v03 = self.target.v03.then(|| req.operation.kind()).flatten();
        let record = span.clone();
        let call = async move {
            let mut req = encoded?;
            a2a_tower_core::telemetry::inject(req.headers_mut());
            // Refcounted, not copied: only a 404 without an A2A error formats it.
            let url = req.uri().clone();
            let sent = match &credentials {
                Some(c) => c.authorize(http.clone(), &mut req, None).await?,
                None => None,
            };
            let again = sent.is_some().then(|| copy(&req));
            futures_util::future::poll_fn(|cx| http.poll_ready(cx))
                .await
                .map_err(|e| unavailable(e.into()))?;
            let mut res = http.call(req).await.map_err(|e| unavailable(e.into()))?;
            // A refused OAuth 2.0 token: one new token, one more try.
            if res.status() == http::StatusCode::UNAUTHORIZED
                && let (Some(c), Some(mut req)) = (&credentials, again)
            {
                c.authorize(http.clone(), &mut req, sent.as_ref()).await?;
                futures_util::future::poll_fn(|cx| http.poll_ready(cx))
                    .await
                    .map_err(|e| unavailable(e.into()))?;
                res = http.call(req).await.map_err(|e| unavailable(e.into()))?;
            }
            response::decode(transport, expect, id, limits, &url, res, v03).await
        };
        // A combinator, not an `async` block awaiting `call` (which would
        // keep the call twice in the box: as the block's capture and as
        // the awaited future).
        let start = std::time::Instant::now();
        let call = futures_util::FutureExt::inspect(call, move |out| {
            a2a_tower_core::telemetry::record_client_call(
                operation,
                a2a_tower_core::telemetry::outcome(out),
                start.elapsed(),
            );
            if let Err(e) = out {
                record.record("error", e.kind().reason());
            }
        });
        Box::pin(call.instrument(span))
    }
}

/// A copy of a request to send again.
fn copy(
    req: &http::Request<http_body_util::Full<bytes::Bytes>>,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let mut out = http::Request::new(req.body().clone());
    *out.method_mut() = req.method().clone();
    *out.uri_mut() = req.uri().clone();
    *out.version_mut() = req.version();
    *out.headers_mut() = req.headers().clone();
    out
}
