// Interop client: the TS SDK 2.4 skills client (@modelcontextprotocol/client/ext/skills,
// SEP-2640) against the server at URL, protocol 2026-07-28: lists the skills, gets each one by URI,
// reads every listed file through its verifying `read` (listing, size, digest; SKILL.md's
// frontmatter), and reads the first skill's root directory.
//
// Usage: node client-skills.mjs URL
// Prints one JSON line: {"ok":true,"skills":[names],"verified":N,"bytes":N,"directory":[names]}
// (exit 0) or {"ok":false,"error":...} (exit 1).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const [url] = process.argv.slice(2);
const client = new Client({ name: 'sterna-interop-ts-skills-client', version: '0.0.0' }, {
    capabilities: {},
    versionNegotiation: { mode: { pin: '2026-07-28' } }
});
try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const skills = new SkillsClient(client);
    if (!skills.supported) throw new Error('the server does not declare the skills extension');
    const { skills: entries } = await skills.list();
    let verified = 0;
    let bytes = 0;
    for (const listed of entries) {
        const { skill } = await skills.get(listed.uri);
        for (const file of skill.resources) {
            const read = await skills.read(skill, file.uri);
            if (!read.verified) throw new Error(`${file.uri} not verified`);
            verified += 1;
            bytes += file.size;
        }
    }
    const root = entries[0].uri.replace(/\/SKILL\.md$/, '');
    const directory = skills.directoryRead ? (await skills.readDirectory(root)).resources.map(r => `${r.name}:${r.mimeType}`) : [];
    const names = entries.map(e => e.frontmatter.name);
    console.log(JSON.stringify({ ok: true, skills: names, verified, bytes, directory }));
    await client.close().catch(() => {});
    process.exit(0);
} catch (error) {
    console.log(JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) }));
    await client.close().catch(() => {});
    process.exit(1);
}
