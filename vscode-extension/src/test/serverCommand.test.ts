import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  INSTALL_HINT,
  Probe,
  ServerCommand,
  Tried,
  chooseServer,
  describeTry,
  noServerMessage,
  probe,
  probeArgs,
  serverCandidates,
} from "../serverCommand";
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
  const defaults = { maxFileSizeKb: null, assumeTraining: null, assumeDtypes: [], layerSkip: null, cudaGraphs: null, torchVersion: null, moduleBases: [], index: true, closedFiles: false };
  assert.deepEqual(serverOptions({ select: [], ignore: [], run: "onType", moduleForwardIsCompiled: null, ...defaults }), {
    graphmend: { run: "onType", index: true, closedFiles: false },
  });
  assert.deepEqual(
    serverOptions({
      select: ["GM1"], ignore: ["GM3"], run: "onSave", moduleForwardIsCompiled: false, maxFileSizeKb: 0,
      assumeTraining: false, assumeDtypes: ["bfloat16"], layerSkip: "cond", cudaGraphs: "always", index: false, closedFiles: true,
      torchVersion: "2.10", moduleBases: ["mylib.layers.Block"],
    }),
    {
      graphmend: {
        run: "onSave", index: false, closedFiles: true, select: ["GM1"], ignore: ["GM3"], moduleForwardIsCompiled: false,
        maxFileSizeKb: 0, assumeTraining: false, assumeDtypes: ["bfloat16"], layerSkip: "cond", cudaGraphs: "always",
        torchVersion: "2.10", moduleBases: ["mylib.layers.Block"],
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

/** A candidate run by sh: `sh -c SCRIPT --version` (the probe's `--version` is sh's $0). */
function shell(script: string): ServerCommand {
  return { command: "sh", args: ["-c", script, "--stdio"], source: "graphmend.path" };
}

test("the probe tells a missing or failing command from one that gave no answer", async () => {
  assert.deepEqual(await probe(shell("exit 0")), { outcome: "started" });
  assert.deepEqual(await probe({ command: "/nonexistent/graphmend-lsp", args: ["--stdio"], source: "PATH" }), { outcome: "missing" });
  assert.deepEqual(await probe(shell("echo 'graphmend needs Python 3.10 or newer; this is 3.8.10' >&2; exit 1")), {
    outcome: "failed",
    detail: "exit code 1: graphmend needs Python 3.10 or newer; this is 3.8.10",
  });
  // A busy machine: Python's start takes longer than the probe may.
  assert.deepEqual(await probe(shell("exec sleep 5"), 200), { outcome: "timedOut", afterMs: 200 });
  // Killed by someone else (the OOM killer, a stop racing the start).
  assert.deepEqual(await probe(shell("kill -KILL $$")), { outcome: "interrupted", signal: "SIGKILL" });
});

test("candidates are probed in order; the command that ran the server is taken without a probe", async () => {
  const [path, interpreter, onPath] = serverCandidates({ path: ["/opt/graphmend-lsp"], interpreter: ["/venv/bin/python"], trusted: true });
  const probed: string[] = [];
  const outcomes = new Map<string, Probe>([
    ["/opt/graphmend-lsp", { outcome: "missing" }],
    ["/venv/bin/python", { outcome: "timedOut", afterMs: 15_000 }],
    ["graphmend-lsp", { outcome: "started" }],
  ]);
  const run = async (candidate: ServerCommand): Promise<Probe> => {
    probed.push(candidate.command);
    return outcomes.get(candidate.command)!;
  };
  const found = await chooseServer([path, interpreter, onPath], run);
  assert.equal(found.server, onPath);
  assert.deepEqual(probed, ["/opt/graphmend-lsp", "/venv/bin/python", "graphmend-lsp"]);
  assert.deepEqual(found.tried.map(describeTry), [
    "`/opt/graphmend-lsp --version` was not found",
    "`/venv/bin/python -m graphmend.lsp --version` did not answer within 15 s",
  ]);
  // The interpreter ran the server a moment ago: under load its probe would time out, so it is not probed.
  probed.length = 0;
  const known = { ...interpreter, args: [...interpreter.args] }; // from the candidates of an earlier start
  const again = await chooseServer([path, interpreter, onPath], run, known);
  assert.equal(again.server, interpreter);
  assert.deepEqual(probed, ["/opt/graphmend-lsp"]);
  // Not among the candidates any more (a changed setting): everything is probed.
  probed.length = 0;
  await chooseServer([path, onPath], run, known);
  assert.deepEqual(probed, ["/opt/graphmend-lsp", "graphmend-lsp"]);
});

test("'no Python 3.10+ was found' only when every probe showed its command cannot run the server", () => {
  const bundledScript = "/ext/bundled/tool/graphmend_lsp.py";
  const [onPath, python3, python] = serverCandidates({ path: [], interpreter: [], trusted: true, bundledScript });
  const none: Tried[] = [
    { candidate: onPath, probe: { outcome: "missing" } },
    { candidate: python3, probe: { outcome: "failed", detail: "exit code 1: graphmend needs Python 3.10 or newer; this is 3.8.10" } },
    { candidate: python, probe: { outcome: "missing" } },
  ];
  assert.equal(noServerMessage(none), INSTALL_HINT);
  const busy: Tried[] = [none[0], { candidate: python3, probe: { outcome: "timedOut", afterMs: 15_000 } }, none[2]];
  const message = noServerMessage(busy);
  assert.equal(
    message,
    "graphmend-lsp could not be started: `python3 /ext/bundled/tool/graphmend_lsp.py --version` did not answer within 15 s, " +
      "so whether a Python 3.10+ can run it is not known (a busy machine can cause this). graphmend: Restart Server tries again.",
  );
  assert.doesNotMatch(message, /no Python 3\.10\+ was found/);
  const killed: Tried[] = [none[0], { candidate: python3, probe: { outcome: "interrupted", signal: "SIGKILL" } }];
  assert.match(noServerMessage(killed), /`python3 \/ext\/bundled\/tool\/graphmend_lsp\.py --version` was interrupted \(SIGKILL\), so whether/);
});
