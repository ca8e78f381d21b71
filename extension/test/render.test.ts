import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { escapeHtml, openLocationUri, profileLaunches, renderBenchmark, renderProfile, renderResult, rooflineChart, speedupChart } from '../results/render';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ctx = { nonce: 'N0NCE', cspSource: 'vscode-resource:', resourceUri: (f: string) => `vscode-resource:${f}` };
const EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>';

function noActiveContent(html: string): void {
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /<img[^>]*onerror/i);
    assert.doesNotMatch(html, /script-src/);
    assert.match(html, /default-src 'none'/);
}

test('escapeHtml escapes every character that can open markup or an attribute', () => {
    assert.equal(escapeHtml(`<a href="x" onclick='y'>&\``), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;');
    assert.equal(escapeHtml(undefined), '');
    assert.equal(escapeHtml(3), '3');
});

test('a real benchmark result renders its summary, one table and one chart per shape, and the report', () => {
    const result = JSON.parse(fs.readFileSync(path.join(ROOT, 'results', 'bench_rmsnorm_h200.json'), 'utf8'));
    const html = renderBenchmark(result, ctx);
    noActiveContent(html);
    assert.ok(html.includes(escapeHtml(result.summary)));
    assert.equal((html.match(/<section class="shape">/g) ?? []).length, result.shapes.length);
    assert.equal((html.match(/<svg class="chart"/g) ?? []).length, result.shapes.filter((s: { speedup?: object }) => s.speedup && Object.keys(s.speedup).length).length);
    for (const shape of result.shapes) {
        assert.ok(html.includes(`<h3>${shape.label}`), shape.label);
    }
    for (const impl of Object.keys(result.shapes[0].results)) {
        assert.ok(html.includes(`<td>${impl}</td>`), impl);
    }
    assert.ok(html.includes(`src="vscode-resource:${result.reports.png}"`));
    assert.ok(html.includes(escapeHtml(openLocationUri(result.reports.html))));
    assert.ok(html.includes('NVIDIA H200'));
});

test('kernel names, messages and impl names from a result are shown as text, never as markup', () => {
    const html = renderBenchmark({
        kernel: EVIL, summary: EVIL, status: 'failed', message: EVIL,
        shapes: [{ label: EVIL, results: { [EVIL]: { status: 'error', message: EVIL, timing: {} } }, speedup: { [EVIL]: 2 } }],
        reports: { error: EVIL }, gpu: { name: EVIL },
    }, ctx);
    noActiveContent(html);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    const profile = renderProfile([{ kernel: EVIL, source_file: '/k.py', patterns: [{ pattern: 'C', title: EVIL, message: EVIL, fix: EVIL, lines: [3] }],
        lines: [{ rank: 1, line: 3, source: EVIL, top_stalls: [{ reason: EVIL, samples: 1 }] }] }], ctx);
    noActiveContent(profile);
});

test('the speedup chart draws one bar per baseline, green when the kernel is faster', () => {
    const svg = speedupChart({ eager: 11.9, liger: 0.88, broken: null as unknown as number });
    assert.equal((svg.match(/<rect/g) ?? []).length, 2);
    assert.match(svg, /class="faster"[^>]*>.*vs liger|vs eager.*class="faster"/s);
    assert.match(svg, /class="slower"/);
    assert.equal(speedupChart({}), '');
});

const LAUNCH = {
    id: 0, kernel: 'softmax_kernel', grid: [4096, 1, 1], block: [128, 1, 1], duration_ns: 41000, source_file: '/ws/softmax.py',
    patterns: [
        { pattern: 'C', title: 'Uncoalesced global access', severity: 'warning', impact: 0.42, message: '8 sectors per request', fix: 'make the last index contiguous', lines: [31, 33] },
        { pattern: 'E', title: 'Latency bound', severity: 'info', impact: 0.1, message: 'long scoreboard', fix: 'more loads in flight', lines: [], explained_by: 'C' },
    ],
    lines: [{ rank: 1, line: 31, source: 'x = tl.load(x_ptr + offs)', samples: 900, sample_share: 0.61, top_stalls: [{ reason: 'long_scoreboard', samples: 700 }], patterns: ['C'] }],
    report: '/ws/.tritonify/profiles/softmax.ncu-rep',
};

test('a profile shows its patterns in order, and hot lines as links to file:line', () => {
    const html = renderProfile([LAUNCH], ctx);
    noActiveContent(html);
    assert.ok(html.indexOf('Uncoalesced global access') < html.indexOf('Latency bound'));
    assert.match(html, /caused by C/);
    assert.ok(html.includes(escapeHtml(openLocationUri('/ws/softmax.py', 31))));
    assert.match(html, />softmax\.py:31</);
    assert.match(html, /61%/);
    assert.match(html, /long_scoreboard 700/);
    assert.ok(html.includes(escapeHtml(openLocationUri(LAUNCH.report))));
});

test('the open-location link carries its arguments as encoded JSON', () => {
    const uri = openLocationUri('/a b/k"x.py', 7);
    assert.ok(uri.startsWith('command:tritonify.openLocation?'));
    assert.deepEqual(JSON.parse(decodeURIComponent(uri.split('?')[1])), ['/a b/k"x.py', 7]);
});

test('profile launches are found in a list, under launches, or as a single launch', () => {
    assert.equal(profileLaunches([LAUNCH, 3]).length, 1);
    assert.equal(profileLaunches({ launches: [LAUNCH, LAUNCH] }).length, 2);
    assert.equal(profileLaunches(LAUNCH).length, 1);
    assert.deepEqual(profileLaunches({ summary: 'x' }), []);
    assert.match(renderProfile({ error: 'ncu-missing', message: 'Nsight Compute is not installed', hint: 'install it' }, ctx), /ncu-missing.*not installed.*install it/s);
    assert.match(renderResult('profile', [], ctx), /no launch/);
});

test('the roofline point is drawn only from complete, positive numbers', () => {
    const svg = rooflineChart({ intensity: 2, achieved_tflops: 5, peak_tflops: 700, peak_gbps: 4000 });
    assert.match(svg, /<circle class="point"/);
    assert.match(svg, /5 TFLOP\/s at 2 FLOP\/byte/);
    assert.equal(rooflineChart({ intensity: 2, achieved_tflops: 5 }), '');
    assert.equal(rooflineChart({ intensity: 0, achieved_tflops: 5, peak_tflops: 700, peak_gbps: 4000 }), '');
    assert.equal(rooflineChart(undefined), '');
});
