"""An A2A agent served by the official Python `a2a-sdk` server, for the Rust
client's interop tests (tests/interop/interop_python_server.rs).

Usage: python_server.py PORT [--grpc]   (0 picks a free port)

Serves JSON-RPC (POST /) and HTTP+JSON (the REST routes at the root) on one
127.0.0.1 port, with the agent card at /.well-known/agent-card.json listing
both interfaces. Prints `listening on http://127.0.0.1:PORT` once the socket
is bound, then serves until killed. With `--grpc`, the SDK's gRPC handler
(`GrpcHandler` on a `grpc.aio` server) also serves the same agent on another
free 127.0.0.1 port, listed first on the card as a `GRPC` interface
(`127.0.0.1:GPORT`), for tests/interop/interop_python_server_grpc.rs.

The agent picks a behaviour from the first word of the message text:

- `stream W1 W2 ...`: a task whose one artifact arrives word by word (the
  first chunk, then appended chunks 20 ms apart, the last marked
  `lastChunk`), then COMPLETED;
- `slow MS`: a task that is WORKING for MS milliseconds, then COMPLETED
  with the artifact `slept MS`; canceling it publishes CANCELED;
- `ask`: a task that stops at INPUT_REQUIRED with the question
  `What is your name?`; the next message to that task (same taskId) completes
  it with the artifact `Hello, NAME!`;
- anything else (`echo ...`): a task COMPLETED with one artifact holding the
  text.
"""

import asyncio
import socket
import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers import (
    new_task_from_user_message,
    new_text_artifact_update_event,
    new_text_message,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    TaskState,
)

QUESTION = "What is your name?"


class Agent(AgentExecutor):
    """The behaviours above, chosen by the message's first word."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        # A follow-up to the question: the answer completes the task.
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([Part(text=f"Hello, {text}!")], name="greeting")
            await updater.complete()
            return

        word, _, rest = text.partition(" ")
        if word == "stream":
            await updater.start_work()
            words = rest.split()
            artifact_id = "answer"
            for i, w in enumerate(words):
                chunk = w if i == 0 else f" {w}"
                await event_queue.enqueue_event(
                    new_text_artifact_update_event(
                        task.id,
                        task.context_id,
                        name="answer",
                        text=chunk,
                        append=i > 0,
                        last_chunk=i == len(words) - 1,
                        artifact_id=artifact_id,
                    )
                )
                await asyncio.sleep(0.02)
            await updater.complete()
        elif word == "slow":
            ms = int(rest or "1000")
            await updater.start_work()
            await asyncio.sleep(ms / 1000)
            await updater.add_artifact([Part(text=f"slept {ms}")], name="slept")
            await updater.complete()
        elif word == "ask":
            question = new_text_message(
                QUESTION, context_id=task.context_id, task_id=task.id
            )
            await updater.requires_input(question)
        else:
            await updater.add_artifact([Part(text=text)], name="echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(base: str, grpc_addr: str | None = None) -> AgentCard:
    grpc_interfaces = (
        [AgentInterface(url=grpc_addr, protocol_binding="GRPC", protocol_version="1.0")]
        if grpc_addr
        else []
    )
    return AgentCard(
        name="Python SDK interop agent",
        description="Echo, streamed chunks, slow tasks and a question, served by a2a-sdk.",
        version="1.0.0",
        supported_interfaces=[
            *grpc_interfaces,
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes text; see python_server.py for the other words.",
                tags=["test"],
            )
        ],
    )


async def main(port: int, with_grpc: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    grpc_server = None
    grpc_addr = None
    if with_grpc:
        import grpc

        grpc_server = grpc.aio.server()
        grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
        grpc_addr = f"127.0.0.1:{grpc_port}"
    agent_card = card(base, grpc_addr)
    handler = DefaultRequestHandler(
        agent_executor=Agent(),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
    )
    if grpc_server is not None:
        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
        await grpc_server.start()
    app = Starlette(
        routes=[
            *create_agent_card_routes(agent_card),
            *create_jsonrpc_routes(handler, rpc_url="/"),
            *create_rest_routes(handler),
        ]
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"listening on {base}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--grpc"]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(int(sys.argv[1]), sys.argv[2:] == ["--grpc"]))
