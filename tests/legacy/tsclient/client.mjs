// The official TypeScript SDK 1.x client against a trio_mcp server, over stdio or
// Streamable HTTP.
//
//   node client.mjs COMMAND [ARGS...]     launches COMMAND as the server (stdio)
//   node client.mjs --http URL            connects to the endpoint URL (a session)
//
// Speaks the handshake-era protocol (the SDK's initialize, revision 2025-11-25) and
// prints one JSON object with what it saw: tools, calls (structured, elicitation,
// sampling, roots), progress, logs after logging/setLevel, a resource update after
// resources/subscribe, a cancelled call, and the error of a missing resource; over
// HTTP the session id, and the session ended with DELETE. tests/legacy/test_ts_client.py
// runs it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const http = command === "--http";
const transport = http
  ? new StreamableHTTPClientTransport(new URL(args[0]))
  : new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client(
  { name: "ts-legacy-client", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
);

const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.method);
  return { action: "accept", content: { name: "Ada" } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  asked.push(request.method);
  return {
    role: "assistant",
    content: { type: "text", text: "Paris" },
    model: "test-model",
    stopReason: "endTurn",
  };
});
client.setRequestHandler(ListRootsRequestSchema, async (request) => {
  asked.push(request.method);
  return { roots: [{ uri: "file:///work", name: "work" }] };
});

const logs = [];
let waiting;
const isWaiting = new Promise((resolve) => (waiting = resolve));
client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
  logs.push(note.params);
  if (note.params.data === "waiting") waiting();
});
let updated;
const isUpdated = new Promise((resolve) => (updated = resolve));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
  updated(note.params.uri);
});

const text = (result) => result.content[0].text;
const out = {};
await client.connect(transport);
out.server = client.getServerVersion();
out.capabilities = client.getServerCapabilities();
out.tools = (await client.listTools()).tools.map((tool) => tool.name);
out.added = (await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))
  .structuredContent;
out.echoed = (await client.callTool({ name: "echo", arguments: { text: "hi" } }))
  .structuredContent;
out.greeted = text(await client.callTool({ name: "ask_name", arguments: {} }));
out.modelled = text(await client.callTool({ name: "ask_model", arguments: {} }));
out.rooted = text(await client.callTool({ name: "ask_roots", arguments: {} }));
out.all = text(await client.callTool({ name: "ask_all", arguments: {} }));
await client.setLoggingLevel("info");
const progress = [];
out.slow = text(
  await client.callTool({ name: "slow", arguments: { steps: 3 } }, undefined, {
    onprogress: (note) => progress.push(note.progress),
  }),
);
out.progress = progress;
out.read = (await client.readResource({ uri: "note://alpha" })).contents[0].text;
out.prompt = (await client.getPrompt({ name: "greet", arguments: { name: "Ada" } }))
  .messages[0].content.text;
out.completed = (
  await client.complete({
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "name", value: "A" },
  })
).completion.values;
await client.subscribeResource({ uri: "watch://counter" });
// Over HTTP updates come on the session's GET stream, which the SDK opens on its
// own schedule: touch until one arrives (a repeated update is harmless).
let touched = false;
isUpdated.then(() => (touched = true));
while (!touched) {
  await client.callTool({ name: "touch", arguments: {} });
  await Promise.race([isUpdated, new Promise((resolve) => setTimeout(resolve, 200))]);
}
out.updated = await isUpdated;
await client.unsubscribeResource({ uri: "watch://counter" });

const abort = new AbortController();
const forever = client.callTool({ name: "forever", arguments: {} }, undefined, {
  signal: abort.signal,
});
await isWaiting;
abort.abort("enough");
try {
  await forever;
  out.cancelled = "answered";
} catch (error) {
  out.cancelled = "cancelled";
}
out.after = text(await client.callTool({ name: "echo", arguments: { text: "still here" } }));
try {
  await client.readResource({ uri: "note://gamma" });
} catch (error) {
  out.missing = { code: error.code, data: error.data };
}
await client.ping();
out.logs = logs;
out.asked = asked;
if (http) {
  out.session = transport.sessionId;
  await transport.terminateSession();
}
await client.close();
console.log(JSON.stringify(out));
