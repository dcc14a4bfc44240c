// Interop client: the official MCP TypeScript SDK 1.x client (@modelcontextprotocol/sdk 1.32.x),
// which speaks 2025-11-25: `initialize`, then a session; the server asks its questions by
// sending real `elicitation/create` requests, which the handler below answers.
//
// Usage: node client-legacy.mjs http URL [NAME=orders] [REGION=eu-west-1]
//        node client-legacy.mjs stdio COMMAND [ARGS…] -- [NAME=orders] [REGION=eu-west-1]
//   env MCP_TRACE=1  log every message (and, over HTTP, every exchange) to stderr
//
// Calls tools/call provision_database {name: NAME} (answering the pushed elicitation with
// REGION), then echo {text: "hello from the TypeScript SDK 1.x"}; over HTTP it ends the
// session with DELETE. Prints one JSON line: {"ok":true,"protocolVersion":…,"text":…,
// "echo":…,"pushes":N,…} (exit 0) or {"ok":false,"error":…} (exit 1).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const trace = (...a) => process.env.MCP_TRACE && console.error(...a);
const [mode, ...rest] = process.argv.slice(2);

function fail(error) {
    console.log(JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) }));
    process.exit(1);
}

/** fetch wrapper that logs each exchange to stderr when MCP_TRACE is set. */
async function tracingFetch(input, init) {
    const response = await fetch(input, init);
    trace(`>> ${init?.method ?? 'GET'} ${input} ${JSON.stringify(Object.fromEntries(new Headers(init?.headers).entries()))}`);
    trace(`>> ${init?.body ?? ''}\n<< ${response.status} ${response.headers.get('content-type') ?? ''}`);
    return response;
}

let transport, name, region;
if (mode === 'http' && rest[0]) {
    [, name = 'orders', region = 'eu-west-1'] = rest;
    transport = new StreamableHTTPClientTransport(new URL(rest[0]), { fetch: tracingFetch });
} else if (mode === 'stdio' && rest.includes('--') && rest[0] !== '--') {
    const cut = rest.indexOf('--');
    const [command, ...args] = rest.slice(0, cut);
    [name = 'orders', region = 'eu-west-1'] = rest.slice(cut + 1);
    transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
} else {
    fail('usage: client-legacy.mjs http URL [NAME] [REGION] | stdio COMMAND [ARGS…] -- [NAME] [REGION]');
}

// The version the handshake settled on (the SDK hands it to the transport).
let protocolVersion;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = v => {
    protocolVersion = v;
    setVersion?.(v);
};

const client = new Client(
    { name: 'sterna-interop-ts-v1-client', version: '0.0.0' },
    // `elicitation: {}` is form mode only (2025-11-25).
    { capabilities: { elicitation: {} } }
);

const pushes = [];
client.setRequestHandler(ElicitRequestSchema, async request => {
    trace(`[elicitation/create] ${JSON.stringify(request.params)}`);
    pushes.push(request.params);
    const field = request.params.requestedSchema?.properties?.region ?? {};
    const choices = field.enum ?? (field.oneOf ?? []).map(o => o.const);
    if (!choices.includes(region)) return { action: 'decline' };
    return { action: 'accept', content: { region } };
});

/** The text of a tool result; fails on a tool error or on 2026-only members. */
function textOf(result, tool) {
    const text = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
    if (result.isError) throw new Error(`${tool} returned isError: ${text}`);
    for (const key of ['resultType', 'ttlMs', 'cacheScope', 'inputRequests', 'requestState']) {
        if (key in result) throw new Error(`${tool}'s result carries the 2026-07-28 member ${key}`);
    }
    return text;
}

try {
    await client.connect(transport);
    const server = client.getServerVersion();
    const text = textOf(await client.callTool({ name: 'provision_database', arguments: { name } }), 'provision_database');
    const echo = textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello from the TypeScript SDK 1.x' } }), 'echo');
    const out = { ok: true, protocolVersion, server: server?.name, text, echo, pushes: pushes.length };
    if (mode === 'http') {
        out.session = Boolean(transport.sessionId);
        await transport.terminateSession();
        out.deleted = transport.sessionId === undefined;
    }
    if (pushes.length !== 1 || pushes[0].mode === 'url') throw new Error(`expected one form elicitation, got ${JSON.stringify(pushes)}`);
    console.log(JSON.stringify(out));
    await client.close().catch(() => {});
    process.exit(0);
} catch (error) {
    await client.close().catch(() => {});
    fail(error);
}
