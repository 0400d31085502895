// graphmend in real JupyterLab (jupyterlab-lsp), driven in headless Chromium: the finding's
// underline in a notebook cell, its row in the diagnostics panel, the hover on it, and the
// underline in a plain Python file. (jupyterlab-lsp 5.3 offers no code actions: no quick fix.)
// Usage: node run-e2e.mjs --url http://127.0.0.1:PORT/lab/tree --token T --screenshot OUT.png
//        [--chromium PATH] [--playwright DIR]   (run-e2e.sh starts JupyterLab and calls this)
import { createRequire } from 'node:module';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) => {
  if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
  return pairs;
}, []));
const started = Date.now();
const log = (text) => console.log(`[jupyterlab ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}`);
const fail = (text) => { console.error(`JUPYTERLAB E2E FAILED: ${text}`); process.exit(1); };

const require = createRequire(path.join(path.resolve(args.playwright ?? '.'), 'package.json'));
const { chromium } = require('playwright-core');
const browser = await chromium.launch({ executablePath: args.chromium ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
try {
  await page.goto(`${args.url}/demo.ipynb?token=${args.token}`);
  await page.locator('.jp-Notebook .jp-Cell').first().waitFor({ timeout: 90_000 });
  log('notebook rendered');
  // The squiggle: CodeMirror's lint range on the `if` of the compiled function's cell.
  const underline = page.locator('.jp-Cell .cm-lintRange').first();
  try {
    await underline.waitFor({ timeout: 90_000 });
  } catch {
    fail('no diagnostic underline in a cell within 90 s');
  }
  const underlined = await underline.innerText();
  log(`underlined in a cell: ${JSON.stringify(underlined)}`);
  if (!underlined.includes('x.sum() > 0')) fail(`the underline is not on the tensor test: ${underlined}`);
  // The diagnostics panel lists the finding with its code and one-sentence message.
  await page.locator('.jp-Cell .cm-lintRange').first().click({ button: 'right' });
  const show = page.locator('.lm-Menu-item', { hasText: 'Show diagnostics panel' }).first();
  await show.click({ timeout: 15_000 });
  const row = page.locator('.lsp-diagnostics-listing tbody tr', { hasText: 'GM101' }).first();
  try {
    await row.waitFor({ timeout: 30_000 });
  } catch {
    fail('the diagnostics panel has no GM101 row');
  }
  log(`diagnostics panel: ${(await row.innerText()).replace(/\s+/g, ' ')}`);
  // The hover: jupyterlab-lsp shows it while Control is held over the symbol.
  await page.keyboard.press('Escape');
  const box = await underline.boundingBox();
  await page.mouse.move(box.x + 4, box.y + box.height / 2);
  await page.keyboard.down('Control');
  await page.mouse.move(box.x + 8, box.y + box.height / 2);
  const hover = page.locator('.lsp-hover', { hasText: 'GM101' }).first();
  try {
    await hover.waitFor({ timeout: 30_000 });
  } catch {
    fail('no graphmend hover on the underlined test');
  }
  const hoverText = (await hover.innerText()).replace(/\s+/g, ' ');
  log(`hover: ${hoverText}`);
  if (!hoverText.startsWith('Fix (') || !hoverText.includes('torch.where')) {
    fail(`the hover does not lead with the fix: ${hoverText}`);
  }
  await page.screenshot({ path: args.screenshot });
  await page.keyboard.up('Control');
  log(`wrote ${args.screenshot}`);
  // A plain Python file in JupyterLab's editor gets its diagnostics too.
  await page.goto(`${args.url}/figure1.py?token=${args.token}`);
  const inFile = page.locator('.jp-FileEditor .cm-lintRange').first();
  try {
    await inFile.waitFor({ timeout: 90_000 });
  } catch {
    fail('no diagnostic underline in figure1.py within 90 s');
  }
  log(`underlined in figure1.py: ${JSON.stringify(await inFile.innerText())}`);
  log('PASS');
} finally {
  await browser.close();
}
