"""Drives a running a2a-tower server over gRPC with the official Python
`a2a-sdk[grpc]` client.

Usage: python_grpc.py BASE_URL

Resolves the card over HTTP, picks its GRPC interface (the client's transport
selection from `supportedInterfaces`), then checks a blocking send, a
streaming send, get, cancel and an unknown task, and exits non-zero with a
message on the first mismatch. The server must run the grpc example (the echo
agent: it answers with the message text; after `hold` it waits until the task
is canceled).
"""

import asyncio
import sys
import uuid

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError


def fail(msg: str) -> None:
    print(f"INTEROP FAILURE: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond: bool, msg: str) -> None:
    if not cond:
        fail(msg)


def user_message(text: str) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
    )


def artifact_text(task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


async def main(base: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
    grpc_urls = [
        i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC"
    ]
    check(len(grpc_urls) == 1, f"card has no single GRPC interface: {card}")
    print(f"card: {card.name!r} grpc={grpc_urls[0]}")
    channels = []

    def channel(url: str):
        check(url == grpc_urls[0], f"the client dialed {url}, not the card's {grpc_urls[0]}")
        ch = grpc.aio.insecure_channel(url)
        channels.append(ch)
        return ch

    def client(streaming: bool):
        cfg = ClientConfig(
            streaming=streaming,
            supported_protocol_bindings=["GRPC"],
            grpc_channel_factory=channel,
        )
        return ClientFactory(cfg).create(card)

    # Blocking send.
    blocking = client(streaming=False)
    events = [
        e
        async for e in blocking.send_message(
            SendMessageRequest(message=user_message("hello over grpc"))
        )
    ]
    check(len(events) == 1, f"blocking send gave {len(events)} events")
    task = events[0].task
    check(task.id != "", f"blocking send gave no task: {events[0]}")
    check(
        task.status.state == TaskState.TASK_STATE_COMPLETED,
        f"blocking send state {TaskState.Name(task.status.state)}",
    )
    check(
        artifact_text(task) == "hello over grpc",
        f"blocking send artifact {artifact_text(task)!r}",
    )
    print(f"blocking send: task {task.id} completed")

    # Get.
    got = await blocking.get_task(GetTaskRequest(id=task.id))
    check(got.id == task.id, "get returned another task")
    check(got.context_id == task.context_id, "get changed the context id")
    check(artifact_text(got) == "hello over grpc", "get lost the artifact")
    print("get: ok")

    # Streaming send (a server-streaming RPC).
    streaming = client(streaming=True)
    kinds = []
    chunks = []
    final_state = None
    async for e in streaming.send_message(
        SendMessageRequest(message=user_message("one two three"))
    ):
        kind = e.WhichOneof("payload")
        kinds.append(kind)
        if kind == "artifact_update":
            chunks.extend(p.text for p in e.artifact_update.artifact.parts)
        elif kind == "status_update":
            final_state = e.status_update.status.state
        elif kind == "task":
            final_state = e.task.status.state
    check(kinds and kinds[0] == "task", f"stream did not start with the task: {kinds}")
    check("artifact_update" in kinds, f"stream had no artifact update: {kinds}")
    check(
        final_state == TaskState.TASK_STATE_COMPLETED,
        f"stream ended in {final_state}: {kinds}",
    )
    check("".join(chunks) == "one two three", f"streamed text {''.join(chunks)!r}")
    print(f"streaming send: {len(kinds)} events, completed")

    # Cancel a task that is still working.
    events = [
        e
        async for e in blocking.send_message(
            SendMessageRequest(
                message=user_message("hold"),
                configuration=SendMessageConfiguration(return_immediately=True),
            )
        )
    ]
    working = events[0].task
    check(
        working.status.state
        in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING),
        f"return_immediately gave {TaskState.Name(working.status.state)}",
    )
    canceled = await blocking.cancel_task(CancelTaskRequest(id=working.id))
    check(canceled.id == working.id, "cancel answered for another task")
    check(
        canceled.status.state == TaskState.TASK_STATE_CANCELED,
        f"cancel gave {TaskState.Name(canceled.status.state)}",
    )
    print("cancel: ok")

    # An unknown task: the ErrorInfo reason maps to the SDK's error class.
    try:
        await blocking.get_task(GetTaskRequest(id="no-such-task"))
        fail("get of an unknown task succeeded")
    except TaskNotFoundError:
        print("unknown task: TaskNotFoundError")

    for ch in channels:
        await ch.close()
    print("PYTHON INTEROP OK (GRPC)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: python_grpc.py BASE_URL")
    asyncio.run(main(sys.argv[1]))
