//! Interoperability with the official Python `a2a-sdk[grpc]` 1.x client over
//! the gRPC binding: the built `grpc` example (the echo example's agent on
//! JSON-RPC, HTTP+JSON and gRPC) is driven by `tests/interop/python_client.py`
//! with the binding `GRPC`: the card is read over HTTP, the SDK picks its GRPC
//! interface (`host:port`), then a blocking send, a streaming send, get,
//! cancel and an unknown task (TaskNotFoundError from the ErrorInfo reason).
//! Once with gRPC on the same listener as the HTTP bindings (h2c), once on a
//! listener of its own.
//!
//! Python comes from `A2A_PYTHON`, else `.venv/bin/python` at the repository
//! root (`scripts/test.sh` installs `a2a-sdk[http-server,grpc]>=1.3,<2`). A
//! missing interpreter or SDK fails these tests; they never skip.

use crate::support;

use support::python::run_script;
use support::server::Server;

const ECHO: &str = "python_client.py";
const ECHO_DONE: &str = "PYTHON INTEROP OK";

#[tokio::test]
async fn python_sdk_grpc_client_on_the_shared_listener() {
    run_script(Server::start("grpc"), ECHO, "GRPC", ECHO_DONE).await;
}

#[tokio::test]
async fn python_sdk_grpc_client_on_a_grpc_listener() {
    let server = Server::start_with("grpc", &[("A2A_GRPC_ADDR", "127.0.0.1:0")]);
    run_script(server, ECHO, "GRPC", ECHO_DONE).await;
}
