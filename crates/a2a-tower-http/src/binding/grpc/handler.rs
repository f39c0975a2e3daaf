//! The eleven RPCs of `lf.a2a.v1.A2AService`, each decoded into the same
//! [`Operation`] the HTTP bindings produce, checked the same way, sent to the
//! core, and its answer encoded back.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::StreamExt;
use tonic::{Request, Response, Status};

use super::proto::{self, a2a_service_server::A2aService as Rpcs};
use super::{convert, status};
use crate::binding::exchange::{self, BareJson, Expected, Reply};
use crate::types::AgentCapabilities;
use crate::{A2aError, A2aRequest, A2aService, CallContext, ErrorKind, EventStream, GrpcCall};
use crate::{A2aResponse, Operation};

/// The generated service's implementation over a core `S`.
pub(crate) struct Handler<S> {
    /// The core, cloned for each call (behind a lock only because the
    /// generated service must be `Sync` and a core need not be).
    core: Mutex<S>,
    capabilities: Arc<AgentCapabilities>,
}

impl<S: Clone> Handler<S> {
    pub(crate) fn new(core: S, capabilities: Arc<AgentCapabilities>) -> Self {
        Self {
            core: Mutex::new(core),
            capabilities,
        }
    }

    fn core(&self) -> S {
        self.core
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Records the kind on the call's span (never the error text) and returns
/// the status.
fn fail(err: &A2aError) -> Status {
    tracing::Span::current().record("error", err.kind().reason());
    status::to_status(err)
}

impl<S: A2aService> Handler<S> {
    /// One exchange with the core: the operation checked as the HTTP
    /// bindings check it, the call context from the metadata (service
    /// parameters) and the HTTP request's extensions (the negotiated
    /// version, activated extensions, a host's principal), marked
    /// [`GrpcCall`].
    async fn exchange<M>(
        &self,
        req: Request<M>,
        decode: impl FnOnce(&M) -> Result<Operation, A2aError>,
    ) -> Result<(Expected, A2aResponse), A2aError> {
        let (metadata, extensions, message) = req.into_parts();
        let op = decode(&message)?;
        let span = tracing::Span::current();
        span.record("operation", op.method());
        span.record("rpc.method", op.method());
        crate::protocol::check::operation(&op)?;
        crate::protocol::check::capability(&self.capabilities, &op)?;
        let expected = Expected::of(&op);
        let mut http = http::Request::new(());
        *http.headers_mut() = metadata.into_headers();
        *http.extensions_mut() = extensions;
        let mut context = CallContext::from_http_parts(http.into_parts().0);
        context.tenant = op.tenant().to_owned();
        context.extensions.insert(GrpcCall);
        let request = A2aRequest {
            operation: op,
            context,
        };
        let response = exchange::call(self.core(), request, crate::types::BINDING_GRPC).await?;
        Ok((expected, response))
    }

    /// A unary RPC: the answer as the generated message `P`.
    async fn unary<M, P: serde::de::DeserializeOwned>(
        &self,
        req: Request<M>,
        decode: impl FnOnce(&M) -> Result<Operation, A2aError>,
    ) -> Result<Response<P>, Status> {
        let answer = async {
            let (expected, response) = self.exchange(req, decode).await?;
            match exchange::encode_reply(expected, response, &BareJson)? {
                Reply::Json(json) => convert::answer_json(&json),
                Reply::Stream(_) => Err(A2aError::new(ErrorKind::InvalidAgentResponse)),
            }
        };
        answer.await.map(Response::new).map_err(|e| fail(&e))
    }

    /// A server-streaming RPC: an error before the first event is the
    /// call's status; a stream without events is InvalidAgentResponse.
    async fn stream<M>(
        &self,
        req: Request<M>,
        decode: impl FnOnce(&M) -> Result<Operation, A2aError>,
    ) -> Result<Response<Events>, Status> {
        let opened = async {
            let (expected, response) = self.exchange(req, decode).await?;
            let Reply::Stream(mut stream) = exchange::encode_reply(expected, response, &BareJson)?
            else {
                return Err(A2aError::new(ErrorKind::InvalidAgentResponse));
            };
            match stream.next().await {
                Some(Ok(first)) => Ok(Events {
                    first: Some(first),
                    rest: Some(stream),
                }),
                Some(Err(e)) => Err(e),
                None => Err(A2aError::new(ErrorKind::InvalidAgentResponse)),
            }
        };
        opened.await.map(Response::new).map_err(|e| fail(&e))
    }
}

/// The events of a streaming RPC as generated `StreamResponse`s; the error
/// that ends a stream is its last item (the call's status).
pub(crate) struct Events {
    first: Option<crate::types::StreamResponse>,
    rest: Option<EventStream>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events(..)")
    }
}

impl Stream for Events {
    type Item = Result<proto::StreamResponse, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let event = match self.first.take() {
            Some(first) => first,
            None => {
                let Some(rest) = self.rest.as_mut() else {
                    return Poll::Ready(None);
                };
                match std::task::ready!(rest.poll_next_unpin(cx)) {
                    Some(Ok(event)) => event,
                    Some(Err(e)) => {
                        self.rest = None;
                        return Poll::Ready(Some(Err(status::to_status(&e))));
                    }
                    None => {
                        self.rest = None;
                        return Poll::Ready(None);
                    }
                }
            }
        };
        let item = convert::answer(&event).map_err(|e| {
            self.rest = None;
            status::to_status(&e)
        });
        Poll::Ready(Some(item))
    }
}

/// Decodes a request message into the operation `$op`.
macro_rules! op {
    ($op:ident) => {
        |m| Ok(Operation::$op(convert::request(m)?))
    };
}

#[tonic::async_trait]
impl<S: A2aService> Rpcs for Handler<S> {
    async fn send_message(
        &self,
        req: Request<proto::SendMessageRequest>,
    ) -> Result<Response<proto::SendMessageResponse>, Status> {
        self.unary(req, op!(SendMessage)).await
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        req: Request<proto::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        self.stream(req, op!(SendStreamingMessage)).await
    }

    async fn get_task(
        &self,
        req: Request<proto::GetTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        self.unary(req, op!(GetTask)).await
    }

    async fn list_tasks(
        &self,
        req: Request<proto::ListTasksRequest>,
    ) -> Result<Response<proto::ListTasksResponse>, Status> {
        self.unary(req, op!(ListTasks)).await
    }

    async fn cancel_task(
        &self,
        req: Request<proto::CancelTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        self.unary(req, op!(CancelTask)).await
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        req: Request<proto::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        self.stream(req, op!(SubscribeToTask)).await
    }

    async fn create_task_push_notification_config(
        &self,
        req: Request<proto::TaskPushNotificationConfig>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        self.unary(req, op!(CreateTaskPushNotificationConfig)).await
    }

    async fn get_task_push_notification_config(
        &self,
        req: Request<proto::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        self.unary(req, op!(GetTaskPushNotificationConfig)).await
    }

    async fn list_task_push_notification_configs(
        &self,
        req: Request<proto::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<proto::ListTaskPushNotificationConfigsResponse>, Status> {
        self.unary(req, op!(ListTaskPushNotificationConfigs)).await
    }

    async fn get_extended_agent_card(
        &self,
        req: Request<proto::GetExtendedAgentCardRequest>,
    ) -> Result<Response<proto::AgentCard>, Status> {
        self.unary(req, op!(GetExtendedAgentCard)).await
    }

    async fn delete_task_push_notification_config(
        &self,
        req: Request<proto::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pbjson_types::Empty>, Status> {
        self.unary(req, op!(DeleteTaskPushNotificationConfig)).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tower::{Layer, ServiceExt};

    use crate::binding::grpc::GrpcBindingLayer;
    use crate::types::{AgentCapabilities, AgentCard, AgentInterface};
    use crate::{A2aError, A2aRequest, A2aResponse, Body, ErrorKind, OperationKind};

    type Core = tower::util::BoxCloneSyncService<A2aRequest, A2aResponse, A2aError>;

    /// The `grpc-status` of an RPC to `path` with an empty message.
    async fn status_of(svc: &crate::grpc::GrpcBindingService<Core>, path: &str) -> String {
        let req = http::Request::post(path)
            .header("content-type", "application/grpc")
            .body(Body::full(vec![0u8; 5]))
            .unwrap();
        let res = svc.clone().oneshot(req).await.unwrap();
        res.headers()["grpc-status"].to_str().unwrap().to_owned()
    }

    /// The generated service serves every gRPC method of the operation
    /// table, each decoded into its operation.
    #[tokio::test]
    async fn every_grpc_method_of_the_table_is_served_as_its_operation() {
        let mut card = AgentCard::default().with_interface(AgentInterface::new("h:1", "GRPC"));
        card.capabilities = AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extended_agent_card: Some(true),
            ..Default::default()
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let core = tower::service_fn(move |req: A2aRequest| {
            log.lock().unwrap().push(req.operation.kind());
            async { Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation)) }
        });
        let svc = GrpcBindingLayer::new(&card).unwrap().layer(Core::new(core));
        for &kind in OperationKind::ALL {
            let status = status_of(&svc, kind.grpc_path()).await;
            // FAILED_PRECONDITION from the core, or INVALID_ARGUMENT for a
            // required parameter the empty message lacks.
            let want = if kind.required_params().is_empty() {
                "9"
            } else {
                "3"
            };
            assert_eq!(status, want, "{kind}");
        }
        let reached: Vec<_> = OperationKind::ALL
            .iter()
            .filter(|k| k.required_params().is_empty())
            .map(|k| Some(*k))
            .collect();
        assert_eq!(*seen.lock().unwrap(), reached);
        assert_eq!(status_of(&svc, "/lf.a2a.v1.A2AService/Nope").await, "12");
    }
}
