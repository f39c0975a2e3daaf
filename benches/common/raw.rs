//! The raw baseline's handler, shared by the in-process `load` bench and the
//! external `raw` server (`benches/external`): no layers, no store; it decodes
//! a JSON-RPC SendMessage into the crate's own types and answers a completed
//! echo task.

use std::convert::Infallible;

use a2a_tower::Body;
use a2a_tower::types::{
    Artifact, Message, SendMessageRequest, SendMessageResponse, Task, TaskState, TaskStatus,
    Timestamp,
};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use serde::Deserialize;

/// The JSON-RPC envelope the handler decodes.
#[derive(Deserialize)]
struct RpcRequest {
    #[allow(dead_code)]
    jsonrpc: String,
    id: serde_json::Value,
    method: String,
    params: SendMessageRequest,
}

/// Decode the request, answer a completed echo task.
pub(crate) async fn handle(req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let Ok(bytes) = req.into_body().collect().await.map(|b| b.to_bytes()) else {
        return Ok(status(400));
    };
    let Ok(rpc) = serde_json::from_slice::<RpcRequest>(&bytes) else {
        return Ok(status(400));
    };
    if rpc.method != "SendMessage" {
        return Ok(status(404));
    }
    let task_id = uuid::Uuid::new_v4().to_string();
    let context_id = uuid::Uuid::new_v4().to_string();
    let mut message: Message = rpc.params.message;
    message.task_id.clone_from(&task_id);
    message.context_id.clone_from(&context_id);
    let task = Task {
        id: task_id,
        context_id,
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some(Timestamp::now()),
        },
        artifacts: vec![Artifact {
            artifact_id: uuid::Uuid::new_v4().to_string(),
            parts: message.parts.clone(),
            ..Artifact::default()
        }],
        history: vec![message],
        metadata: None,
    };
    let Ok(body) = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": rpc.id,
        "result": SendMessageResponse::Task(task.into()),
    })) else {
        return Ok(status(500));
    };
    let mut res = Response::new(Body::from(Bytes::from(body)));
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(res)
}

fn status(code: u16) -> Response<Body> {
    let mut res = Response::new(Body::empty());
    *res.status_mut() = http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::BAD_REQUEST);
    res
}
