"""Drives a running a2a-tower echo example (A2A_V03=1) with the official
Python `a2a-sdk` 0.3.x client.

Usage: python03_client.py BASE_URL BINDING   (BINDING is JSONRPC or HTTP+JSON)

Checks 0.3 card resolution, a blocking send, a streaming send, get, cancel,
resubscription, an unknown task, and a task created over 0.3 read by a 1.0
request (JSON-RPC `GetTask` with `A2A-Version: 1.0`); exits non-zero with a
message on the first mismatch.
"""

import asyncio
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError, A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TextPart,
    TransportProtocol,
)


def fail(msg: str) -> None:
    print(f"INTEROP FAILURE: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond: bool, msg: str) -> None:
    if not cond:
        fail(msg)


def user_message(text: str) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
    )


def artifact_text(task: Task) -> str:
    return "".join(p.root.text for a in task.artifacts or [] for p in a.parts)


async def last_task(stream) -> Task:
    task = None
    async for event in stream:
        if isinstance(event, tuple):
            task = event[0]
    check(task is not None, "no task in the answer")
    return task


async def main(base: str, binding: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        check(card.url.startswith(base), f"card url {card.url}")
        transports = [i.transport for i in card.additional_interfaces or []]
        check(binding in transports, f"card lacks {binding}: {transports}")

        def client(streaming: bool):
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_transports=[TransportProtocol(binding)],
            )
            return ClientFactory(config).create(card)

        # Blocking send (no streaming).
        task = await last_task(client(False).send_message(user_message("hello over zero three")))
        check(task.status.state == TaskState.completed, f"send: {task.status.state}")
        check(artifact_text(task) == "hello over zero three", f"send text: {artifact_text(task)!r}")

        # Streaming send.
        events = []
        async for event in client(True).send_message(user_message("one two three")):
            events.append(event)
        task = events[-1][0]
        check(task.status.state == TaskState.completed, f"stream: {task.status.state}")
        check(len(events) >= 3, f"stream events: {len(events)}")

        # Get.
        got = await client(False).get_task(TaskQueryParams(id=task.id))
        check(got.status.state == TaskState.completed, f"get: {got.status.state}")

        # The same task over 1.0.
        res = await http.post(
            base + "/",
            headers={"A2A-Version": "1.0"},
            json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task.id}},
        )
        state = res.json()["result"]["status"]["state"]
        check(state == "TASK_STATE_COMPLETED", f"1.0 GetTask: {state}")

        # Resubscribe to a running task, then cancel another.
        c = client(True)
        first = None
        async for event in c.send_message(user_message("sleep 1 then done")):
            first = event[0]
            break
        check(first is not None, "no first event")
        resub = await last_task(c.resubscribe(TaskIdParams(id=first.id)))
        check(resub.status.state == TaskState.completed, f"resubscribe: {resub.status.state}")

        first = None
        async for event in c.send_message(user_message("sleep 30 never")):
            first = event[0]
            break
        canceled = await c.cancel_task(TaskIdParams(id=first.id))
        check(canceled.status.state == TaskState.canceled, f"cancel: {canceled.status.state}")

        # Unknown task.
        try:
            await client(False).get_task(TaskQueryParams(id="no-such-task"))
            fail("get of an unknown task succeeded")
        except A2AClientJSONRPCError as e:
            check(e.error.code == -32001, f"unknown task code: {e.error.code}")
        except (A2AClientHTTPError, A2AClientError) as e:
            check(binding == "HTTP+JSON", f"unexpected error over {binding}: {e}")

    print(f"PYTHON03 INTEROP OK ({binding})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1].rstrip("/"), sys.argv[2]))
