import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { entryScript, ENTRY_SCRIPT, serverCommand } from '../commandLine';

test('the server is `<interpreter> <the bundle\'s entry script> server`, leading interpreter arguments kept', () => {
    const cmd = serverCommand({ interpreter: ['py', '-3.12'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'fromEnvironment', bundledLibs: '/ext/bundled/libs', ncuPath: '', baseEnv: {} });
    assert.equal(cmd.command, 'py');
    assert.deepEqual(cmd.args, ['-3.12', '/ext/bundled/tool/tritonify_server.py', 'server']);
    assert.deepEqual(cmd.checkArgs, ['-3.12', '/ext/bundled/tool/tritonify_server.py', '--check']);
    assert.equal(cmd.env.PYTHONPATH, undefined, 'fromEnvironment must not put the bundle on the path');
    assert.equal(cmd.env.PYTHONUNBUFFERED, '1');
});

test('the bundled libraries go first on PYTHONPATH', () => {
    const cmd = serverCommand({ interpreter: ['/usr/bin/python3'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: '/ext/bundled/libs', ncuPath: '',
        baseEnv: { PYTHONPATH: '/mine', HOME: '/home/u' } });
    assert.equal(cmd.env.PYTHONPATH, ['/ext/bundled/libs', '/mine'].join(path.delimiter));
    assert.equal(cmd.env.HOME, '/home/u');
    const alone = serverCommand({ interpreter: ['/usr/bin/python3'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: '/ext/bundled/libs', ncuPath: '', baseEnv: {} });
    assert.equal(alone.env.PYTHONPATH, '/ext/bundled/libs');
});

test('a checkout without a bundle leaves PYTHONPATH alone', () => {
    const cmd = serverCommand({ interpreter: ['/usr/bin/python3'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: undefined, ncuPath: '', baseEnv: { PYTHONPATH: '/mine' } });
    assert.equal(cmd.env.PYTHONPATH, '/mine');
});

test('the ncu path reaches the profiler as TRITONIFY_NCU, and a log level as --log-level', () => {
    const cmd = serverCommand({ interpreter: ['python3'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: undefined, ncuPath: '/cuda/bin/ncu', logLevel: 'INFO', baseEnv: {} });
    assert.equal(cmd.env.TRITONIFY_NCU, '/cuda/bin/ncu');
    assert.deepEqual(cmd.args, ['/ext/bundled/tool/tritonify_server.py', 'server', '--log-level', 'INFO']);
    const none = serverCommand({ interpreter: ['python3'], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: undefined, ncuPath: '', baseEnv: {} });
    assert.equal(none.env.TRITONIFY_NCU, undefined);
});

test('an empty interpreter is refused', () => {
    assert.throws(() => serverCommand({ interpreter: [], entryScript: '/ext/bundled/tool/tritonify_server.py', importStrategy: 'useBundled', bundledLibs: undefined, ncuPath: '', baseEnv: {} }), /no interpreter/);
});

test('no workspace folder reaches the server\'s sys.path: no -m, no -c, and the entry script\'s folder as the working directory', () => {
    const script = entryScript('/home/u/.vscode/extensions/tritonify');
    assert.equal(script, path.join('/home/u/.vscode/extensions/tritonify', ...ENTRY_SCRIPT));
    const cmd = serverCommand({ interpreter: ['/usr/bin/python3'], entryScript: script, importStrategy: 'useBundled', bundledLibs: undefined, ncuPath: '', baseEnv: {} });
    assert.equal(cmd.cwd, path.dirname(script));
    for (const args of [cmd.args, cmd.checkArgs]) {
        assert.ok(!args.includes('-m') && !args.includes('-c'), args.join(' '));
        assert.equal(args[0], script);
    }
});
