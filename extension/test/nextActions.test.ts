import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { actionButtons, joinCommandLine, launchKey, splitCommandLine } from '../nextActions';

test('an outcome\'s actions become its buttons, with the labels the server and client share', () => {
    assert.deepEqual(actionButtons(['writeContract', 'openLog']),
        [{ id: 'writeContract', label: 'Write a Benchmark Contract' }, { id: 'openLog', label: 'Open Log' }]);
    assert.deepEqual(actionButtons(['chooseInterpreter', 'nope', 3]), [{ id: 'chooseInterpreter', label: 'Choose Interpreter' }]);
    assert.deepEqual(actionButtons(undefined), []);
    const shared = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'contract', 'protocol.json'), 'utf-8'));
    assert.deepEqual(Object.keys(shared.jobActions).sort(),
        ['chooseInterpreter', 'openLog', 'runWithInterpreter', 'setLaunchCommand', 'setNcuPath', 'writeContract']);
});

test('a typed launch command is split into the argument list, quotes kept together', () => {
    assert.deepEqual(splitCommandLine('python bench.py --n 4096'), { argv: ['python', 'bench.py', '--n', '4096'] });
    assert.deepEqual(splitCommandLine(`python "my bench.py" --tag 'a b' x\\ y`), { argv: ['python', 'my bench.py', '--tag', 'a b', 'x y'] });
    assert.deepEqual(splitCommandLine('  python   run.py  '), { argv: ['python', 'run.py'] });
    assert.ok('error' in splitCommandLine('python "open'));
    assert.ok('error' in splitCommandLine('   '));
    const argv = ['python', 'my bench.py', "it's"];
    assert.deepEqual(splitCommandLine(joinCommandLine(argv)), { argv });
    assert.equal(launchKey('file:///w/k.py', 'k'), 'tritonify.launchCommand:file:///w/k.py::k');
});
