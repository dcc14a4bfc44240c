// Interop server: @modelcontextprotocol/server 2.4.x (TS SDK v2) serving protocol 2026-07-28 only
// (stateless, per-request Streamable HTTP via createMcpHandler + node:http) on 127.0.0.1:PORT/mcp.
//
// Usage: node server-two-questions.mjs PORT
//   env TS_RESPONSE_MODE=auto|json|sse  response shaping (default auto = JSON unless streaming is needed)
//   env DEBUG=1                         log server-side errors (e.g. requestState rejections) to stderr
// Prints "listening http://127.0.0.1:PORT/mcp" on stdout when ready.
//
// Tool register_user (no arguments), multi round-trip (MRTR):
//   round 1 -> input_required with TWO form elicitations in one round:
//              user_name      {name: string}
//              favorite_color {color: string}
//              plus a requestState sealed by the SDK's HMAC codec (createRequestStateCodec).
//   retry   -> the SDK verifies requestState (ServerOptions.requestState.verify) before the handler
//              runs; a tampered/expired state is answered with JSON-RPC -32602. With both answers
//              accepted the tool completes with "<name> likes <color>"; any missing/declined answer is
//              asked again (a fresh input_required with only the missing keys; answers already accepted
//              travel inside the new sealed requestState, which is signed, not encrypted).
import { createServer } from 'node:http';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { acceptedContent, createMcpHandler, createRequestStateCodec, inputRequired, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

const port = Number(process.argv[2] ?? process.env.PORT ?? 3002);
const responseMode = process.env.TS_RESPONSE_MODE ?? 'auto';

const QUESTIONS = {
    user_name: {
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
        answer: z.object({ name: z.string() })
    },
    favorite_color: {
        message: 'What is your favorite color?',
        requestedSchema: { type: 'object', properties: { color: { type: 'string', title: 'Color' } }, required: ['color'] },
        answer: z.object({ color: z.string() })
    }
};

// HMAC-SHA256 sealed state, bound to the JSON-RPC method; per-process random key (one process serves
// every round).
const stateCodec = createRequestStateCodec({
    key: crypto.getRandomValues(new Uint8Array(32)),
    ttlSeconds: 600,
    bind: ctx => ctx.mcpReq.method
});

function buildServer() {
    const server = new McpServer(
        { name: 'sterna-interop-ts-two-questions', version: '0.0.0' },
        { capabilities: { tools: {} }, requestState: { verify: stateCodec.verify } }
    );
    server.registerTool(
        'register_user',
        { description: 'Register a user; asks for the name and the favorite color in one round', inputSchema: z.object({}) },
        async (_args, ctx) => {
            // Verified payload of the echoed requestState (undefined on the first round). It carries the
            // answers accepted in earlier rounds, so a partial retry does not lose them.
            const state = ctx.mcpReq.requestState();
            const earlier = state?.tool === 'register_user' ? (state.answers ?? {}) : {};
            const answers = {};
            for (const [key, q] of Object.entries(QUESTIONS)) {
                const fresh = acceptedContent(ctx.mcpReq.inputResponses, key, q.answer);
                const kept = q.answer.safeParse(earlier[key]);
                const value = fresh ?? (kept.success ? kept.data : undefined);
                if (value !== undefined) answers[key] = value;
            }
            const missing = Object.keys(QUESTIONS).filter(key => answers[key] === undefined);
            if (missing.length > 0) {
                return inputRequired({
                    inputRequests: Object.fromEntries(
                        missing.map(key => [key, inputRequired.elicit({ message: QUESTIONS[key].message, requestedSchema: QUESTIONS[key].requestedSchema })])
                    ),
                    requestState: await stateCodec.mint({ tool: 'register_user', asked: missing, answers }, ctx)
                });
            }
            // Answers are only taken on a retry that echoes the state this tool minted.
            if (state?.tool !== 'register_user') {
                return { isError: true, content: [{ type: 'text', text: 'missing or foreign requestState' }] };
            }
            return { content: [{ type: 'text', text: `${answers.user_name.name} likes ${answers.favorite_color.color}` }] };
        }
    );
    return server;
}

const handler = createMcpHandler(buildServer, {
    legacy: 'reject',
    responseMode,
    onerror: e => {
        if (process.env.DEBUG) console.error('[mcp]', e);
    }
});
const node = toNodeHandler(handler);
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

const httpServer = createServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
    }
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    await node(req, res);
});
httpServer.keepAliveTimeout = 65_000;
httpServer.listen(port, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp`));
for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
        httpServer.close();
        process.exit(0);
    });
}
