import { strict as assert } from "node:assert";
import { test } from "node:test";
import { probeArgs, serverCandidates } from "../serverCommand";
import { serverOptions } from "../options";

test("candidates are tried in the documented order", () => {
  const candidates = serverCandidates({
    path: ["/opt/graphmend-lsp"],
    interpreter: ["/venv/bin/python"],
    pythonExtension: ["/usr/bin/python3"],
    trusted: true,
  });
  assert.deepEqual(
    candidates.map((c) => [c.source, c.command, ...c.args]),
    [
      ["graphmend.path", "/opt/graphmend-lsp", "--stdio"],
      ["graphmend.interpreter", "/venv/bin/python", "-m", "graphmend.lsp", "--stdio"],
      ["Python extension", "/usr/bin/python3", "-m", "graphmend.lsp", "--stdio"],
      ["PATH", "graphmend-lsp", "--stdio"],
    ],
  );
});

test("an untrusted workspace never runs a workspace interpreter", () => {
  const candidates = serverCandidates({ path: [], interpreter: ["./venv/bin/python"], pythonExtension: ["/x/python"], trusted: false });
  assert.deepEqual(candidates.map((c) => c.source), ["PATH"]);
});

test("empty settings fall through to PATH; blank parts are dropped", () => {
  const candidates = serverCandidates({ path: ["", " "], interpreter: [], trusted: true });
  assert.deepEqual(candidates.map((c) => c.command), ["graphmend-lsp"]);
});

test("the probe asks for the version instead of starting the stdio server", () => {
  const [interpreter] = serverCandidates({ path: [], interpreter: ["py", "-3.11"], trusted: true });
  assert.deepEqual(probeArgs(interpreter), ["-3.11", "-m", "graphmend.lsp", "--version"]);
});

test("server options carry only what the user set", () => {
  const defaults = { maxFileSizeKb: null, assumeTraining: null, assumeDtypes: [], layerSkip: null, cudaGraphs: null, torchVersion: null, moduleBases: [], applyProvedFixes: null, index: true, closedFiles: false };
  assert.deepEqual(serverOptions({ select: [], ignore: [], run: "onType", moduleForwardIsCompiled: null, ...defaults }), {
    graphmend: { run: "onType", index: true, closedFiles: false },
  });
  assert.deepEqual(
    serverOptions({
      select: ["GM1"], ignore: ["GM3"], run: "onSave", moduleForwardIsCompiled: false, maxFileSizeKb: 0,
      assumeTraining: false, assumeDtypes: ["bfloat16"], layerSkip: "cond", cudaGraphs: "always", index: false, closedFiles: true,
      torchVersion: "2.10", moduleBases: ["mylib.layers.Block"], applyProvedFixes: true,
    }),
    {
      graphmend: {
        run: "onSave", index: false, closedFiles: true, select: ["GM1"], ignore: ["GM3"], moduleForwardIsCompiled: false,
        maxFileSizeKb: 0, assumeTraining: false, assumeDtypes: ["bfloat16"], layerSkip: "cond", cudaGraphs: "always",
        torchVersion: "2.10", moduleBases: ["mylib.layers.Block"], applyProvedFixes: true,
      },
    },
  );
});

test("the bundled server comes last, run by the workspace's Python, then python3, then python", () => {
  const candidates = serverCandidates({
    path: [],
    interpreter: [],
    pythonExtension: ["/venv/bin/python"],
    trusted: true,
    bundledScript: "/ext/bundled/tool/graphmend_lsp.py",
  });
  assert.deepEqual(
    candidates.map((c) => [c.source, c.command, ...c.args]),
    [
      ["Python extension", "/venv/bin/python", "-m", "graphmend.lsp", "--stdio"],
      ["PATH", "graphmend-lsp", "--stdio"],
      ["bundled", "/venv/bin/python", "/ext/bundled/tool/graphmend_lsp.py", "--stdio"],
      ["bundled", "python3", "/ext/bundled/tool/graphmend_lsp.py", "--stdio"],
      ["bundled", "python", "/ext/bundled/tool/graphmend_lsp.py", "--stdio"],
    ],
  );
  const untrusted = serverCandidates({ path: [], interpreter: [], pythonExtension: ["/venv/bin/python"], trusted: false, bundledScript: "/s.py" });
  assert.deepEqual(untrusted.map((c) => c.command), ["graphmend-lsp", "python3", "python"]);
});
