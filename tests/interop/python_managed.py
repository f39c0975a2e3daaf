"""Runs the managed example's refund flow with the official Python `a2a-sdk` client.

Usage: python_managed.py BASE_URL BINDING   (BINDING is JSONRPC or HTTP+JSON)

The server must run the managed example (program `example.refund`). Over the
given binding the script: resolves the card (which declares the extension
urn:scope:a2a:external-wait); starts a refund whose amount has more digits
than a double holds; reads the two pending questions from the task metadata
`scope.pending`; has an invalid answer refused; answers each wait with a
message whose metadata `scope.wait` names it (`{"process", "key"}`); and gets
the COMPLETED task whose artifact `result` holds the amount's exact text. It
exits non-zero with a message on the first mismatch.

Numbers: the SDK holds JSON numbers as protobuf doubles, so the start goes as
a text part with the input's JSON text (the server parses it with exact
numbers), and the exact amount is checked in the raw bytes of the server's
answers (read with `parse_float=decimal.Decimal`), not in the SDK's objects.
"""

import asyncio
import decimal
import json
import sys
import time
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf import json_format, struct_pb2

AMOUNT = "12345678901234567890.123456789"
START = '{"order": "A-1", "amount": ' + AMOUNT + "}"
EXTENSION = "urn:scope:a2a:external-wait"
PATIENCE = 30.0  # seconds the run may take to open both waits


def fail(msg: str) -> None:
    print(f"INTEROP FAILURE: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond: bool, msg: str) -> None:
    if not cond:
        fail(msg)


def state_name(state) -> str:
    return TaskState.Name(state)


def data_part(value) -> Part:
    return Part(data=json_format.ParseDict(value, struct_pb2.Value()))


def answer(task, process: str, key: str, value) -> Message:
    """An answer to the wait (process, key) of `task`: one data part."""
    return Message(
        message_id=str(uuid.uuid4()),
        task_id=task.id,
        context_id=task.context_id,
        role=Role.ROLE_USER,
        parts=[data_part(value)],
        metadata={"scope.wait": {"process": process, "key": key}},
    )


def pending(task) -> dict:
    """The task's open questions by (owner, key)."""
    meta = json_format.MessageToDict(task.metadata)
    return {(q["owner"], q["key"]): q for q in meta.get("scope.pending", [])}


def exact_json(raw: bytes):
    """A raw answer parsed with every decimal number exact."""
    return json.loads(raw, parse_float=decimal.Decimal)


async def main(base: str, binding: str) -> None:
    # Keeps the raw body of every answer, to check numbers the SDK's doubles
    # cannot hold.
    raw_bodies: list[bytes] = []

    async def keep_body(response: httpx.Response) -> None:
        raw_bodies.append(await response.aread())

    async with httpx.AsyncClient(
        timeout=30, event_hooks={"response": [keep_body]}
    ) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        bindings = [i.protocol_binding for i in card.supported_interfaces]
        check(binding in bindings, f"card lacks a {binding} interface: {bindings}")
        uris = [e.uri for e in card.capabilities.extensions]
        check(EXTENSION in uris, f"card does not declare {EXTENSION}: {uris}")
        print(f"card: {card.name!r} interfaces={bindings}")

        cfg = ClientConfig(
            streaming=False,
            httpx_client=http,
            supported_protocol_bindings=[binding],
        )
        client = ClientFactory(cfg).create(card)

        async def send(message: Message):
            events = [
                e async for e in client.send_message(SendMessageRequest(message=message))
            ]
            check(len(events) == 1, f"blocking send gave {len(events)} events")
            check(events[0].WhichOneof("payload") == "task", f"no task: {events[0]}")
            return events[0].task

        # Start: the blocking send returns once the run asks a question.
        start = Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            parts=[Part(text=START)],
        )
        task = await send(start)
        check(
            task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f"start gave {state_name(task.status.state)}",
        )
        meta = json_format.MessageToDict(task.metadata)
        check(meta.get("scope.program") == "example.refund", f"metadata {meta}")
        check(meta.get("scope.root_id") == task.id, f"metadata {meta}")
        root, child = task.id, f"{task.id}/fraud-check"
        print(f"start: task {task.id} input required")

        # Both questions, read from the task metadata.
        deadline = time.monotonic() + PATIENCE
        while True:
            task = await client.get_task(GetTaskRequest(id=task.id))
            questions = pending(task)
            if set(questions) == {(root, "approve"), (child, "score")}:
                break
            check(time.monotonic() < deadline, f"pending questions: {questions}")
            await asyncio.sleep(0.05)
        approve, score = questions[(root, "approve")], questions[(child, "score")]
        check(approve["id"] != score["id"], f"question ids collide: {questions}")
        check(
            approve["question"] == {"text": f"Refund {AMOUNT} for A-1?"},
            f"approve question {approve['question']}",
        )
        check(score["question"] is None, f"score question {score['question']}")
        check(
            score["schema"] == {"type": "integer", "minimum": 0, "maximum": 100},
            f"score schema {score['schema']}",
        )
        print(f"pending: approve {approve['id']}, score {score['id']}")

        # An answer outside the wait's schema is refused and changes nothing.
        try:
            await send(answer(task, child, "score", 101))
        except InvalidParamsError:
            pass
        except Exception as e:  # noqa: BLE001 - report whatever else came back
            fail(f"an invalid answer raised {type(e).__name__}: {e}")
        else:
            fail("an answer of 101 to a 0..100 wait was admitted")
        task = await client.get_task(GetTaskRequest(id=task.id))
        check(set(pending(task)) == set(questions), f"after a refusal: {pending(task)}")
        print("invalid answer: refused")

        # Answer `approve`: the other question stays, with the same id.
        task = await send(answer(task, root, "approve", {"approved": True, "note": "ok"}))
        check(
            task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f"after approve: {state_name(task.status.state)}",
        )
        left = pending(task)
        check(list(left) == [(child, "score")], f"after approve, pending {left}")
        check(left[(child, "score")]["id"] == score["id"], "the score question's id changed")
        print("approve: answered")

        # Answer `score` (the SDK sends 12 as the double 12.0, an integer to
        # JSON Schema): the run completes.
        task = await send(answer(task, child, "score", 12))
        check(
            task.status.state == TaskState.TASK_STATE_COMPLETED,
            f"after score: {state_name(task.status.state)}",
        )
        check(len(task.artifacts) == 1, f"artifacts {task.artifacts}")
        check(task.artifacts[0].artifact_id == "result", f"artifact {task.artifacts[0]}")
        check(pending(task) == {}, f"a completed task lists {pending(task)}")

        # The exact amount, in the raw answer to that send.
        raw = raw_bodies[-1]
        body = exact_json(raw)
        sent = body["result"] if binding == "JSONRPC" else body
        result = sent["task"]["artifacts"][0]["parts"][0]["data"]
        expected = {"order": "A-1", "refunded": decimal.Decimal(AMOUNT), "note": "ok"}
        check(result == expected, f"result {result}")
        check(str(result["refunded"]) == AMOUNT, f"refunded {result['refunded']}")
        check(
            b'"refunded":' + AMOUNT.encode() in raw,
            f"the raw answer lacks the amount's exact text: {raw!r}",
        )
        meta = json_format.MessageToDict(task.metadata)
        check(meta.get("scope.termination") == "completed", f"metadata {meta}")
        print(f"score: answered, completed, refunded {result['refunded']}")

        # Read back: still completed, the same exact result.
        got = await client.get_task(GetTaskRequest(id=task.id))
        check(
            got.status.state == TaskState.TASK_STATE_COMPLETED,
            f"get gave {state_name(got.status.state)}",
        )
        body = exact_json(raw_bodies[-1])
        read = body["result"] if binding == "JSONRPC" else body
        check(
            read["artifacts"][0]["parts"][0]["data"] == expected,
            f"get result {read['artifacts']}",
        )
        print("get: ok")
    print(f"PYTHON MANAGED INTEROP OK ({binding})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
