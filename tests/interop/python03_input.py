"""An INPUT_REQUIRED continuation with the official Python `a2a-sdk` 0.3.x
client against the conformance example (A2A_V03=1), whose agent picks a
behaviour by `messageId` prefix: `tck-input-required` asks for input,
`tck-complete-task` on the same task completes it.

Usage: python03_input.py BASE_URL BINDING   (BINDING is JSONRPC or HTTP+JSON)
"""

import asyncio
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TaskState, TextPart, TransportProtocol


def fail(msg: str) -> None:
    print(f"INTEROP FAILURE: {msg}", file=sys.stderr)
    sys.exit(1)


async def last_task(stream):
    task = None
    async for event in stream:
        if isinstance(event, tuple):
            task = event[0]
    return task


async def main(base: str, binding: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        config = ClientConfig(
            streaming=False,
            httpx_client=http,
            supported_transports=[TransportProtocol(binding)],
        )
        client = ClientFactory(config).create(card)
        first = Message(
            message_id=f"tck-input-required-{uuid.uuid4()}",
            role=Role.user,
            parts=[Part(root=TextPart(text="start"))],
        )
        task = await last_task(client.send_message(first))
        if task is None or task.status.state != TaskState.input_required:
            fail(f"first answer: {task}")
        follow = Message(
            message_id=f"tck-complete-task-{uuid.uuid4()}",
            role=Role.user,
            task_id=task.id,
            context_id=task.context_id,
            parts=[Part(root=TextPart(text="here you are"))],
        )
        done = await last_task(client.send_message(follow))
        if done is None or done.id != task.id or done.status.state != TaskState.completed:
            fail(f"continuation: {done}")
    print(f"PYTHON03 INPUT OK ({binding})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1].rstrip("/"), sys.argv[2]))
