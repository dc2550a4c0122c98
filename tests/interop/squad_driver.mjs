// Squad's own readers and writers, served to Canon's interop tests as JSON lines.
//
// Run with the Node installed beside Squad: `node squad_driver.mjs TOOLS`, where TOOLS is the folder
// `make squad-tools` installed (its node_modules holds @bradygaster/squad-cli and -sdk). Each request
// is one line of JSON on stdin, `{"id": 1, "op": "...", "args": {...}}`; each answer is one line on
// stdout starting with the record separator \u001e, then `{"id": 1, "ok": true, "result": ...}` or
// `{"id": 1, "ok": false, "error": "..."}`. Anything Squad itself prints goes to stderr.
//
// Nothing here re-implements Squad: every operation calls the published packages' own functions.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const tools = process.argv[2];
if (!tools) {
    process.stderr.write('usage: node squad_driver.mjs TOOLS_FOLDER\n');
    process.exit(2);
}
const modules = join(tools, 'node_modules', '@bradygaster');
const load = (relative) => import(pathToFileURL(join(modules, relative)).href);
const version = (name) => JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version;

// Answers go out on the real stdout; whatever Squad logs goes to stderr instead.
const answer = process.stdout.write.bind(process.stdout);
console.log = console.error;
console.info = console.error;

const parsers = await load('squad-sdk/dist/parsers.js');
const archival = await load('squad-sdk/dist/state/io/archival.js');
const historyIo = await load('squad-sdk/dist/state/io/history-io.js');
const sdk = await load('squad-sdk/dist/index.js');
const toolsModule = await load('squad-sdk/dist/tools/index.js');
const stateMcp = await load('squad-cli/dist/cli/commands/state-mcp.js');
const cast = await load('squad-cli/dist/cli/core/cast.js');

/** Runs `fn` with `Date` answering `now` (an ISO time) when no time is given: Squad stamps its files with it. */
async function at(now, fn) {
    if (!now) return fn();
    const Real = globalThis.Date;
    const fixed = Real.parse(now);
    if (Number.isNaN(fixed)) throw new Error(`not a time: ${now}`);
    class Frozen extends Real {
        constructor(...args) {
            if (args.length === 0) super(fixed);
            else super(...args);
        }
        static now() {
            return fixed;
        }
    }
    globalThis.Date = Frozen;
    try {
        return await fn();
    } finally {
        globalThis.Date = Real;
    }
}

/**
 * The tool registry as Squad builds it. Without `state`, as `squad state-mcp` does (the squad root and its
 * storage: `createStateMcpToolRegistry`); with `state`, as the SDK's README shows it, with a SquadState
 * over the same storage, which `squad_memory` then writes through.
 */
async function registry(root, withState) {
    if (!withState) return stateMcp.createStateMcpToolRegistry(root);
    const context = sdk.resolveSquadState(root);
    if (!context) throw new Error(`No .squad directory found from ${root}`);
    const storage = new sdk.FSStorageProvider();
    const state = await sdk.SquadState.create(storage, root);
    return new toolsModule.ToolRegistry(context.paths.teamDir, undefined, storage, state);
}

const operations = {
    versions: async () => ({
        node: process.version,
        cli: version('squad-cli'),
        sdk: version('squad-sdk'),
    }),
    parseDecisions: async ({ text }) => parsers.parseDecisionsMarkdown(text).decisions,
    splitEntries: async ({ text, level }) => archival.splitEntries(text, level ?? 3),
    parseHistory: async ({ text }) => historyIo.parseHistory(text),
    cast: async ({ root, members, project, universe, now }) =>
        at(now, () => cast.createTeam(root, { members, projectDescription: project, universe: universe ?? 'custom' })),
    tool: async ({ root, name, args, state, now }) => {
        const tool = (await registry(root, Boolean(state))).getTool(name);
        if (!tool) throw new Error(`Squad has no tool ${name}`);
        const result = await at(now, () => tool.handler(args));
        if (typeof result === 'object' && result.resultType && result.resultType !== 'success') {
            throw new Error(`${name} failed: ${result.textResultForLlm} (${result.error ?? result.resultType})`);
        }
        return result;
    },
};

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
    if (!line.trim()) continue;
    let id = null;
    try {
        const request = JSON.parse(line);
        id = request.id ?? null;
        const operation = operations[request.op];
        if (!operation) throw new Error(`unknown operation: ${request.op}`);
        const result = await operation(request.args ?? {});
        answer(`\u001e${JSON.stringify({ id, ok: true, result: result ?? null })}\n`);
    } catch (error) {
        const message = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
        answer(`\u001e${JSON.stringify({ id, ok: false, error: message })}\n`);
    }
}
// Squad's modules may keep timers or handles open; the driver's work ends with its input.
process.exit(0);
