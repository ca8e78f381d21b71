/**
 * HTML for the results view, from what the server returned for a Benchmark or a Profile.
 *
 * Pure (no `vscode` import): the view passes in how to turn a local file into a webview URI and
 * a nonce. The page runs no script at all; links to source lines and reports are `command:` URIs
 * for `tritonify.openLocation`. Every value from a result (kernel names, messages, paths) is
 * escaped, so a kernel called `<script>` shows as text.
 *
 * Shapes: contract/bench.schema.json and contract/profile.schema.json (extension/test/contract.test.ts
 * checks the renderer's inputs against them); in short:
 *   bench:   {schema: "tritonify.bench/1", status, message, summary, kernel, shapes: [{label, dtype,
 *            results: {impl: {status, timing: {p20_ms, p50_ms, p80_ms, method, noisy}, gbps,
 *            tflops, pct_copy_bw, message}}, speedup: {impl: x}}], baselines, gpu, versions,
 *            reports: {html, png} | {error}}
 *   profile: a list of launches (or {launches: [...]}) each {id, kernel, grid, block, duration_ns,
 *            source_file, patterns: [{pattern, title, severity, impact, message, fix, lines,
 *            explained_by?}], lines: [{rank, line, source, samples, sample_share, top_stalls,
 *            patterns}], report?, gpu?, roofline: {available, reason, intensity_flop_per_byte,
 *            achieved_flops, achieved_bytes_per_s, peak_flops: {fp32, fp64, fp16}, peak_bytes_per_s,
 *            ridge_point, bound, pct_of_roof, precision, tensor_pipe_pct, note}}
 */

export interface RenderContext {
    nonce: string;
    cspSource: string;
    /** A webview URI for a local file, or undefined when it cannot be shown. */
    resourceUri(file: string): string | undefined;
}

export type ResultKind = 'benchmark' | 'profile';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(value: unknown): string {
    const text = value === null || value === undefined ? '' : String(value);
    return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function formatNumber(value: unknown, digits = 3): string {
    const n = num(value);
    if (n === undefined) {
        return '-';
    }
    if (Math.abs(n) >= 1000) {
        return Math.round(n).toLocaleString('en-US');
    }
    return Number(n.toPrecision(digits)).toString();
}

/** A `command:` URI that opens `file` at `line` (1-based) through tritonify.openLocation. */
export function openLocationUri(file: string, line?: number): string {
    const args = line === undefined ? [file] : [file, line];
    return `command:tritonify.openLocation?${encodeURIComponent(JSON.stringify(args))}`;
}

function link(file: string, line: number | undefined, label: string): string {
    return `<a href="${escapeHtml(openLocationUri(file, line))}">${escapeHtml(label)}</a>`;
}

function basename(file: string): string {
    const parts = file.split(/[\\/]/);
    return parts[parts.length - 1] || file;
}

/** Horizontal bars of speedups (the kernel against each baseline; > 1 means the kernel is faster). */
export function speedupChart(speedups: Dict): string {
    const entries = Object.entries(speedups).filter(([, v]) => num(v) !== undefined) as [string, number][];
    if (entries.length === 0) {
        return '';
    }
    const max = Math.max(1, ...entries.map(([, v]) => v));
    const rowH = 22;
    const labelW = 130;
    const barW = 300;
    const height = entries.length * rowH + 8;
    const one = labelW + (1 / max) * barW;
    const bars = entries.map(([impl, value], i) => {
        const y = 4 + i * rowH;
        const w = Math.max(1, (value / max) * barW);
        const cls = value >= 1 ? 'faster' : 'slower';
        return `<text x="${labelW - 6}" y="${y + 14}" text-anchor="end">vs ${escapeHtml(impl)}</text>` +
            `<rect class="${cls}" x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 6}"></rect>` +
            `<text x="${(labelW + w + 4).toFixed(1)}" y="${y + 14}">${escapeHtml(formatNumber(value))}x</text>`;
    }).join('');
    return `<svg class="chart" role="img" aria-label="speedup of the kernel per baseline" width="${labelW + barW + 60}" height="${height}">` +
        `${bars}<line class="one" x1="${one.toFixed(1)}" x2="${one.toFixed(1)}" y1="0" y2="${height}"></line></svg>`;
}

function benchShape(shape: Dict): string {
    const results = isDict(shape.results) ? shape.results : {};
    const rows = Object.entries(results).map(([impl, r]) => {
        const res = isDict(r) ? r : {};
        const t = isDict(res.timing) ? res.timing : {};
        const status = String(res.status ?? '');
        const noisy = t.noisy === true ? ' (noisy)' : '';
        return `<tr class="${impl === 'kernel' ? 'kernel' : ''}"><td>${escapeHtml(impl)}</td><td class="${status === 'ok' ? 'ok' : 'bad'}">${escapeHtml(status)}</td>` +
            `<td>${formatNumber(t.p50_ms)}${escapeHtml(noisy)}</td><td>${formatNumber(t.p20_ms)}</td><td>${formatNumber(t.p80_ms)}</td>` +
            `<td>${formatNumber(res.gbps)}</td><td>${formatNumber(res.tflops)}</td><td>${formatNumber(res.pct_copy_bw)}</td>` +
            `<td>${escapeHtml(t.method ?? '')}</td><td class="msg">${status === 'ok' ? '' : escapeHtml(res.message ?? '')}</td></tr>`;
    }).join('');
    const speedups = isDict(shape.speedup) ? shape.speedup : {};
    const dtype = shape.dtype ? ` ${escapeHtml(shape.dtype)}` : '';
    const bound = shape.bound ? ` <span class="muted">${escapeHtml(shape.bound)}-bound</span>` : '';
    return `<section class="shape"><h3>${escapeHtml(shape.label ?? '?')}${dtype}${bound}</h3>` +
        `<table><thead><tr><th>implementation</th><th>status</th><th>median ms</th><th>p20 ms</th><th>p80 ms</th><th>GB/s</th><th>TFLOP/s</th><th>% copy BW</th><th>method</th><th></th></tr></thead>` +
        `<tbody>${rows}</tbody></table>${speedupChart(speedups)}</section>`;
}

function keyValues(title: string, data: unknown): string {
    if (!isDict(data) || Object.keys(data).length === 0) {
        return '';
    }
    const items = Object.entries(data).filter(([, v]) => !isDict(v) && !Array.isArray(v))
        .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('');
    return `<details><summary>${escapeHtml(title)}</summary><dl>${items}</dl></details>`;
}

export function renderBenchmark(result: Dict, ctx: RenderContext): string {
    const parts: string[] = [];
    const status = String(result.status ?? '');
    parts.push(`<h1>Benchmark: ${escapeHtml(result.kernel ?? result.target ?? 'kernel')}</h1>`);
    if (result.summary) {
        parts.push(`<p class="summary">${escapeHtml(result.summary)}</p>`);
    }
    if (status && status !== 'ok') {
        parts.push(`<p class="bad">status ${escapeHtml(status)}${result.message ? ': ' + escapeHtml(result.message) : ''}</p>`);
    }
    if (typeof result.file === 'string') {
        parts.push(`<p>${link(result.file, undefined, result.file)}</p>`);
    }
    const shapes = Array.isArray(result.shapes) ? result.shapes.filter(isDict) : [];
    if (shapes.length === 0) {
        parts.push('<p class="muted">No shapes were measured.</p>');
    }
    parts.push(...shapes.map(benchShape));
    const reports = isDict(result.reports) ? result.reports : {};
    if (typeof reports.png === 'string') {
        const src = ctx.resourceUri(reports.png);
        if (src) {
            parts.push(`<img class="report" alt="speedup per shape" src="${escapeHtml(src)}">`);
        }
    }
    if (typeof reports.html === 'string') {
        parts.push(`<p>Full report: ${link(reports.html, undefined, basename(reports.html))}</p>`);
    }
    if (typeof reports.error === 'string') {
        parts.push(`<p class="bad">The report could not be written: ${escapeHtml(reports.error)}</p>`);
    }
    parts.push(keyValues('baselines', result.baselines));
    parts.push(keyValues('GPU', result.gpu));
    parts.push(keyValues('versions', result.versions));
    if (result.method) {
        parts.push(`<details><summary>method</summary><p>${escapeHtml(result.method)}</p></details>`);
    }
    return page(ctx, 'Tritonify benchmark', parts.join('\n'));
}

/** The launches of a profile result, whatever container the server put them in. */
export function profileLaunches(result: unknown): Dict[] {
    if (Array.isArray(result)) {
        return result.filter(isDict);
    }
    if (isDict(result)) {
        for (const key of ['launches', 'diagnoses', 'result']) {
            if (Array.isArray(result[key])) {
                return (result[key] as unknown[]).filter(isDict);
            }
        }
        if (Array.isArray(result.patterns)) {
            return [result];
        }
    }
    return [];
}

const PRECISIONS = ['fp32', 'fp64', 'fp16'] as const;

/** FLOP/s or FLOP/byte on a log axis: 1e12 -> "1T", 0.01 -> "0.01". */
function decadeLabel(value: number): string {
    const units: [number, string][] = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [scale, suffix] of units) {
        if (value >= scale) {
            return `${Number((value / scale).toPrecision(3))}${suffix}`;
        }
    }
    return String(Number(value.toPrecision(3)));
}

/** One roof per distinct peak: precisions whose peaks are within 2% share a line ("fp32/fp16"). */
function computeRoofs(peaks: Dict): [string, number][] {
    const roofs: [string, number][] = [];
    for (const p of PRECISIONS) {
        const v = num(peaks[p]);
        if (v === undefined || v <= 0) {
            continue;
        }
        const same = roofs.find(([, w]) => Math.abs(w - v) <= 0.02 * Math.max(w, v));
        if (same) {
            same[0] += `/${p}`;
        } else {
            roofs.push([p, v]);
        }
    }
    return roofs;
}

/**
 * The one line under the chart: `X FLOP/byte, Y GB/s (Z% of DRAM roof), memory-bound`, then how
 * near the roof the kernel is and for which precision.
 */
export function rooflineLine(roofline: Dict): string {
    const parts: string[] = [];
    const intensity = num(roofline.intensity_flop_per_byte);
    const bytes = num(roofline.achieved_bytes_per_s);
    const peakBytes = num(roofline.peak_bytes_per_s);
    const precision = typeof roofline.precision === 'string' ? roofline.precision : undefined;
    if (intensity !== undefined && precision !== 'tensor') {
        parts.push(`${formatNumber(intensity)} FLOP/byte`);
    }
    if (bytes !== undefined) {
        const share = peakBytes ? ` (${Math.round((100 * bytes) / peakBytes)}% of DRAM roof)` : '';
        parts.push(`${formatNumber(bytes / 1e9)} GB/s${share}`);
    }
    const tensor = num(roofline.tensor_pipe_pct);
    if (precision === 'tensor' && tensor !== undefined) {
        parts.push(`tensor pipe ${Math.round(tensor)}% busy`);
    } else if (num(roofline.achieved_flops) !== undefined) {
        parts.push(`${formatNumber((roofline.achieved_flops as number) / 1e12)} TFLOP/s`);
    }
    if (typeof roofline.bound === 'string') {
        parts.push(`${roofline.bound}-bound`);
    }
    const pct = num(roofline.pct_of_roof);
    if (pct !== undefined) {
        parts.push(`${Math.round(pct)}% of roof${precision ? ' (' + precision + ')' : ''}`);
    }
    return escapeHtml(parts.join(', '));
}

/**
 * A launch's roofline point (diagnostics/ncu/roofline.py): a log-log SVG with the DRAM roof, one
 * compute roof per precision the capture has a peak for, the ridge point of the kernel's
 * precision and the kernel's point, then one line of text. Without data it says why.
 */
export function rooflineChart(roofline: unknown): string {
    if (!isDict(roofline)) {
        return '<p class="muted roofline-none">no roofline data: this result carries none (profiled by an older Tritonify?)</p>';
    }
    if (roofline.available !== true) {
        const reason = typeof roofline.reason === 'string' && roofline.reason ? roofline.reason : 'the capture lacks the counters it needs';
        return `<p class="muted roofline-none">no roofline data: ${escapeHtml(reason)}</p>`;
    }
    const peakBytes = num(roofline.peak_bytes_per_s);
    const peaks = isDict(roofline.peak_flops) ? roofline.peak_flops : {};
    const roofs = computeRoofs(peaks);
    const note = typeof roofline.note === 'string' && roofline.note ? `<p class="muted note">${escapeHtml(roofline.note)}</p>` : '';
    const line = `<p class="roofline-line">${rooflineLine(roofline)}</p>`;
    if (peakBytes === undefined || peakBytes <= 0 || roofs.length === 0) {
        return line + note;
    }
    const precision = typeof roofline.precision === 'string' ? roofline.precision : '';
    const intensity = num(roofline.intensity_flop_per_byte);
    const achieved = num(roofline.achieved_flops);
    const ridge = num(roofline.ridge_point);
    const drawPoint = precision !== 'tensor' && intensity !== undefined && achieved !== undefined && intensity > 0 && achieved > 0;
    const topPeak = Math.max(...roofs.map(([, v]) => v));
    const ridges = roofs.map(([, v]) => v / peakBytes);
    const lowX = Math.min(...ridges, drawPoint ? intensity! : Infinity);
    const highX = Math.max(...ridges, drawPoint ? intensity! : 0);
    const xMin = 10 ** Math.floor(Math.log10(lowX) - 2), xMax = 10 ** Math.ceil(Math.log10(highX) + 1);
    const yMax = 10 ** Math.ceil(Math.log10(topPeak * 1.5));
    const yMin = 10 ** Math.floor(Math.min(Math.log10(peakBytes * xMin), drawPoint ? Math.log10(achieved!) - 0.5 : Infinity));
    const W = 380, H = 220, left = 44, bottom = 28, top = 18, right = 10;
    const x = (v: number) => left + ((Math.log10(v) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * (W - left - right);
    const y = (v: number) => top + (1 - (Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - top - bottom);
    const f = (v: number) => v.toFixed(1);
    const ticks: string[] = [];
    for (let e = Math.log10(xMin); e <= Math.log10(xMax); e += 1) {
        ticks.push(`<text class="tick" x="${f(x(10 ** e))}" y="${H - bottom + 14}" text-anchor="middle">${escapeHtml(decadeLabel(10 ** e))}</text>`);
    }
    for (let e = Math.log10(yMin); e <= Math.log10(yMax); e += 1) {
        ticks.push(`<text class="tick" x="${left - 4}" y="${f(y(10 ** e) + 4)}" text-anchor="end">${escapeHtml(decadeLabel(10 ** e))}</text>`);
    }
    const memory = `<path class="roof memory" d="M ${f(x(xMin))} ${f(y(peakBytes * xMin))} L ${f(x(topPeak / peakBytes))} ${f(y(topPeak))}"></path>`;
    // the highest roof is labelled above its line, the others below theirs (FP32 and FP64 are 2x apart)
    const compute = roofs.map(([p, v]) => {
        const cls = p.split('/').includes(precision) ? 'roof compute active' : 'roof compute';
        const labelY = v === topPeak ? y(v) - 3 : y(v) + 11;
        return `<path class="${cls}" d="M ${f(x(v / peakBytes))} ${f(y(v))} L ${f(x(xMax))} ${f(y(v))}"></path>` +
            `<text class="roof-label" x="${f(x(xMax) - 2)}" y="${f(labelY)}" text-anchor="end">${escapeHtml(p)} ${escapeHtml(formatNumber(v / 1e12))} TFLOP/s</text>`;
    }).join('');
    const ridgeMark = ridge !== undefined && ridge > 0
        ? `<line class="ridge" x1="${f(x(ridge))}" x2="${f(x(ridge))}" y1="${f(y(yMin))}" y2="${f(y(ridge * peakBytes))}"></line>` +
          `<text class="tick" x="${f(x(ridge) + 3)}" y="${f(y(yMin) - 4)}">ridge ${escapeHtml(formatNumber(ridge))}</text>`
        : '';
    const point = drawPoint
        ? `<circle class="point" cx="${f(x(intensity!))}" cy="${f(y(achieved!))}" r="5"><title>${rooflineLine(roofline)}</title></circle>`
        : '';
    const axes = `<line class="axis" x1="${left}" x2="${W - right}" y1="${H - bottom}" y2="${H - bottom}"></line>` +
        `<line class="axis" x1="${left}" x2="${left}" y1="${top}" y2="${H - bottom}"></line>` +
        `<text class="tick" x="${W - right}" y="${H - 2}" text-anchor="end">FLOP/byte (DRAM)</text>` +
        `<text class="tick" x="2" y="10">FLOP/s</text>`;
    const label = `roofline: ${escapeHtml(precision || 'kernel')} point, DRAM roof ${escapeHtml(formatNumber(peakBytes / 1e9))} GB/s`;
    return `<svg class="roofline" role="img" aria-label="${label}" width="${W}" height="${H}">` +
        `${axes}${ticks.join('')}${memory}${compute}${ridgeMark}${point}</svg>${line}${note}`;
}

function launchSection(launch: Dict): string {
    const file = typeof launch.source_file === 'string' ? launch.source_file : undefined;
    const patterns = Array.isArray(launch.patterns) ? launch.patterns.filter(isDict) : [];
    const lines = Array.isArray(launch.lines) ? launch.lines.filter(isDict) : [];
    const duration = num(launch.duration_ns);
    const head = `<h2>${escapeHtml(launch.kernel ?? 'kernel')} <span class="muted">launch ${escapeHtml(launch.id ?? '?')}` +
        `${Array.isArray(launch.grid) ? ' grid (' + escapeHtml(launch.grid.join(', ')) + ')' : ''}` +
        `${Array.isArray(launch.block) ? ' block (' + escapeHtml(launch.block.join(', ')) + ')' : ''}` +
        `${duration !== undefined ? ' ' + escapeHtml(formatNumber(duration / 1000)) + ' us' : ''}</span></h2>`;
    const patternItems = patterns.map((p) => {
        const where = Array.isArray(p.lines) && file
            ? ' at ' + (p.lines as unknown[]).filter((n) => typeof n === 'number').slice(0, 5).map((n) => link(file, n as number, `line ${n}`)).join(', ')
            : '';
        const cause = p.explained_by ? ` <span class="muted">(caused by ${escapeHtml(p.explained_by)})</span>` : '';
        const impact = num(p.impact) !== undefined ? ` <span class="muted">impact ${Math.round((p.impact as number) * 100)}%</span>` : '';
        return `<li class="${escapeHtml(p.severity ?? '')}"><b>${escapeHtml(p.pattern ?? '?')} ${escapeHtml(p.title ?? '')}</b>${impact}${cause}` +
            `<div>${escapeHtml(p.message ?? '')}${where}</div><div class="fix">fix: ${escapeHtml(p.fix ?? '')}</div></li>`;
    }).join('');
    const patternList = patterns.length ? `<h3>Patterns</h3><ol class="patterns">${patternItems}</ol>` : '<p>No bottleneck pattern found.</p>';
    const hotRows = lines.map((l) => {
        const lineNo = num(l.line);
        const where = file && lineNo !== undefined ? link(file, lineNo, `${basename(file)}:${lineNo}`) : escapeHtml(lineNo ?? '?');
        const stalls = Array.isArray(l.top_stalls) ? l.top_stalls.filter(isDict).map((s) => `${escapeHtml(s.reason)} ${escapeHtml(s.samples)}`).join(', ') : '';
        const share = num(l.sample_share);
        return `<tr><td>${escapeHtml(l.rank ?? '')}</td><td>${where}</td><td><code>${escapeHtml(l.source ?? '')}</code></td>` +
            `<td>${share !== undefined ? Math.round(share * 1000) / 10 + '%' : '-'}</td><td>${stalls}</td>` +
            `<td>${Array.isArray(l.patterns) ? escapeHtml(l.patterns.join(' ')) : ''}</td></tr>`;
    }).join('');
    const hot = lines.length
        ? `<h3>Hot lines</h3><table><thead><tr><th>#</th><th>where</th><th>source</th><th>samples</th><th>top stalls</th><th>patterns</th></tr></thead><tbody>${hotRows}</tbody></table>`
        : '';
    const roof = '<h3>Roofline</h3>' + rooflineChart(launch.roofline);
    const report = typeof launch.report === 'string' ? `<p>Nsight Compute report: ${link(launch.report, undefined, basename(launch.report))}</p>` : '';
    return `<section class="launch">${head}${patternList}${roof}${hot}${report}</section>`;
}

export function renderProfile(result: unknown, ctx: RenderContext): string {
    const launches = profileLaunches(result);
    const parts = [`<h1>Profile</h1>`];
    if (isDict(result) && typeof result.error === 'string') {
        parts.push(`<p class="bad">${escapeHtml(result.error)}: ${escapeHtml(result.message ?? '')}</p>`);
        if (result.hint) {
            parts.push(`<p>${escapeHtml(result.hint)}</p>`);
        }
    } else if (launches.length === 0) {
        parts.push('<p class="muted">The profile holds no launch of this kernel.</p>');
    }
    parts.push(...launches.map(launchSection));
    return page(ctx, 'Tritonify profile', parts.join('\n'));
}

export function renderResult(kind: ResultKind, result: unknown, ctx: RenderContext): string {
    if (kind === 'benchmark') {
        return renderBenchmark(isDict(result) ? result : {}, ctx);
    }
    return renderProfile(result, ctx);
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid var(--vscode-panel-border, #8884); padding: 2px 6px; text-align: left; }
tr.kernel td { font-weight: bold; }
.muted { opacity: .7; font-weight: normal; }
.ok { color: var(--vscode-testing-iconPassed, green); }
.bad, li.warning b { color: var(--vscode-errorForeground, #c33); }
.summary { font-size: 1.1em; }
.fix { opacity: .85; font-style: italic; }
svg text { fill: var(--vscode-foreground); font-size: 12px; }
rect.faster { fill: var(--vscode-charts-green, #3a3); }
rect.slower { fill: var(--vscode-charts-red, #c33); }
line.one { stroke: var(--vscode-foreground); stroke-dasharray: 3 3; }
path.roof { stroke: var(--vscode-charts-blue, #37c); fill: none; stroke-width: 1.5; }
path.roof.compute { stroke: var(--vscode-charts-purple, #94c); opacity: .6; }
path.roof.compute.active { opacity: 1; stroke-width: 2; }
line.axis { stroke: var(--vscode-foreground, #888); opacity: .5; }
line.ridge { stroke: var(--vscode-foreground, #888); stroke-dasharray: 2 3; opacity: .6; }
svg text.tick, svg text.roof-label { font-size: 10px; }
circle.point { fill: var(--vscode-charts-orange, #e80); }
img.report { max-width: 100%; }
`;

function page(ctx: RenderContext, title: string, body: string): string {
    const csp = `default-src 'none'; img-src ${ctx.cspSource} data:; style-src 'nonce-${ctx.nonce}';`;
    return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">` +
        `<meta http-equiv="Content-Security-Policy" content="${csp}">` +
        `<meta name="viewport" content="width=device-width, initial-scale=1.0"><title>${escapeHtml(title)}</title>` +
        `<style nonce="${escapeHtml(ctx.nonce)}">${STYLE}</style></head><body>${body}</body></html>`;
}
