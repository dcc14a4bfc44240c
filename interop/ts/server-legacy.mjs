// Interop server: @modelcontextprotocol/sdk 1.32.x (TS SDK v1), protocol 2025-11-25 only, with
// push-style elicitation (the server sends a real elicitation/create request mid-call).
//
// Usage: node server-legacy.mjs stdio
//        node server-legacy.mjs http PORT   (sessionful Streamable HTTP on 127.0.0.1:PORT/mcp,
//                                           with an event store for Last-Event-ID resumption;
//                                           prints "listening on http://127.0.0.1:PORT/mcp")
//
// Tools:
//   echo(text)                      -> text
//   provision_database(name)        -> pushes elicitation/create {region} on the call's own stream
//                                      (relatedRequestId), then "Created <name> in <region>"
//   provision_unrelated(name)       -> the same question pushed with no related request, so over
//                                      HTTP it travels on the GET stream
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const REGION = {
    type: 'object',
    properties: { region: { type: 'string', title: 'Region', enum: ['eu-west-1', 'us-east-1'] } },
    required: ['region']
};

function build() {
    const server = new McpServer({ name: 'sterna-interop-ts-v1', version: '0.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
        'echo',
        { description: 'Echoes its text', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    const provision = related => async ({ name }, extra) => {
        const options = related ? { relatedRequestId: extra.requestId } : undefined;
        const r = await server.server.elicitInput({ message: `Which region for ${name}?`, requestedSchema: REGION }, options);
        if (r.action !== 'accept') {
            return { isError: true, content: [{ type: 'text', text: `not provisioned (${r.action})` }] };
        }
        return { content: [{ type: 'text', text: `Created ${name} in ${r.content.region}` }] };
    };
    server.registerTool(
        'provision_database',
        { description: 'Creates a database; asks the region (pushed on the call stream)', inputSchema: { name: z.string() } },
        provision(true)
    );
    server.registerTool(
        'provision_unrelated',
        { description: 'Creates a database; asks the region (pushed with no related request)', inputSchema: { name: z.string() } },
        provision(false)
    );
    return server;
}

async function readJson(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
}

function serveHttp(port) {
    const transports = {};
    const badSession = res => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
    };
    const http = createServer(async (req, res) => {
        if (!req.url?.startsWith('/mcp')) return res.writeHead(404).end();
        const sid = req.headers['mcp-session-id'];
        try {
            if (req.method === 'POST') {
                const body = await readJson(req);
                let t = sid ? transports[sid] : undefined;
                if (!t && !sid && isInitializeRequest(body)) {
                    t = new StreamableHTTPServerTransport({
                        sessionIdGenerator: () => randomUUID(),
                        eventStore: new InMemoryEventStore(),
                        onsessioninitialized: id => (transports[id] = t)
                    });
                    t.onclose = () => t.sessionId && delete transports[t.sessionId];
                    await build().connect(t);
                } else if (!t) {
                    return sid ? res.writeHead(404).end('Session not found') : badSession(res);
                }
                return await t.handleRequest(req, res, body);
            }
            const t = sid ? transports[sid] : undefined;
            if (!t) return sid ? res.writeHead(404).end('Session not found') : badSession(res);
            return await t.handleRequest(req, res);
        } catch (e) {
            console.error('[server-legacy]', e);
            if (!res.headersSent) res.writeHead(500).end();
        }
    });
    http.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
    for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
}

const [mode, port] = process.argv.slice(2);
if (mode === 'stdio') {
    await build().connect(new StdioServerTransport());
} else if (mode === 'http') {
    serveHttp(Number(port ?? 0));
} else {
    console.error('usage: node server-legacy.mjs stdio | http PORT');
    process.exit(2);
}
