"""Drives a running a2a-tower server with the official Python `a2a-sdk` client.

Usage: python_client.py BASE_URL BINDING   (BINDING is JSONRPC, HTTP+JSON or GRPC)

Checks card resolution, a blocking send, a streaming send, get and cancel, and
exits non-zero with a message on the first mismatch. The server must run the
echo example or the grpc example (a text agent that streams its input back
word by word; a text starting with `sleep N` stays WORKING for N seconds).
Over GRPC the card is still read over HTTP; the SDK picks the card's GRPC
interface (`host:port`) and dials it with `a2a-sdk[grpc]`.
"""

import asyncio
import sys
import uuid

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


async def main(base: str, binding: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        # Card resolution.
        card = await A2ACardResolver(http, base).get_agent_card()
        bindings = [i.protocol_binding for i in card.supported_interfaces]
        check(binding in bindings, f"card lacks a {binding} interface: {bindings}")
        check(card.capabilities.streaming, "card does not declare streaming")
        print(f"card: {card.name!r} interfaces={bindings}")

        channels = []

        def grpc_channel(url: str):
            import grpc

            channels.append(grpc.aio.insecure_channel(url))
            return channels[-1]

        def client(streaming: bool):
            cfg = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=[binding],
                grpc_channel_factory=grpc_channel if binding == "GRPC" else None,
            )
            return ClientFactory(cfg).create(card)

        # Blocking send.
        blocking = client(streaming=False)
        events = [
            e
            async for e in blocking.send_message(
                SendMessageRequest(message=user_message("hello from python"))
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
            artifact_text(task) == "hello from python",
            f"blocking send artifact {artifact_text(task)!r}",
        )
        print(f"blocking send: task {task.id} completed")

        # Get.
        got = await blocking.get_task(GetTaskRequest(id=task.id))
        check(got.id == task.id, "get returned another task")
        check(got.context_id == task.context_id, "get changed the context id")
        check(
            got.status.state == TaskState.TASK_STATE_COMPLETED,
            f"get state {TaskState.Name(got.status.state)}",
        )
        check(artifact_text(got) == "hello from python", "get lost the artifact")
        print("get: ok")

        # Streaming send.
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
                    message=user_message("sleep 30"),
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
        after = await blocking.get_task(GetTaskRequest(id=working.id))
        check(
            after.status.state == TaskState.TASK_STATE_CANCELED,
            f"after cancel, get gave {TaskState.Name(after.status.state)}",
        )
        print("cancel: ok")

        # Unknown task: each transport maps the error to the SDK's
        # TaskNotFoundError (JSON-RPC code -32001; over REST and gRPC the
        # ErrorInfo reason TASK_NOT_FOUND).
        try:
            await blocking.get_task(GetTaskRequest(id="no-such-task"))
        except TaskNotFoundError:
            pass
        except Exception as e:  # noqa: BLE001 - report whatever else came back
            fail(f"unknown task raised {type(e).__name__}: {e}")
        else:
            fail("get of an unknown task succeeded")
        print("not found: ok")
        for channel in channels:
            await channel.close()
    print(f"PYTHON INTEROP OK ({binding})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
