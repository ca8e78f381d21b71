// Drives a real VS Code (code-server) in headless Chromium; tests/e2e/test_vscode_e2e.py lists what
// it checks. Both modes: the Problems panel shows a Tritonify TRI001 finding for E2E_FILE, in a
// row-sized message, whose code links to the rendered rule page. trusted: typing latency (the example
// and fla's parallax file), the rule page rendered, Profile's Set Launch Command (remembered per
// kernel), the Inspect lens without triton, fix-all from Ctrl+., Benchmark's Write a Benchmark
// Contract and Choose Interpreter, the SASS view with an interpreter that has triton.
// untrusted: (Restricted Mode) the Benchmark code lens is refused with a message to trust the folder,
// and the Tritonify status item, clicked, opens Manage Workspace Trust.
// Run by scripts/e2e.sh, which sets:
//   E2E_MODE       trusted | untrusted
//   E2E_URL        the workbench URL with ?folder=
//   E2E_WORKSPACE  the folder (a copy of examples/)
//   E2E_FILE       the file to open, relative to the folder
//   E2E_OUT        where screenshots and the report go
//   E2E_PARALLAX, E2E_PARALLAX_LINES  the parallax copy and where to type / profile (typing_point.py), or empty
//   E2E_TRITON_PYTHON  an interpreter with triton for the assembly view, or empty
//   E2E_SETTINGS   the user settings file (its content is typed into the settings editor)
// Exit 0 when every check passed, 1 otherwise (with a screenshot of the moment it failed).
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { chromium } = require('playwright-core');

const URL = process.env.E2E_URL;
const WORKSPACE = process.env.E2E_WORKSPACE;
const FILE = process.env.E2E_FILE;
const OUT = process.env.E2E_OUT || '.';
const MODE = process.env.E2E_MODE || 'trusted';
const FIX_TITLE = 'Replace with the sigmoid identity';
const started = Date.now();

function say(message) {
  console.log(`[e2e-driver ${MODE} ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

async function shot(page, name) {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file }).catch(() => undefined);
  say(`screenshot ${file}`);
}

async function step(page, name, fn) {
  say(name);
  try {
    return await fn();
  } catch (error) {
    await shot(page, `failed-${name.replace(/[^a-z0-9]+/gi, '-')}`);
    throw new Error(`${name}: ${error.message}`);
  }
}

const LATENCY_MS = Number(process.env.E2E_LATENCY_MS || 300);
const PARALLAX = process.env.E2E_PARALLAX || '';
const [PARALLAX_LINE, PARALLAX_KERNEL_LINE, PARALLAX_OTHER_LINE] = (process.env.E2E_PARALLAX_LINES || '').split(/\s+/).map(Number);
const TRITON_PYTHON = process.env.E2E_TRITON_PYTHON || '';
const SETTINGS = process.env.E2E_SETTINGS || '';

async function openFile(page, file) {
  await page.keyboard.press('Escape');
  const tab = page.locator(`.tab[aria-label*="${path.basename(file)}"]`).first();
  if ((await tab.count()) > 0) {   // open already: its tab
    await tab.click();
    await page.locator(`.tab.active[aria-label*="${path.basename(file)}"]`).first().waitFor({ timeout: 30_000 });
    return;
  }
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 30_000 });
  await input.fill(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(file) }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.locator(`.tab.active[aria-label*="${path.basename(file)}"]`).first().waitFor({ timeout: 30_000 });
  await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 30_000 });
}

async function palette(page, command) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 30_000 });
  await input.fill(`>${command}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
}

async function gotoLine(page, line) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 30_000 });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await page.locator('.monaco-editor.focused').first().waitFor({ timeout: 15_000 });
}

async function clearNotifications(page) {
  await palette(page, 'Notifications: Clear All Notifications').catch(() => undefined);
  await page.waitForTimeout(300);
}

/** A notification matching `pattern` with each of `buttons`; its text must not send the user out of the editor. */
async function expectToast(page, pattern, buttons, timeout = 120_000) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: pattern }).first();
  await toast.waitFor({ timeout });
  const said = (await toast.innerText()).replace(/\s+/g, ' ');
  say(`notification: ${said.slice(0, 300)}`);
  for (const label of buttons) {
    await toast.locator('.monaco-button', { hasText: label }).first().waitFor({ timeout: 10_000 });
  }
  if (/`?tritonify (bench|profile|inspect|check|diagnose)\b|TRITONIFY_[A-Z]+|Ctrl\+\.|run .* from a terminal/.test(said)) {
    throw new Error(`the message sends the user out of the editor although a button does it: ${said}`);
  }
  return toast;
}

/** Without the Python extension, "Choose Interpreter" opens the settings at tritonify.interpreter. */
async function expectInterpreterSetting(page) {
  await page.locator('.settings-editor').first().waitFor({ timeout: 30_000 });
  await page.locator('.settings-editor .setting-item-contents', { hasText: 'Interpreter' }).first().waitFor({ timeout: 30_000 });
  const query = await page.locator('.settings-editor .suggest-input-container .view-lines, .settings-editor .search-container').first().innerText();
  say(`settings editor opened: ${query.replace(/\s+/g, ' ').slice(0, 120)}`);
  if (!/tritonify\.interpreter/.test(query)) {
    throw new Error(`the settings editor is not at tritonify.interpreter: ${query}`);
  }
}

/** The text of the first frame (webviews included) whose body holds `needle`. */
async function waitForFrameText(page, needle, timeout) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const text = await frame.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '');
      if (text.includes(needle)) {
        return text;
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no frame shows "${needle}" after ${timeout / 1000} s (the preview is blank)`);
}

/**
 * Type `statement` key by key (70 ms apart) on a new line after the cursor's and time the last key
 * to a new Problems row with `code` (the editor's own rendering included).
 */
async function typeAndTime(page, code, statement) {
  const rows = page.locator('.markers-panel .monaco-list-row', { hasText: code });
  const before = await rows.count();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');            // the editor keeps the indentation
  await page.keyboard.type(statement, { delay: 70 });
  const typed = Date.now();
  const deadline = typed + 10_000;
  while ((await rows.count()) <= before) {
    if (Date.now() > deadline) {
      throw new Error(`no new ${code} row 10 s after the last key (${before} rows)`);
    }
    await page.waitForTimeout(10);
  }
  return Date.now() - typed;
}

/** fla's 815-line parallax kernels: typing latency, then Profile's "Set Launch Command", remembered per kernel. */
async function parallaxSteps(page) {
  await step(page, `typing into the 815-line ${PARALLAX} updates the Problems panel within ${LATENCY_MS} ms`, async () => {
    await openFile(page, PARALLAX);
    await page.waitForTimeout(3000);               // opened and linted
    const latencies = [];
    await gotoLine(page, PARALLAX_LINE);
    for (let i = 0; i < 3; i += 1) {
      latencies.push(await typeAndTime(page, 'TRI022', `tl.device_print("typed ${i}", i_t)`));
      await page.waitForTimeout(1500);             // typing pauses; the full lint confirms
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    say(`parallax typing latencies (last key -> new Problems row): ${latencies.join(', ')} ms; median ${sorted[1]} ms`);
    fs.writeFileSync(path.join(OUT, 'parallax-typing-latency.txt'), `${latencies.join('\n')}\n`);
    await shot(page, 'parallax-typing');
    if (sorted[1] > LATENCY_MS) {
      throw new Error(`typing into ${PARALLAX}: median ${sorted[1]} ms from the last key to the Problems row (over ${LATENCY_MS})`);
    }
  });

  await step(page, 'Profile with nothing that launches the kernel offers "Set Launch Command"; the command typed is run', async () => {
    await page.keyboard.press('Control+S');
    await clearNotifications(page);
    await gotoLine(page, PARALLAX_KERNEL_LINE);
    await palette(page, 'Tritonify: Profile Kernel');
    const toast = await expectToast(page, /nothing launches/, ['Set Launch Command', 'Open Log']);
    await shot(page, 'profile-no-launcher');
    await toast.locator('.monaco-button', { hasText: 'Set Launch Command' }).first().click();
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 30_000 });
    await input.fill('python bench_parallax.py --n 4096');
    await shot(page, 'set-launch-command');
    await page.keyboard.press('Enter');
    await expectToast(page, /Nsight Compute|ncu/, ['Open Log']);   // Profile ran with it: ncu is what is missing here
    await shot(page, 'profile-with-launch-command');
  });

  await step(page, 'the launch command is remembered for that kernel, and only for it', async () => {
    await clearNotifications(page);
    await gotoLine(page, PARALLAX_KERNEL_LINE);
    await palette(page, 'Tritonify: Profile Kernel');
    await expectToast(page, /Nsight Compute|ncu/, ['Open Log']);
    if ((await page.locator('.notifications-toasts .notification-toast', { hasText: /nothing launches/ }).count()) > 0) {
      throw new Error('the launch command was not remembered');
    }
    await clearNotifications(page);
    await gotoLine(page, PARALLAX_OTHER_LINE);
    await palette(page, 'Tritonify: Profile Kernel');
    await expectToast(page, /nothing launches/, ['Set Launch Command']);
    say('another kernel of the file still has no launch command');
  });
  await shot(page, 'launch-command-per-kernel');
  await clearNotifications(page);
}

async function main() {
  const target = path.join(WORKSPACE, FILE);
  const before = fs.readFileSync(target, 'utf8');
  const browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on('pageerror', (error) => say(`page error: ${error.message}`));
  try {
    await step(page, 'load the workbench', async () => {
      await page.goto(URL, { waitUntil: 'domcontentloaded', timeout: 120_000 });
      await page.locator('.monaco-workbench').waitFor({ timeout: 180_000 });
      await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 180_000 });
    });

    await step(page, `open ${FILE}`, async () => {
      await page.locator('.monaco-workbench').click({ position: { x: 800, y: 500 } }).catch(() => undefined);
      await page.keyboard.press('Control+P');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 30_000 });
      await input.fill(FILE);
      await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Enter');
      await page.locator(`.tab[aria-label*="${path.basename(FILE)}"]`).first().waitFor({ timeout: 30_000 });
      await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 30_000 });
    });

    const marker = page.locator('.markers-panel .monaco-list-row', { hasText: 'TRI001' }).first();
    await step(page, 'the Problems panel shows a Tritonify TRI001 finding', async () => {
      await page.keyboard.press('Control+Shift+M');
      await page.locator('.markers-panel').waitFor({ timeout: 30_000 });
      await marker.waitFor({ timeout: 240_000 });   // the server starts, then lints
      const text = await marker.innerText();
      say(`problem: ${text.replace(/\s+/g, ' ').slice(0, 200)}`);
      if (!/Tritonify/i.test(text) && !/tanh/i.test(text)) {
        throw new Error(`the TRI001 row does not look like Tritonify's: ${text}`);
      }
      const links = await marker.locator('a').evaluateAll((as) => as.map((a) => ({ text: (a.textContent || '').trim(), href: a.getAttribute('href') || '' })));
      const docs = links.find((l) => l.text === 'TRI001');
      // a link that opens the bundled page rendered (extension/docLinks.ts), not the raw file
      if (!docs || !docs.href.startsWith('command:tritonify.openPage') || !decodeURIComponent(docs.href).includes('/references/rules/TRI001.md')) {
        throw new Error(`the TRI001 code is not a link to its rendered rule page: ${JSON.stringify(links)}`);
      }
      if (text.split('\n').some((line) => line.length > 140)) {
        throw new Error(`a Problems row is longer than a row: ${text}`);
      }
      say(`docs link: ${docs.href}`);
      const rows = await page.locator('.markers-panel .monaco-list-row').count();
      say(`${rows} rows in the Problems panel`);
    });
    await shot(page, 'problems');

    if (MODE === 'untrusted') {
      await step(page, 'the workspace is in Restricted Mode', async () => {
        await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 30_000 });
      });
      await step(page, 'the Benchmark code lens is refused until the folder is trusted', async () => {
        await page.locator('.codelens-decoration a', { hasText: 'Benchmark' }).first().click();
        const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'trust the workspace' }).first();
        await toast.waitFor({ timeout: 30_000 });
        say(`notification: ${(await toast.innerText()).replace(/\s+/g, ' ').slice(0, 200)}`);
      });
      await shot(page, 'untrusted');
      await step(page, 'the Tritonify status item, clicked, opens Manage Workspace Trust', async () => {
        const item = page.locator('.statusbar-item[id$="tritonify.status"]').first();
        await item.waitFor({ timeout: 30_000 });
        say(`status item: ${(await item.getAttribute('aria-label')) || (await item.innerText())}`);
        await item.locator('a').first().click();
        // the Workspace Trust editor (a tab, or the modal editor newer builds open it in)
        const trust = page.getByText('In a Trusted Folder').first();
        await trust.waitFor({ timeout: 30_000 });
        say('the Workspace Trust editor opened');
      });
      await shot(page, 'untrusted-status-item');
      if (fs.readFileSync(target, 'utf8') !== before) {
        throw new Error(`${target} changed in an untrusted workspace`);
      }
      say('PASS');
      return 0;
    }
    // Typing: a statement with a second libdevice.tanh typed key by key (70 ms apart) on a new line
    // under the finding shows its own finding; the time from the last key to the new Problems row
    // is the latency a user sees (the editor's own rendering included).
    await step(page, `typing a line into the kernel updates the Problems panel within ${LATENCY_MS} ms`, async () => {
      await marker.click();
      await page.keyboard.press('Enter');
      await page.locator('.monaco-editor.focused').first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(1500);               // the server settled after opening
      const latency = await typeAndTime(page, 'TRI001', 'z = libdevice.tanh(a)');   // parses only with its last key
      say(`typing latency (last key -> new Problems row, the editor's own rendering included): ${latency} ms`);
      fs.writeFileSync(path.join(OUT, 'typing-latency.txt'), `${latency}\n`);
      await shot(page, 'typing');
      const rows = page.locator('.markers-panel .monaco-list-row', { hasText: 'TRI001' });
      const before = await rows.count();
      await page.keyboard.press('Control+Shift+K');  // the typed line removed again
      const back = Date.now() + 10_000;
      while ((await rows.count()) >= before && Date.now() < back) {
        await page.waitForTimeout(50);
      }
      if (latency > LATENCY_MS) {
        throw new Error(`the Problems panel took ${latency} ms after the last key`);
      }
    });

    await step(page, 'the TRI001 code opens its rule page rendered', async () => {
      await page.locator('.markers-panel a', { hasText: 'TRI001' }).first().click();
      await page.locator('.tab[aria-label*="Preview TRI001.md"]').first().waitFor({ timeout: 30_000 });
      const heading = await waitForFrameText(page, 'What it detects', 60_000);
      say(`the preview shows: ${heading.replace(/\s+/g, ' ').slice(0, 120)}`);
    });
    await shot(page, 'rule-page');

    if (PARALLAX) {
      await parallaxSteps(page);
    } else {
      say(`SKIPPED typing into fla's parallax file and Set Launch Command: the real-world corpus is not built`);
    }

    await step(page, 'without triton, each kernel has the Inspect lens saying so; it chooses the interpreter', async () => {
      await openFile(page, FILE);
      // opening compiles nothing (issue 31): the Inspect lens asks for it
      await page.locator('.codelens-decoration a', { hasText: /^Inspect$/ }).first().click({ timeout: 120_000 });
      const lens = page.locator('.codelens-decoration a', { hasText: 'Inspect: needs triton' }).first();
      await lens.waitFor({ timeout: 120_000 });
      say(`lens: ${(await lens.innerText()).slice(0, 200)}`);
      await shot(page, 'inspect-lens');
      await lens.click();
      await expectInterpreterSetting(page);
    });
    await shot(page, 'inspect-lens-chooses-interpreter');
    await page.keyboard.press('Control+W');          // close the settings editor

    await step(page, 'Ctrl+. offers the quick fix and "Fix all Tritonify findings"; fix-all from there fixes the file', async () => {
      await openFile(page, FILE);
      await marker.click();
      await page.keyboard.press('Enter');            // go to the finding in the editor
      await page.waitForTimeout(500);
      await page.locator('.monaco-editor.focused').first().waitFor({ timeout: 15_000 });
      const rowsOf = (title) => page.locator('.action-widget .monaco-list-row, .context-view .monaco-list-row', { hasText: title });
      for (let attempt = 0; attempt < 5; attempt += 1) {
        await page.keyboard.press('Control+.');
        try {
          await rowsOf(FIX_TITLE).first().waitFor({ timeout: 10_000 });
          break;
        } catch {
          await page.keyboard.press('Escape');
          if (attempt === 4) {
            throw new Error(`no quick fix list with "${FIX_TITLE}"`);
          }
        }
      }
      await shot(page, 'quick-fix-menu');
      const fixAll = rowsOf('Fix all Tritonify findings').first();
      await fixAll.waitFor({ timeout: 10_000 });
      await fixAll.click();
      const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
      const shown = Date.now() + 30_000;
      while (!/sigmoid/.test(await lines.innerText()) && Date.now() < shown) {
        await page.waitForTimeout(200);              // the fix-all edit is resolved, then applied
      }
      await page.locator('.editor-group-container.active .monaco-editor').first().click({ position: { x: 600, y: 10 } }).catch(() => undefined);
      await page.keyboard.press('Control+S');
    });

    await step(page, 'the file on disk changed', async () => {
      const deadline = Date.now() + 30_000;
      let after = before;
      let saves = 1;
      while (Date.now() < deadline) {
        after = fs.readFileSync(target, 'utf8');
        if (after.includes('sigmoid')) {
          break;
        }
        await page.waitForTimeout(250);
        if (Date.now() > deadline - 20_000 && saves < 2) {
          saves += 1;
          await page.keyboard.press('Control+S');      // the first save came before the edit
        }
      }
      if (after === before) {
        throw new Error(`${target} was not changed`);
      }
      const added = after.split('\n').filter((line) => !before.includes(line));
      say(`changed lines: ${added.join(' | ').slice(0, 300)}`);
      if (!added.some((line) => line.includes('sigmoid'))) {
        throw new Error('the change does not use the sigmoid identity');
      }
    });

    await step(page, 'the fix keeps the value of the expression', async () => {
      const beforeCopy = path.join(OUT, 'before-fix.py');
      fs.writeFileSync(beforeCopy, before);
      const check = spawnSync(process.env.E2E_PYTHON || 'python3', [path.join(__dirname, 'same_value.py'), beforeCopy, target], { encoding: 'utf8' });
      say((check.stdout + check.stderr).trim());
      if (check.status !== 0) {
        throw new Error('the fix changed what the line computes');
      }
    });
    await shot(page, 'fixed');

    // The editor has no torch here (the server runs on the .vsix's bundled libraries): the click must
    // still start a job through the server and end with a message that says what is missing.
    await step(page, 'Benchmark without a contract says so, with "Write a Benchmark Contract" (clicked: the contract opens)', async () => {
      await clearNotifications(page);
      await page.locator('.codelens-decoration a', { hasText: /^Benchmark$/ }).first().click();
      const toast = await expectToast(page, /no benchmark contract/, ['Write a Benchmark Contract', 'Open Log']);
      await shot(page, 'benchmark-outcome');
      await toast.locator('.monaco-button', { hasText: 'Write a Benchmark Contract' }).first().click();
      await page.locator('.tab[aria-label*="_contract.py"]').first().waitFor({ timeout: 30_000 });
      const contract = target.replace(/\.py$/, '_contract.py');
      const saved = Date.now() + 15_000;
      while (!fs.existsSync(contract) && Date.now() < saved) {
        await page.waitForTimeout(200);
      }
      if (!fs.existsSync(contract)) {
        throw new Error(`${contract} was opened but not written to disk: the next Benchmark would not find it`);
      }
      say(`the contract file was written (${path.basename(contract)}) and opened`);
    });
    await shot(page, 'after-button');

    await step(page, 'Benchmark with a Python lacking torch offers "Choose Interpreter" (clicked: the interpreter setting opens)', async () => {
      await clearNotifications(page);
      await openFile(page, FILE);
      await page.locator('.codelens-decoration a', { hasText: /^Benchmark$/ }).first().click();
      const toast = await expectToast(page, /torch is not installed|No module named/, ['Choose Interpreter', 'Open Log'], 180_000);
      await shot(page, 'benchmark-no-torch');
      await toast.locator('.monaco-button', { hasText: 'Choose Interpreter' }).first().click();
      await expectInterpreterSetting(page);
    });
    await shot(page, 'choose-interpreter');
    await page.keyboard.press('Control+W');

    if (TRITON_PYTHON) {
      await step(page, `with an interpreter that has triton, the Inspect lens opens the SASS in a read-only view`, async () => {
        // as a user does: the user settings (JSON) edited in the editor and saved
        const settings = JSON.parse(fs.readFileSync(SETTINGS, 'utf8'));
        settings['tritonify.interpreter'] = [TRITON_PYTHON];
        await palette(page, 'Preferences: Open User Settings (JSON)');
        // a tab, or (newer VS Code) an editor over the workbench
        const json = page.locator('.monaco-editor .view-lines', { hasText: 'security.workspace.trust.enabled' }).last();
        await json.waitFor({ timeout: 30_000 });
        await json.click();
        await page.keyboard.press('Control+A');
        await page.keyboard.insertText(JSON.stringify(settings));
        await page.keyboard.press('Control+S');
        // closed only once the save reached the disk: closed before it (a loaded machine, 2026-12-04), the editor
        // asks whether to save and its dialog blocks every later click. The text as saved, not parsed: the
        // editor's auto-closing can leave a stray quote and brace after the typed JSON, which VS Code's own
        // settings reader tolerates
        const entry = `"tritonify.interpreter":${JSON.stringify([TRITON_PYTHON])}`;
        const savedBy = Date.now() + 30_000;
        const saved = () => fs.readFileSync(SETTINGS, 'utf8').includes(entry);
        while (!saved() && Date.now() < savedBy) {
          await page.waitForTimeout(200);
        }
        if (!saved()) {
          throw new Error(`the user settings (${SETTINGS}) were not saved within 30 s`);
        }
        await page.keyboard.press('Control+W');
        // the buffer can still read as changed after its save reached the disk (seen in CI, 2026-12-04): the close
        // then asks, and Save (what a user clicks) writes it again; nothing else may stay over the workbench
        const ask = page.locator('.monaco-dialog-box', { hasText: /save the changes/i }).first();
        if (await ask.waitFor({ state: 'visible', timeout: 2_000 }).then(() => true, () => false)) {
          await ask.locator('.monaco-button', { hasText: /^Save$/ }).first().click();
          await ask.waitFor({ state: 'hidden', timeout: 10_000 });
          say('the settings tab asked to save on close: Save');
        }
        if (!saved()) {
          throw new Error(`the user settings (${SETTINGS}) lost the interpreter on close`);
        }
        await page.keyboard.press('Escape');
        say(`tritonify.interpreter set to ${TRITON_PYTHON} (the server restarts, then compiles for sm_90 without a GPU)`);
        await openFile(page, FILE);
        // the restarted server's plain Inspect lens (not the old "Inspect: needs triton" one): a request
        await page.locator('.codelens-decoration a', { hasText: /^Inspect$/ }).first().click({ timeout: 300_000 });
        const lens = page.locator('.codelens-decoration a', { hasText: /sm_90/ }).first();
        await lens.waitFor({ timeout: 300_000 });
        say(`lens: ${(await lens.innerText()).slice(0, 200)}`);
        await shot(page, 'inspect-compiled');
        await lens.click();
        const tab = page.locator('.tab[aria-label*=".sass"]').first();
        await tab.waitFor({ timeout: 60_000 });
        say(`tab: ${await tab.getAttribute('aria-label')}`);
        const view = page.locator('.editor-instance .monaco-editor .view-lines').first();
        await page.waitForTimeout(1000);
        const text = await page.locator('.monaco-editor.focused .view-lines, .editor-group-container.active .monaco-editor .view-lines').first().innerText();
        say(`listing starts: ${text.replace(/\s+/g, ' ').slice(0, 200)}`);
        if (/tritonify-inspect-/.test(text)) {
          throw new Error('the listing names a temporary folder');
        }
        if (!/sm_90|\.text\.|LDC|S2R|EXIT/.test(text)) {
          throw new Error('the view does not show SASS');
        }
        if ((await page.locator('.tab.dirty[aria-label*=".sass"]').count()) > 0) {
          throw new Error('the listing tab is a dirty document');
        }
        await view.click();
        await page.keyboard.type('x');
        await page.locator('.monaco-editor-overlaymessage', { hasText: /read-only|Cannot edit/i }).first().waitFor({ timeout: 10_000 });
        say('typing into the listing: "Cannot edit in read-only editor"');
      });
      await shot(page, 'assembly');
    } else {
      say('SKIPPED the assembly view: no interpreter with triton here (set E2E_TRITON_PYTHON to one)');
    }

    say('PASS');
    return 0;
  } finally {
    await browser.close();
  }
}

main().then((code) => process.exit(code), (error) => {
  console.error(`E2E FAILED: ${error.message}`);
  process.exit(1);
});
