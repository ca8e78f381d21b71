import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { configurationAnswer, DEFAULTS, INSPECT_TARGETS, readSettings, RESTART_KEYS, toServerSettings } from '../settings';

const ROOT = path.resolve(__dirname, '..', '..', '..');

test('missing settings read as the defaults, with no problems', () => {
    const { settings, problems } = readSettings(undefined);
    assert.deepEqual(settings, DEFAULTS);
    assert.deepEqual(problems, []);
});

test('lint settings are normalised: codes upper-cased, comma strings split, severities lower-cased', () => {
    const { settings, problems } = readSettings({
        lint: { run: 'onSave', select: 'tri001, CUD', ignore: ['tri004'], severity: { tri001: 'Error' }, timeoutSeconds: 5 },
        jobs: { timeoutSeconds: 30 },
    });
    assert.deepEqual(problems, []);
    assert.equal(settings.lint.run, 'onSave');
    assert.deepEqual(settings.lint.select, ['TRI001', 'CUD']);
    assert.deepEqual(settings.lint.ignore, ['TRI004']);
    assert.deepEqual(settings.lint.severity, { TRI001: 'error' });
    assert.equal(settings.lint.timeoutSeconds, 5);
    assert.equal(settings.jobs.timeoutSeconds, 30);
});

test('wrong values fall back to the defaults and are reported', () => {
    const { settings, problems } = readSettings({
        interpreter: 42, lint: { run: 'always', severity: { TRI001: 'fatal' }, timeoutSeconds: -1 }, jobs: { timeoutSeconds: 'x' },
    });
    assert.deepEqual(settings.interpreter, []);
    assert.equal(settings.lint.run, 'onType');
    assert.deepEqual(settings.lint.severity, {});
    assert.equal(settings.lint.timeoutSeconds, 60);
    assert.equal(settings.jobs.timeoutSeconds, 600);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('lint.run')));
    assert.ok(problems.some((p) => p.includes('TRI001')));
});

test('an interpreter given as one string becomes a one-element command', () => {
    assert.deepEqual(readSettings({ interpreter: ' /opt/py/bin/python ' }).settings.interpreter, ['/opt/py/bin/python']);
    assert.deepEqual(readSettings({ interpreter: ['py', '-3'] }).settings.interpreter, ['py', '-3']);
});

test('server settings carry the resolved interpreter and the editor trust', () => {
    const { settings } = readSettings({ lint: { select: ['TRI001'] } });
    const server = toServerSettings(settings, ['/venv/bin/python'], false);
    assert.deepEqual(server, {
        lint: { run: 'onType', select: ['TRI001'], ignore: [], severity: {}, timeoutSeconds: 60 },
        interpreter: ['/venv/bin/python'],
        trusted: false,
        jobs: { timeoutSeconds: 600 },
        benchmark: { baselines: '', shapes: '', timeout: 0 },
        inspect: { enabled: true, target: 'auto' },
    });
});

test('benchmark settings reach the server; wrong types fall back and are reported', () => {
    const set = readSettings({ benchmark: { openResults: false, baselines: ' eager,liger ', shapes: '4096x4096,16384x4096', timeout: 120 } });
    assert.deepEqual(set.problems, []);
    assert.deepEqual(toServerSettings(set.settings, [], true).benchmark, { baselines: 'eager,liger', shapes: '4096x4096,16384x4096', timeout: 120 });
    assert.equal(set.settings.benchmark.openResults, false);
    assert.equal('openResults' in toServerSettings(set.settings, [], true).benchmark, false);   // a client-only setting
    const wrong = readSettings({ benchmark: { baselines: ['eager'], shapes: 4096, timeout: -5 } });
    assert.deepEqual(wrong.settings.benchmark, DEFAULTS.benchmark);
    assert.equal(wrong.problems.length, 3, wrong.problems.join('\n'));
    assert.ok(wrong.problems.some((p) => p.includes('benchmark.timeout')));
});

test('compile-time insight settings reach the server; wrong values fall back and are reported', () => {
    const off = readSettings({ inspect: { enabled: false, target: 'sm_100' } });
    assert.deepEqual(off.problems, []);
    assert.deepEqual(toServerSettings(off.settings, ['/venv/bin/python'], true).inspect, { enabled: false, target: 'sm_100' });
    const wrong = readSettings({ inspect: { enabled: 'yes', target: 'sm_75' } });
    assert.deepEqual(wrong.settings.inspect, { enabled: true, target: 'auto' });
    assert.equal(wrong.problems.length, 2, wrong.problems.join('\n'));
    assert.ok(wrong.problems.some((p) => p.includes('inspect.target') && p.includes('sm_75')));
    // the manifest offers exactly the targets the client accepts
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.deepEqual(manifest.contributes.configuration.properties['tritonify.inspect.target'].enum, [...INSPECT_TARGETS]);
});

test('a workspace settings file cannot claim trust or swap the interpreter', () => {
    const fromWorkspace = { trusted: true, interpreter: ['./evil'], lint: { run: 'onSave' } };
    const answer = configurationAnswer(fromWorkspace, ['/usr/bin/python3'], false);
    assert.equal(answer.trusted, false);
    assert.deepEqual(answer.interpreter, ['/usr/bin/python3']);
    assert.equal(answer.lint.run, 'onSave');
    assert.equal(configurationAnswer(fromWorkspace, ['/usr/bin/python3'], true).trusted, true);
});

test('every setting the manifest declares is read, and the restricted ones force a restart', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const declared = Object.keys(manifest.contributes.configuration.properties);
    const known = new Set([
        'tritonify.interpreter', 'tritonify.importStrategy', 'tritonify.lint.run', 'tritonify.lint.select', 'tritonify.lint.ignore',
        'tritonify.lint.severity', 'tritonify.lint.timeoutSeconds', 'tritonify.ncuPath',
        'tritonify.benchmark.openResults', 'tritonify.benchmark.baselines', 'tritonify.benchmark.shapes', 'tritonify.benchmark.timeout',
        'tritonify.jobs.timeoutSeconds', 'tritonify.inspect.enabled', 'tritonify.inspect.target',
    ]);
    const readByTheClient = new Set(['tritonify.trace.server']);   // vscode-languageclient reads <id>.trace.server
    assert.deepEqual(declared.filter((k) => !known.has(k) && !readByTheClient.has(k)), []);
    assert.deepEqual(manifest.contributes.configuration.properties['tritonify.trace.server'].enum, ['off', 'messages', 'verbose']);
    for (const key of declared.filter((k) => !readByTheClient.has(k))) {
        const value = manifest.contributes.configuration.properties[key].default;
        const dotted = key.replace(/^tritonify\./, '').split('.');
        let expected: unknown = DEFAULTS;
        for (const part of dotted) {
            expected = (expected as Record<string, unknown>)[part];
        }
        assert.deepEqual(value, expected, `${key}: manifest default differs from DEFAULTS`);
    }
    for (const key of manifest.capabilities.untrustedWorkspaces.restrictedConfigurations) {
        assert.ok(RESTART_KEYS.includes(key), `${key} is restricted but changing it does not restart the server`);
    }
});

/** The Python that has tritonify importable: $TRITONIFY_TEST_PYTHON, the repo's .venv, /work/venv. */
function testPython(): string | undefined {
    const candidates = [process.env.TRITONIFY_TEST_PYTHON, path.join(ROOT, '.venv', 'bin', 'python'), '/work/venv/bin/python'];
    return candidates.find((p) => p && fs.existsSync(p) &&
        spawnSync(p, ['-c', 'import tritonify.server.settings'], { encoding: 'utf8' }).status === 0);
}

test('the server accepts what the client sends, without a problem (server/settings.py)', (t) => {
    const python = testPython();
    if (!python) {
        t.skip('no Python with tritonify importable (set TRITONIFY_TEST_PYTHON)');
        return;
    }
    const { settings } = readSettings({ lint: { run: 'onSave', select: ['TRI001'], ignore: ['TRI004'], severity: { TRI001: 'error' }, timeoutSeconds: 7 }, jobs: { timeoutSeconds: 42 }, inspect: { enabled: false, target: 'sm_120' },
        benchmark: { baselines: 'eager,my_baseline', shapes: '4096X4096, 8192x1024', timeout: 90 } });
    const sent = toServerSettings(settings, ['/usr/bin/python3', '-X', 'dev'], false);
    const probe = [
        'import json, sys',
        'from tritonify.server.settings import EditorSettings',
        's = EditorSettings().updated(json.loads(sys.argv[1]))',
        'print(json.dumps({"problems": list(s.problems), "run": s.lint_run, "select": list(s.select), "ignore": list(s.ignore),',
        '  "severity": s.severity, "interpreter": list(s.interpreter), "trusted": s.trusted, "job": s.job_timeout_s, "lint": s.lint_timeout_s,',
        '  "inspect": [s.inspect_enabled, s.inspect_target], "bench": [list(s.bench_baselines), s.bench_shapes, s.bench_timeout_s]}))',
    ].join('\n');
    const out = spawnSync(python, ['-c', probe, JSON.stringify(sent)], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), {
        problems: [], run: 'onSave', select: ['TRI001'], ignore: ['TRI004'], severity: { TRI001: 'error' },
        interpreter: ['/usr/bin/python3', '-X', 'dev'], trusted: false, job: 42, lint: 7, inspect: [false, 'sm_120'],
        bench: [['eager', 'my_baseline'], '4096x4096,8192x1024', 90],
    });
    // the defaults the client sends are the server's own defaults, without a problem
    const defaults = spawnSync(python, ['-c', probe, JSON.stringify(toServerSettings(DEFAULTS, ['/usr/bin/python3'], true))], { encoding: 'utf8' });
    assert.equal(defaults.status, 0, defaults.stderr);
    const parsed = JSON.parse(defaults.stdout);
    assert.deepEqual([parsed.problems, parsed.bench], [[], [[], '', null]]);
    // every target the manifest offers is one the server accepts, as itself
    const perTarget = INSPECT_TARGETS.map((target) => toServerSettings(readSettings({ inspect: { target } }).settings, [], true));
    const targetProbe = [
        'import json, sys',
        'from tritonify.server.settings import EditorSettings',
        'print(json.dumps([[list(s.problems), s.inspect_target] for s in (EditorSettings().updated(r) for r in json.loads(sys.argv[1]))]))',
    ].join('\n');
    const targets = spawnSync(python, ['-c', targetProbe, JSON.stringify(perTarget)], { encoding: 'utf8' });
    assert.equal(targets.status, 0, targets.stderr);
    assert.deepEqual(JSON.parse(targets.stdout), INSPECT_TARGETS.map((target) => [[], target]));
});
