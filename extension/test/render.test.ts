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

// Roofline dicts as `tritonify diagnose --format json` writes them for three launches of the H200
// capture in tests/ncu/fixtures/h200/raw_base.csv.gz (diagnostics/ncu/roofline.py).
const COPY_ROOF = {
    available: true, intensity_flop_per_byte: 0.1309, achieved_flops: 512700000000.0, achieved_bytes_per_s: 3918000000000.0,
    peak_flops: { fp32: 65520000000000.0, fp64: 32760000000000.0, fp16: null }, peak_bytes_per_s: 4811000000000.0,
    ridge_point: 13.62, bound: 'memory', pct_of_roof: 81.44, precision: 'fp32', tensor_pipe_pct: 0.0, note: '', reason: null,
};
const FP64_ROOF = {
    available: true, intensity_flop_per_byte: 19.26, achieved_flops: 30320000000000.0, achieved_bytes_per_s: 1574000000000.0,
    peak_flops: { fp32: 65530000000000.0, fp64: 32760000000000.0, fp16: null }, peak_bytes_per_s: 4809000000000.0,
    ridge_point: 6.814, bound: 'compute', pct_of_roof: 92.55, precision: 'fp64', tensor_pipe_pct: 0.0, note: '', reason: null,
};
const TENSOR_ROOF = {
    available: true, intensity_flop_per_byte: 0.0, achieved_flops: 0.0, achieved_bytes_per_s: 920700000000.0,
    peak_flops: { fp32: 52200000000000.0, fp64: 26100000000000.0, fp16: null }, peak_bytes_per_s: 4812000000000.0,
    ridge_point: null, bound: 'compute', pct_of_roof: 75.97, precision: 'tensor', tensor_pipe_pct: 75.97, reason: null,
    note: 'tensor-core work (HMMA/GMMA) is not counted in FLOPs by ncu\'s FP instruction counters',
};

function circle(svg: string): { cx: number; cy: number } {
    const m = svg.match(/<circle class="point" cx="([\d.]+)" cy="([\d.]+)"/);
    assert.ok(m, 'no point drawn');
    return { cx: Number(m[1]), cy: Number(m[2]) };
}

function roofY(svg: string, precision: string): number {
    const m = svg.match(new RegExp(`<path class="roof compute[^"]*" d="M [\\d.]+ ([\\d.]+) L[^"]*"></path><text[^>]*>${precision} `));
    assert.ok(m, `no ${precision} roof`);
    return Number(m[1]);
}

test('a memory-bound launch: point under the DRAM roof, left of the ridge, and the one-line verdict', () => {
    const html = rooflineChart(COPY_ROOF);
    assert.match(html, /<svg class="roofline"/);
    assert.match(html, /<path class="roof memory"/);
    assert.equal((html.match(/<path class="roof compute/g) ?? []).length, 2);   // fp32 and fp64; no fp16 peak
    assert.match(html, /class="roof compute active"[^>]*><\/path><text[^>]*>fp32 /);
    assert.match(html, /<line class="ridge"/);
    assert.match(html, /0\.131 FLOP\/byte, 3,918 GB\/s \(81% of DRAM roof\), 0\.513 TFLOP\/s, memory-bound, 81% of roof \(fp32\)/);
    const ridgeX = Number(html.match(/<line class="ridge" x1="([\d.]+)"/)![1]);
    const p = circle(html);
    assert.ok(p.cx < ridgeX, 'a memory-bound point sits left of the ridge');
    assert.ok(p.cy > roofY(html, 'fp32'), 'and below the compute roof (SVG y grows downwards)');
});

test('a compute-bound FP64 launch: point right of the ridge, just under the FP64 roof', () => {
    const html = rooflineChart(FP64_ROOF);
    assert.match(html, /class="roof compute active"[^>]*><\/path><text[^>]*>fp64 /);
    const ridgeX = Number(html.match(/<line class="ridge" x1="([\d.]+)"/)![1]);
    const p = circle(html);
    assert.ok(p.cx > ridgeX);
    const fp64 = roofY(html, 'fp64');
    assert.ok(p.cy > fp64 && p.cy - fp64 < 10, `${p.cy} vs roof ${fp64}`);   // 93% of the roof: a few pixels under it
    assert.match(html, /compute-bound, 93% of roof \(fp64\)/);
});

test('a tensor-core launch draws the roofs but no FP point, and says why', () => {
    const html = rooflineChart(TENSOR_ROOF);
    assert.doesNotMatch(html, /<circle/);
    assert.match(html, /tensor pipe 76% busy, compute-bound, 76% of roof \(tensor\)/);
    assert.doesNotMatch(html, /FLOP\/byte,/);
    assert.match(html, /not counted in FLOPs/);
});

test('without roofline data the view says so and why', () => {
    const reason = 'the capture lacks the DRAM peak (dram__bytes.sum.peak_sustained and dram__cycles_elapsed.avg.per_second)';
    const html = rooflineChart({ available: false, reason, achieved_bytes_per_s: 3.9e12 });
    assert.equal(html, `<p class="muted roofline-none">no roofline data: ${escapeHtml(reason)}</p>`);
    assert.match(rooflineChart(undefined), /no roofline data: this result carries none/);
    assert.match(rooflineChart({ available: false }), /no roofline data: the capture lacks/);
    const page = renderProfile([{ ...LAUNCH, roofline: { available: false, reason } }], ctx);
    assert.match(page, /<h3>Roofline<\/h3><p class="muted roofline-none">no roofline data: the capture lacks the DRAM peak/);
    assert.match(renderProfile([LAUNCH], ctx), /no roofline data/);
});

test('roofline text from a result is escaped and the chart adds no active content', () => {
    const html = renderProfile([{ ...LAUNCH, roofline: { ...COPY_ROOF, precision: EVIL, bound: EVIL, note: EVIL } }], ctx);
    noActiveContent(html);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    noActiveContent(renderProfile([{ ...LAUNCH, roofline: { available: false, reason: EVIL } }], ctx));
    assert.doesNotMatch(rooflineChart(COPY_ROOF), /style=/);     // the CSP allows no inline style attributes
});

test('precisions with the same peak share one roof line', () => {
    // the --set full capture of planted_c_uncoalesced: HFMA peaks at the FFMA rate
    const html = rooflineChart({ ...COPY_ROOF, peak_flops: { fp32: 65520000000000.0, fp64: 32760000000000.0, fp16: 65520000000000.0 } });
    assert.equal((html.match(/<path class="roof compute/g) ?? []).length, 2);
    assert.match(html, /class="roof compute active"[^>]*><\/path><text[^>]*>fp32\/fp16 65\.5 TFLOP\/s/);
});
