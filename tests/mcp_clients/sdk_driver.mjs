// The official TypeScript SDK's MCP client, driven by Canon's tests with a JSON plan.
//
// Run with the Node installed beside the SDK: `node sdk_driver.mjs TOOLS < plan.json`, where TOOLS is the
// folder `make mcp-clients` installed (its node_modules holds @modelcontextprotocol/sdk). The plan:
//
//   {"sessions": {"alice": {"stdio": {"command": "...", "args": [...], "env": {...}}},
//                 "lead": {"http": {"url": "http://.../mcp/", "token": "canon_..."}}},
//    "steps": [{"id": "tools", "session": "alice", "op": "tools/list"},
//              {"id": "proposed", "session": "alice", "op": "tools/call", "name": "...", "arguments": {...}},
//              {"id": "merged", "session": "lead", "op": "tools/call", "name": "merge_inbox_entry",
//               "arguments": {"entry_id": {"$ref": "proposed.result.structuredContent.id"}}}]}
//
// Every session connects first, all at once (initialize, then tools/list as a client does before it
// calls, which is where the SDK learns each tool's outputSchema); then the steps run in order. An
// argument `{"$ref": "step.path.to.value"}` is the value at that path of an earlier step's answer. `op`
// is tools/list, tools/call, prompts/list or resources/list; a session with `"token": null` sends no
// Authorization header. The answer, one JSON object on stdout:
//
//   {"versions": {"node", "sdk"},
//    "sessions": {"alice": {"ok": true, "server": {name, version, ...}, "capabilities", "instructions"}
//                 | {"ok": false, "error": {"message", "code"}}},
//    "steps": {"proposed": {"ok": true, "result": ..., "validated": true} | {"ok": false, "error": ...}}}
//
// `validated` says the SDK checked the call's structuredContent against the tool's outputSchema: its
// `callTool` does whenever the listed tool has one, and throws when the content does not match, which
// this driver reports as the step's error. Nothing here re-implements the protocol: every request goes
// through the published SDK's Client and transports.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const tools = process.argv[2];
if (!tools) {
    process.stderr.write('usage: node sdk_driver.mjs TOOLS_FOLDER < plan.json\n');
    process.exit(2);
}
const sdkFolder = join(tools, 'node_modules', '@modelcontextprotocol', 'sdk');
const load = (relative) => import(pathToFileURL(join(sdkFolder, 'dist', 'esm', relative)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

// How long one request may take before the SDK gives up on it (a stdio server starts Django first).
const TIMEOUT_MS = 60_000;

function errorOf(error) {
    return {
        message: error instanceof Error ? error.message : String(error),
        code: error && typeof error === 'object' && 'code' in error ? error.code : null,
    };
}

function transportFor(spec) {
    if (spec.stdio) {
        const { command, args = [], env } = spec.stdio;
        return new StdioClientTransport({ command, args, env, stderr: 'pipe' });
    }
    if (spec.http) {
        const { url, token } = spec.http;
        const headers = token === null || token === undefined ? {} : { Authorization: `Bearer ${token}` };
        return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    }
    throw new Error(`a session needs "stdio" or "http": ${JSON.stringify(spec)}`);
}

class Session {
    constructor(name, spec) {
        this.name = name;
        this.transport = transportFor(spec);
        this.stderr = '';
        const stream = this.transport.stderr;
        if (stream) stream.on('data', (chunk) => (this.stderr += chunk.toString('utf8')));
        this.client = new Client({ name: 'canon-tests', version: '1.0.0' });
        this.outputSchemas = new Map();
    }

    async connect() {
        try {
            await this.client.connect(this.transport, { timeout: TIMEOUT_MS });
            this.tools = await this.client.listTools(undefined, { timeout: TIMEOUT_MS });
            this.remember(this.tools);
            return {
                ok: true,
                server: this.client.getServerVersion() ?? null,
                capabilities: this.client.getServerCapabilities() ?? null,
                instructions: this.client.getInstructions() ?? null,
            };
        } catch (error) {
            return { ok: false, error: { ...errorOf(error), stderr: this.stderr.slice(-4000) } };
        }
    }

    remember(listing) {
        this.outputSchemas = new Map(listing.tools.filter((t) => t.outputSchema).map((t) => [t.name, t.outputSchema]));
    }

    async run(step) {
        const options = { timeout: TIMEOUT_MS };
        switch (step.op) {
            case 'tools/list': {
                const result = await this.client.listTools(undefined, options);
                this.remember(result);
                return { result };
            }
            case 'tools/call': {
                const result = await this.client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, options);
                const validated = this.outputSchemas.has(step.name) && result.structuredContent !== undefined;
                return { result, validated };
            }
            case 'prompts/list':
                return { result: await this.client.listPrompts(undefined, options) };
            case 'resources/list':
                return { result: await this.client.listResources(undefined, options) };
            default:
                throw new Error(`unknown op ${step.op}`);
        }
    }

    async close() {
        try {
            await this.client.close();
        } catch {
            // A session that never connected has nothing to close.
        }
    }
}

function resolved(value, answers) {
    if (Array.isArray(value)) return value.map((item) => resolved(item, answers));
    if (value === null || typeof value !== 'object') return value;
    if (typeof value.$ref === 'string' && Object.keys(value).length === 1) {
        const [first, ...path] = value.$ref.split('.');
        let found = answers[first];
        for (const key of path) {
            if (found === null || typeof found !== 'object' || !(key in found)) {
                throw new Error(`no ${value.$ref} among the earlier answers`);
            }
            found = found[key];
        }
        return found;
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item, answers)]));
}

const plan = JSON.parse(readFileSync(0, 'utf8'));
const sessions = Object.fromEntries(Object.entries(plan.sessions).map(([name, spec]) => [name, new Session(name, spec)]));
const answer = {
    versions: {
        node: process.version,
        sdk: JSON.parse(readFileSync(join(sdkFolder, 'package.json'), 'utf8')).version,
    },
    sessions: {},
    steps: {},
};
const connected = await Promise.all(Object.values(sessions).map((session) => session.connect()));
Object.keys(sessions).forEach((name, index) => (answer.sessions[name] = connected[index]));

for (const step of plan.steps ?? []) {
    const session = sessions[step.session];
    if (!session || !answer.sessions[step.session].ok) {
        answer.steps[step.id] = { ok: false, error: { message: `session ${step.session} is not connected`, code: null } };
        continue;
    }
    try {
        answer.steps[step.id] = { ok: true, ...(await session.run({ ...step, arguments: resolved(step.arguments, answer.steps) })) };
    } catch (error) {
        answer.steps[step.id] = { ok: false, error: errorOf(error) };
    }
}
await Promise.all(Object.values(sessions).map((session) => session.close()));
// Exit once the answer is written whole: a pipe takes it in pieces, and exiting sooner would cut it.
await new Promise((resolve) => process.stdout.write(JSON.stringify(answer) + '\n', resolve));
process.exit(0);
