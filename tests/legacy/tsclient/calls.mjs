// The official TypeScript SDK 1.x client making plain calls, over stdio or
// Streamable HTTP, to compare a server called directly with the same server behind
// a trio_mcp gateway (tests/upstream/test_official.py).
//
//   node calls.mjs CALLS_JSON COMMAND [ARGS...]    launches COMMAND (stdio)
//   node calls.mjs CALLS_JSON --http URL            connects to URL (a session)
//
// CALLS_JSON is a list of [tool, arguments]; prints one JSON object: the tool names
// listed and each call's result (content, structuredContent, isError) in order.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [callsJson, command, ...args] = process.argv.slice(2);
const transport =
  command === "--http"
    ? new StreamableHTTPClientTransport(new URL(args[0]))
    : new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "ts-calls", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const results = [];
for (const [name, callArgs] of JSON.parse(callsJson)) {
  const result = await client.callTool({ name, arguments: callArgs });
  results.push({
    content: result.content,
    structuredContent: result.structuredContent ?? null,
    isError: result.isError ?? false,
  });
}
console.log(JSON.stringify({ tools, results }));
await client.close();
