/**
 * contract/ (the server <-> extension contract) against the extension: the command IDs its code
 * uses, and the results its renderer reads (the committed H200 results, validated, then rendered).
 * The Python side checks the same files against the server and the CLI (tests/contract/).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { CODE_ACTION_KINDS, runsWorkspaceCode, SERVER_COMMANDS, untrustedMessage } from '../contract';
import { renderBenchmark, renderProfile } from '../results/render';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CONTRACT = path.join(ROOT, 'contract');
const ctx = { nonce: 'N0NCE', cspSource: 'vscode-resource:', resourceUri: (f: string) => `vscode-resource:${f}` };

type Schema = Record<string, unknown>;

function read(file: string): any {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function typeOf(value: unknown): string {
    if (value === null) {
        return 'null';
    }
    if (Array.isArray(value)) {
        return 'array';
    }
    if (typeof value === 'number') {
        return Number.isInteger(value) ? 'integer' : 'number';
    }
    return typeof value;
}

/**
 * Errors of `value` against the JSON Schema subset contract/ uses: type, const, required,
 * properties, additionalProperties, items, oneOf and local $ref. Empty when it is valid.
 */
export function schemaErrors(value: unknown, schema: Schema, root: Schema = schema, where = '$'): string[] {
    if (typeof schema.$ref === 'string') {
        const target = (schema.$ref as string).replace(/^#\//, '').split('/').reduce<any>((node, key) => node?.[key], root);
        return schemaErrors(value, target as Schema, root, where);
    }
    const errors: string[] = [];
    if (schema.type !== undefined) {
        const allowed = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
        const actual = typeOf(value);
        if (!allowed.includes(actual) && !(actual === 'integer' && allowed.includes('number'))) {
            return [`${where}: ${actual} is not ${allowed.join(' or ')}`];
        }
    }
    if ('const' in schema && value !== schema.const) {
        errors.push(`${where}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
    }
    if (Array.isArray(schema.oneOf)) {
        const passing = (schema.oneOf as Schema[]).filter((option) => schemaErrors(value, option, root, where).length === 0);
        if (passing.length !== 1) {
            errors.push(`${where}: matches ${passing.length} of the oneOf options, not exactly one`);
        }
    }
    if (typeOf(value) === 'object') {
        const object = value as Record<string, unknown>;
        for (const key of (schema.required as string[] | undefined) ?? []) {
            if (!(key in object)) {
                errors.push(`${where}: no ${key}`);
            }
        }
        const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
        for (const [key, item] of Object.entries(object)) {
            if (key in properties) {
                errors.push(...schemaErrors(item, properties[key], root, `${where}.${key}`));
            } else if (schema.additionalProperties === false) {
                errors.push(`${where}: unexpected ${key}`);
            } else if (typeOf(schema.additionalProperties) === 'object') {
                errors.push(...schemaErrors(item, schema.additionalProperties as Schema, root, `${where}.${key}`));
            }
        }
    }
    if (Array.isArray(value) && typeOf(schema.items) === 'object') {
        value.forEach((item, i) => errors.push(...schemaErrors(item, schema.items as Schema, root, `${where}[${i}]`)));
    }
    return errors;
}

const bench = read(path.join(CONTRACT, 'bench.schema.json'));
const profile = read(path.join(CONTRACT, 'profile.schema.json'));
const outcome = read(path.join(CONTRACT, 'job_outcome.schema.json'));
const commands = read(path.join(CONTRACT, 'commands.json'));

test('the validator rejects what the renderer could not read', () => {
    assert.deepEqual(schemaErrors({ schema: 'tritonify.bench/1', status: 'ok', message: '' }, bench), []);
    assert.ok(schemaErrors({ schema: 'tritonify.bench/1', status: 'ok', message: '', shapes: [{ label: 'x' }] }, bench).length);
    assert.ok(schemaErrors({ schema: 'tritonify.profile/1', status: 'ok', launches: [{ kernel: 'k' }] }, profile).length);
    assert.ok(schemaErrors({ ok: true, status: 'ok', message: '', summary: null, result: null, extra: 1 }, outcome).length);
});

test('the committed H200 benchmark result follows bench.schema.json and renders', () => {
    const result = read(path.join(ROOT, 'results', 'bench_rmsnorm_h200.json'));
    assert.deepEqual(schemaErrors(result, bench), []);
    assert.ok(renderBenchmark(result, ctx).includes(result.shapes[0].label));
});

test('the job outcomes the code lens got on the H200 follow job_outcome.schema.json, their results render', () => {
    const jobs = read(path.join(ROOT, 'results', 'code_lens_jobs_h200.json'));
    assert.deepEqual(schemaErrors(jobs.benchmark, outcome), []);
    assert.deepEqual(schemaErrors(jobs.benchmark.result, bench), []);
    assert.deepEqual(schemaErrors(jobs.profile, outcome), []);
    assert.deepEqual(schemaErrors(jobs.profile.result, profile), []);
    assert.ok(renderBenchmark(jobs.benchmark.result, ctx).includes('<section class="shape">'));
    assert.ok(renderProfile(jobs.profile.result, ctx).includes(jobs.profile.result.launches[0].kernel));
});

test('every command the extension registers or sends to the server is in commands.json', () => {
    const dir = path.join(ROOT, 'extension');
    const sources = fs.readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
    const constants = new Map<string, string>();   // `const OPEN_PAGE_COMMAND = 'tritonify.openPage'`
    for (const text of sources) {
        for (const m of text.matchAll(/const ([A-Z_]+)(?::\s*string)?\s*=\s*'(tritonify\.[A-Za-z]+)'/g)) {
            constants.set(m[1], m[2]);
        }
    }
    const registered = new Set<string>();
    for (const text of sources) {
        for (const m of text.matchAll(/registerCommand\(\s*(?:'(tritonify\.[A-Za-z]+)'|([A-Z_]+)\b)/g)) {
            const id = m[1] ?? constants.get(m[2]);
            assert.ok(id, `registerCommand(${m[2]}): a constant this test cannot read`);
            registered.add(id);
        }
    }
    assert.ok(registered.size >= 5);
    assert.deepEqual([...registered].filter((c) => !commands.client.includes(c)), []);
    const pkg = read(path.join(ROOT, 'package.json'));
    assert.deepEqual(pkg.contributes.commands.map((c: { command: string }) => c.command).filter((c: string) => !commands.client.includes(c)), []);
});

test('what crosses the boundary is read from commands.json, never restated by hand', () => {
    // The forwarded server commands, their runsWorkspaceCode flags and messages, and the code-action
    // kinds come from extension/contract.ts, which compiles in contract/commands.json.
    assert.deepEqual([...SERVER_COMMANDS].sort(), Object.keys(commands.server).sort());
    for (const [name, spec] of Object.entries(commands.server) as [string, { runsWorkspaceCode: boolean; untrustedMessage?: string }][]) {
        assert.equal(runsWorkspaceCode(name), spec.runsWorkspaceCode, name);
        if (spec.runsWorkspaceCode) {
            assert.equal(untrustedMessage(name), spec.untrustedMessage, name);
        }
    }
    assert.deepEqual(CODE_ACTION_KINDS, commands.codeActionKinds);
    const dir = path.join(ROOT, 'extension');
    const kinds = Object.values(commands.codeActionKinds as Record<string, string>).filter((k) => k.includes('tritonify'));
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'contract.ts')) {
        const text = fs.readFileSync(path.join(dir, file), 'utf8');
        for (const kind of kinds) {
            assert.ok(!text.includes(`'${kind}'`), `${file} restates the code-action kind ${kind}: use CODE_ACTION_KINDS`);
        }
        assert.ok(!/new Set\(\[\s*'tritonify\./.test(text), `${file} keeps its own list of commands: use contract.ts`);
        assert.ok(!/runsWorkspaceCode|RUNS_CODE|VIEW_COMMANDS/.test(text.replace(/import[^;]*;/g, '').replace(/runsWorkspaceCode\(/g, '')),
            `${file} restates which commands run workspace code: use contract.ts`);
    }
});

test('every contract file the extension compiles in is packaged into the .vsix', () => {
    // A JSON file imported from ../contract is loaded at run time from out/contract/: the .vsix's
    // allow-list (.vscodeignore) must keep it, or the extension fails to activate.
    const dir = path.join(ROOT, 'extension');
    const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim());
    const imported = new Set<string>();
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
        for (const m of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/from '\.\.\/contract\/([\w.]+\.json)'/g)) {
            imported.add(m[1]);
        }
    }
    assert.ok(imported.has('commands.json') && imported.has('protocol.json'));
    assert.deepEqual([...imported].filter((name) => !ignore.includes(`!out/contract/${name}`)), []);
});
