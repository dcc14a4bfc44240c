// Interop client: the official MCP TypeScript SDK client (@modelcontextprotocol/client 2.4.x),
// protocol 2026-07-28, with a fetch wrapper that tampers with requestState on the MRTR retry.
//
// Usage: node client-tampered.mjs URL
//   env MCP_TRACE=1  log every HTTP exchange (headers and bodies) to stderr
//
// Calls tools/call provision_database {name:"orders"}. On the retry POST (the one whose JSON body has
// params.requestState) the fetch wrapper appends "-TAMPERED" to params.requestState. The server must
// reject the retry with a JSON-RPC error -32602.
// Prints {"ok":true,"code":-32602,"message":...} and exits 0 when the call fails with the server's
// JSON-RPC error -32602; prints {"ok":false,...} and exits 1 on success or on any other failure.
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const EXPECTED_CODE = -32602;
const [url] = process.argv.slice(2);
if (!url) {
    console.log(JSON.stringify({ ok: false, error: 'usage: client-tampered.mjs URL' }));
    process.exit(1);
}

let tamperedRequests = 0;
/** The error response the server actually sent for the tampered retry (proof it is not local). */
let serverError;

async function tamperingFetch(input, init) {
    let body = init?.body;
    let tamperedId;
    if (typeof body === 'string') {
        const message = JSON.parse(body);
        if (typeof message?.params?.requestState === 'string') {
            message.params.requestState += '-TAMPERED';
            body = JSON.stringify(message);
            tamperedId = message.id;
            tamperedRequests += 1;
        }
    }
    const response = await fetch(input, { ...init, body });
    const text = process.env.MCP_TRACE || tamperedId !== undefined ? await response.clone().text() : '';
    if (process.env.MCP_TRACE) {
        const headers = Object.fromEntries(new Headers(init?.headers).entries());
        console.error(`>> ${init?.method ?? 'GET'} ${input} ${JSON.stringify(headers)}\n>> ${body ?? ''}\n<< ${response.status} ${text}`);
    }
    if (tamperedId !== undefined) {
        // The reply may be JSON or SSE; take the JSON-RPC message that answers the tampered id.
        const candidates = text.startsWith('{') ? [text] : text.split('\n').filter(l => l.startsWith('data:')).map(l => l.slice(5));
        for (const candidate of candidates) {
            try {
                const msg = JSON.parse(candidate);
                if (msg.id === tamperedId && msg.error) serverError = { httpStatus: response.status, ...msg.error };
            } catch {}
        }
    }
    return response;
}

const client = new Client(
    { name: 'sterna-interop-ts-client-tampered', version: '0.0.0' },
    {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        inputRequired: { autoFulfill: true, maxRounds: 10 }
    }
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { region: 'eu-west-1' } }));

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: tamperingFetch });

let exitCode = 1;
try {
    await client.connect(transport);
    const result = await client.callTool({ name: 'provision_database', arguments: { name: 'orders' } });
    console.log(JSON.stringify({ ok: false, error: 'call unexpectedly succeeded', tamperedRequests, result }));
} catch (error) {
    // ProtocolError = a JSON-RPC error response from the peer; local failures are SdkError
    // (string codes) or plain Errors.
    const isServerError = error instanceof ProtocolError && serverError !== undefined && serverError.code === error.code;
    if (isServerError && error.code === EXPECTED_CODE) {
        console.log(JSON.stringify({ ok: true, code: error.code, message: serverError.message, data: serverError.data, httpStatus: serverError.httpStatus }));
        exitCode = 0;
    } else {
        console.log(JSON.stringify({
            ok: false,
            error: error instanceof Error ? error.message : String(error),
            errorClass: error?.name,
            code: error?.code,
            serverError,
            tamperedRequests
        }));
    }
}
await client.close().catch(() => {});
process.exit(exitCode);
