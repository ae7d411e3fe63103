// The official TypeScript SDK 1.x as a server (handshake era only), for
// tests/client: trio_mcp.client must fall back to an initialize session with it.
//
//   node server.mjs            serves stdio
//   node server.mjs --http     serves Streamable HTTP sessions on 127.0.0.1 (a free
//                              port), printing "listening PORT" on stdout
//
// Tools: echo, add (structured), fail (isError), count (progress), greet
// (elicitation from the client), wait_cancel (writes "started" to the file it is
// given, then "cancelled" once its request's signal aborts).
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function build() {
  const server = new McpServer(
    { name: "ts-upstream", version: "1.0.0" },
    { instructions: "A TypeScript SDK 1.x upstream." },
  );
  server.registerTool(
    "echo",
    { description: "Say the text back.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    {
      description: "Add two numbers.",
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { total: z.number().int() },
    },
    async ({ a, b }) => ({
      content: [{ type: "text", text: JSON.stringify({ total: a + b }) }],
      structuredContent: { total: a + b },
    }),
  );
  server.registerTool(
    "fail",
    { description: "Fail as a tool does.", inputSchema: { why: z.string() } },
    async ({ why }) => ({ content: [{ type: "text", text: why }], isError: true }),
  );
  server.registerTool(
    "count",
    { description: "Count with progress.", inputSchema: { to: z.number().int() } },
    async ({ to }, extra) => {
      const token = extra._meta?.progressToken;
      for (let done = 1; done <= to; done++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: done, total: to, message: `step ${done}` },
          });
        }
      }
      return { content: [{ type: "text", text: `counted to ${to}` }] };
    },
  );
  server.registerTool(
    "greet",
    { description: "Ask for a name, then greet it." },
    async () => {
      const answer = await server.server.elicitInput({
        message: "Your name?",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
        },
      });
      return { content: [{ type: "text", text: `hello ${answer.content?.name}` }] };
    },
  );
  server.registerTool(
    "wait_cancel",
    { description: "Wait until cancelled.", inputSchema: { mark: z.string() } },
    async ({ mark }, extra) => {
      writeFileSync(mark, "started\n");
      await new Promise((resolve) => {
        extra.signal.addEventListener("abort", () => {
          writeFileSync(mark, "started\ncancelled\n");
          resolve();
        });
      });
      return { content: [{ type: "text", text: "cancelled" }] };
    },
  );
  return server;
}

if (process.argv[2] !== "--http") {
  await build().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text ? JSON.parse(text) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport && req.method === "POST" && body && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    if (!transport) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: No valid session ID provided" } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, "127.0.0.1", () => {
    console.log(`listening ${http.address().port}`);
  });
}
