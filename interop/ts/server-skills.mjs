// Interop server: @modelcontextprotocol/server 2.4.x (TS SDK v2) serving a folder of Agent Skills
// with its skills extension (`loadSkills(DIR)`, SEP-2640) over stateless Streamable HTTP
// (protocol 2026-07-28) on 127.0.0.1:PORT/mcp.
//
// Usage: node server-skills.mjs PORT DIR
// Prints "listening http://127.0.0.1:PORT/mcp" on stdout when ready.
import { createServer } from 'node:http';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';

const port = Number(process.argv[2] ?? 3004);
const dir = process.argv[3];
if (!dir) {
    console.error('usage: server-skills.mjs PORT DIR');
    process.exit(2);
}
const skills = await loadSkills(dir);

function buildServer() {
    const server = new McpServer({ name: 'sterna-interop-ts-skills', version: '0.0.0' }, { capabilities: {} });
    skills.attach(server);
    return server;
}

const handler = createMcpHandler(buildServer, { legacy: 'reject' });
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
httpServer.listen(port, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp`));
for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
        httpServer.close();
        process.exit(0);
    });
}
