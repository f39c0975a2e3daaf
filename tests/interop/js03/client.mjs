// Drives a running a2a-tower echo example (A2A_V03=1) with the official
// @a2a-js/sdk 0.3.x client.
//
// Usage: node client.mjs BASE_URL BINDING   (BINDING is JSONRPC or HTTP+JSON)
//
// Checks card resolution, a blocking send, a streaming send, get, cancel,
// resubscription (POST :subscribe over HTTP+JSON) and an unknown task; exits
// non-zero with a message on the first mismatch.
import { randomUUID } from "node:crypto";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const [base, binding] = process.argv.slice(2);

function check(cond, msg) {
  if (!cond) {
    console.error(`INTEROP FAILURE: ${msg}`);
    process.exit(1);
  }
}

const message = (text) => ({
  kind: "message",
  messageId: randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
});

const text = (task) =>
  (task.artifacts ?? []).flatMap((a) => a.parts).map((p) => p.text).join("");

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    preferredTransports: [binding],
  }),
);
const client = await factory.createFromUrl(base);

// Blocking send.
const sent = await client.sendMessage({
  message: message("hello from js"),
  configuration: { blocking: true },
});
check(sent.kind === "task", `send kind ${sent.kind}`);
check(sent.status.state === "completed", `send state ${sent.status.state}`);
check(text(sent) === "hello from js", `send text ${text(sent)}`);

// Streaming send.
const kinds = [];
let taskId;
let finalState;
for await (const ev of client.sendMessageStream({ message: message("a b c") })) {
  kinds.push(ev.kind);
  if (ev.kind === "task") taskId = ev.id;
  if (ev.kind === "status-update") finalState = ev.status.state;
}
check(kinds[0] === "task", `first event ${kinds[0]}`);
check(kinds.includes("artifact-update"), `kinds ${kinds}`);
check(finalState === "completed", `stream final ${finalState}`);

// Get.
const got = await client.getTask({ id: taskId });
check(got.status.state === "completed", `get ${got.status.state}`);

// Resubscribe to a running task.
let running;
for await (const ev of client.sendMessageStream({ message: message("sleep 1 then done") })) {
  running = ev.kind === "task" ? ev.id : ev.taskId;
  break;
}
let resubState;
for await (const ev of client.resubscribeTask({ id: running })) {
  if (ev.kind === "status-update") resubState = ev.status.state;
  if (ev.kind === "task") resubState = ev.status.state;
}
check(resubState === "completed", `resubscribe ${resubState}`);

// Cancel.
let sleeper;
for await (const ev of client.sendMessageStream({ message: message("sleep 30 never") })) {
  sleeper = ev.kind === "task" ? ev.id : ev.taskId;
  break;
}
const canceled = await client.cancelTask({ id: sleeper });
check(canceled.status.state === "canceled", `cancel ${canceled.status.state}`);

// Unknown task.
try {
  await client.getTask({ id: "no-such-task" });
  check(false, "get of an unknown task succeeded");
} catch (e) {
  check(/not found/i.test(String(e.message)) || e.code === -32001, `unknown task error ${e}`);
}

console.log(`JS03 INTEROP OK (${binding})`);
