"""An A2A 0.3 agent served by the official Python `a2a-sdk` 0.3.x server, for
the Rust client's 0.3 interop tests (tests/interop/interop_v03_server.rs).

Usage: python03_server.py PORT   (0 picks a free port)

Serves JSON-RPC (POST /) and HTTP+JSON (the 0.3 routes under /rest/v1) on one
127.0.0.1 port, with a 0.3 agent card (`url`, `preferredTransport`,
`additionalInterfaces`, no `supportedInterfaces`) at
/.well-known/agent-card.json. Prints `listening on http://127.0.0.1:PORT` once
the socket is bound, then serves until killed.

The agent picks a behaviour from the first word of the message text:

- `stream W1 W2 ...`: WORKING, one artifact chunk per word, then COMPLETED;
- `slow MS`: WORKING for MS milliseconds, then COMPLETED; canceling it
  publishes CANCELED;
- `ask`: INPUT_REQUIRED with the question `What is your name?`; the next
  message to that task completes it with the artifact `Hello, NAME!`;
- `quota`: the JSON-RPC error -32099 `Quota exhausted` (a code outside the
  A2A table);
- anything else: COMPLETED with one artifact holding the text.
"""

import asyncio
import socket
import sys

import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    JSONRPCError,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task
from a2a.utils.errors import ServerError


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            word = text.partition(" ")[0]
            if word == "quota":
                raise ServerError(error=JSONRPCError(code=-32099, message="Quota exhausted"))
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.input_required:
            await updater.add_artifact([Part(root=TextPart(text=f"Hello, {text}!"))], name="greeting")
            await updater.complete()
            return
        word, _, rest = text.partition(" ")
        if word == "stream":
            await updater.start_work()
            for i, w in enumerate(rest.split()):
                await updater.add_artifact(
                    [Part(root=TextPart(text=w if i == 0 else f" {w}"))],
                    artifact_id="answer",
                    name="answer",
                    append=i > 0,
                )
                await asyncio.sleep(0.02)
            await updater.complete()
        elif word == "slow":
            ms = int(rest or "1000")
            await updater.start_work()
            await asyncio.sleep(ms / 1000)
            await updater.add_artifact([Part(root=TextPart(text=f"slept {ms}"))], name="slept")
            await updater.complete()
        elif word == "ask":
            question = new_agent_text_message("What is your name?", task.context_id, task.id)
            await updater.update_status(TaskState.input_required, question, final=True)
        else:
            await updater.add_artifact([Part(root=TextPart(text=text))], name="echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(base: str) -> AgentCard:
    return AgentCard(
        name="Python SDK 0.3 interop agent",
        description="Echo, streamed chunks, slow tasks and a question, served by a2a-sdk 0.3.",
        url=f"{base}/",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=f"{base}/", transport="JSONRPC"),
            AgentInterface(url=f"{base}/rest", transport="HTTP+JSON"),
        ],
        version="1.0.0",
        protocol_version="0.3.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    agent_card = card(base)
    handler = DefaultRequestHandler(agent_executor=Agent(), task_store=InMemoryTaskStore())
    app = A2ARESTFastAPIApplication(agent_card=agent_card, http_handler=handler).build(
        rpc_url="/rest"
    )
    A2AStarletteApplication(agent_card=agent_card, http_handler=handler).add_routes_to_app(
        app, rpc_url="/"
    )
    print(f"listening on {base}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
