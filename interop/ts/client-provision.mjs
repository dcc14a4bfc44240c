// Interop client: the official MCP TypeScript SDK client (@modelcontextprotocol/client 2.4.x)
// speaking protocol 2026-07-28 (stateless Streamable HTTP) to the server at URL.
//
// Usage: node client-provision.mjs URL [NAME=orders] [REGION=eu-west-1]
//   env MCP_TRACE=1  log every HTTP exchange (headers and bodies) to stderr
//
// Calls tools/call provision_database {name: NAME}. The SDK's built-in multi round-trip (MRTR)
// driver answers each `input_required` result by dispatching the embedded `elicitation/create`
// requests to the handler registered below, then retries with a new JSON-RPC id, the collected
// `inputResponses` and the byte-exact `requestState`.
// Prints one JSON line: {"ok":true,"text":...,"rounds":N} (exit 0) or {"ok":false,"error":...} (exit 1).
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, name = 'orders', region = 'eu-west-1'] = process.argv.slice(2);
if (!url) {
    console.log(JSON.stringify({ ok: false, error: 'usage: client-provision.mjs URL [NAME] [REGION]' }));
    process.exit(1);
}

/** fetch wrapper that logs each exchange to stderr when MCP_TRACE is set. */
async function tracingFetch(input, init) {
    const response = await fetch(input, init);
    if (process.env.MCP_TRACE) {
        const headers = Object.fromEntries(new Headers(init?.headers).entries());
        const body = await response.clone().text();
        console.error(`>> ${init?.method ?? 'GET'} ${input} ${JSON.stringify(headers)}\n>> ${init?.body ?? ''}\n<< ${response.status} ${body}`);
    }
    return response;
}

let rounds = 0;
const client = new Client(
    { name: 'sterna-interop-ts-client', version: '0.0.0' },
    {
        // Declared per request in params._meta["io.modelcontextprotocol/clientCapabilities"].
        capabilities: { elicitation: { form: {} } },
        // Modern era at exactly 2026-07-28: connect() probes server/discover and fails loudly
        // (no legacy initialize fallback) unless the server offers 2026-07-28.
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        // MRTR driver (these are the defaults, spelled out).
        inputRequired: { autoFulfill: true, maxRounds: 10 }
    }
);

// The MRTR driver dispatches each inputRequests entry with method elicitation/create here.
client.setRequestHandler('elicitation/create', async request => {
    rounds += 1;
    if (process.env.MCP_TRACE) console.error(`[elicitation] ${JSON.stringify(request.params)}`);
    return { action: 'accept', content: { region } };
});

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: tracingFetch });

try {
    await client.connect(transport);
    const result = await client.callTool({ name: 'provision_database', arguments: { name } });
    const text = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
    if (result.isError) throw new Error(`tool returned isError: ${text}`);
    console.log(JSON.stringify({ ok: true, text, rounds }));
    await client.close().catch(() => {});
    process.exit(0);
} catch (error) {
    const out = { ok: false, error: error instanceof Error ? error.message : String(error) };
    if (error instanceof ProtocolError) out.code = error.code;
    else if (error?.code !== undefined) out.sdkCode = error.code;
    console.log(JSON.stringify(out));
    await client.close().catch(() => {});
    process.exit(1);
}
