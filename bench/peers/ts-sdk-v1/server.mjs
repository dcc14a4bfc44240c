// Bench peer: @modelcontextprotocol/sdk 1.32.2 (TS SDK v1), protocol 2025-11-25, sessionful
// Streamable HTTP as the SDK documents it: one StreamableHTTPServerTransport and one McpServer per
// session (Mcp-Session-Id), answers as SSE streams (the SDK default), DELETE ends a session.
//
// Tools:
//   echo(text)               -> text
//   provision_database(name) -> pushes elicitation/create {region} on the call's own SSE stream
//                               (relatedRequestId), waits for the answer the client POSTs, then
//                               returns "Created <name> in <region>".
// TS_EVENT_STORE=1 adds the SDK's example InMemoryEventStore (resumable streams with Last-Event-ID;
// it keeps every event of the session). Default 0: no event store.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const port = Number(process.argv[2] ?? process.env.PORT ?? 3004);
const eventStore = process.env.TS_EVENT_STORE === '1';

const REGION = {
    type: 'object',
    properties: { region: { type: 'string', title: 'Region', enum: ['eu-west-1', 'us-east-1'] } },
    required: ['region']
};

function build() {
    const server = new McpServer({ name: 'peer-ts-sdk-v1', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
        'echo',
        { description: 'Echo the text argument', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    server.registerTool(
        'provision_database',
        { description: 'Create a database; asks for the region', inputSchema: { name: z.string() } },
        async ({ name }, extra) => {
            const r = await server.server.elicitInput(
                { message: `Which region for ${name}?`, requestedSchema: REGION },
                { relatedRequestId: extra.requestId }
            );
            if (r.action !== 'accept') {
                return { isError: true, content: [{ type: 'text', text: `not provisioned (${r.action})` }] };
            }
            return { content: [{ type: 'text', text: `Created ${name} in ${r.content.region}` }] };
        }
    );
    return server;
}

async function readJson(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
}

const transports = {};

function badSession(res) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
}

const httpServer = createServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) return res.writeHead(404).end();
    const sid = req.headers['mcp-session-id'];
    try {
        if (req.method === 'POST') {
            const body = await readJson(req);
            let t = sid ? transports[sid] : undefined;
            if (!t && !sid && isInitializeRequest(body)) {
                t = new StreamableHTTPServerTransport({
                    sessionIdGenerator: () => randomUUID(),
                    ...(eventStore ? { eventStore: new InMemoryEventStore() } : {}),
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
        if (process.env.DEBUG) console.error('[peer-ts-sdk-v1]', e);
        if (!res.headersSent) res.writeHead(500).end();
    }
});
httpServer.keepAliveTimeout = 65_000;
httpServer.listen(port, '127.0.0.1', () =>
    console.error(`[peer-ts-sdk-v1] listening on http://127.0.0.1:${port}/mcp (eventStore=${eventStore})`)
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { httpServer.close(); process.exit(0); });
