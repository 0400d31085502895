import { strict as assert } from "node:assert";
import { test } from "node:test";
import { ServerHealth, troubleIn } from "../health";

test("trouble in the output: Error lines and Python tracebacks, nothing else", () => {
  assert.equal(
    troubleIn("[Error - 10:01:02 AM] graphmend internal error: KeyError: 'x'"),
    "graphmend internal error: KeyError: 'x'",
  );
  // The unguarded bundled script (issue 39): a spawned worker's second server answered a request.
  assert.equal(
    troubleIn("[Error - 2:44:40 AM] Request textDocument/codeAction failed.\n  Message: the server is not initialized yet"),
    "Request textDocument/codeAction failed.",
  );
  const stderr =
    "graphmend-lsp internal error\nTraceback (most recent call last):\n  File \"/x/io_.py\", line 92, in run\n" +
    "    request = json.loads(body)\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n";
  assert.equal(troubleIn(stderr), "a Python traceback: json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)");
  assert.equal(troubleIn("Traceback (most recent call last):\n"), "a Python traceback");
  for (const fine of [
    "[Info  - 10:01:02 AM] graphmend: indexed 3 files in 0.4 s",
    "[Warn  - 10:01:02 AM] graphmend: file watchers not registered",
    "graphmend: starting python3 /ext/bundled/tool/graphmend_lsp.py --stdio (from bundled)",
    "an Error in the middle of a line",
  ]) {
    assert.equal(troubleIn(fine), undefined, fine);
  }
  assert.equal(troubleIn(`[Error - 1 AM] ${"x".repeat(300)}`)?.length, 200);
});

test("the status item: starting, running, a clean stop", () => {
  const health = new ServerHealth();
  const first = health.start();
  assert.deepEqual(health.view, { text: "$(sync~spin) graphmend", tooltip: "Starting graphmend-lsp" });
  health.changed(first, "running", "bundled");
  assert.deepEqual(health.view, { text: "$(check) graphmend", tooltip: "graphmend-lsp (bundled)" });
  health.changed(first, "stopped", "bundled");
  assert.deepEqual(health.view, { text: "$(circle-slash) graphmend", tooltip: "graphmend-lsp (bundled) stopped" });
  // Restart Server: the stopped client logs "Server process exited with code 0" after stop() resolved.
  health.stop();
  const second = health.start();
  health.changed(second, "running", "PATH");
  assert.equal(health.troubled(first, "Server process exited with code 0."), false);
  health.changed(first, "stopped", "bundled");
  assert.deepEqual(health.view, { text: "$(check) graphmend", tooltip: "graphmend-lsp (PATH)" });
});

test("trouble shows until the user starts the server again, and opens the output once", () => {
  const health = new ServerHealth();
  const first = health.start();
  health.changed(first, "running", "bundled");
  assert.equal(health.troubled(first, "graphmend internal error: KeyError: 'x'"), true);
  assert.equal(health.troubled(first, "graphmend-lsp exited unexpectedly"), false);
  assert.deepEqual(health.view, {
    text: "$(error) graphmend",
    tooltip:
      "graphmend internal error: KeyError: 'x'\ngraphmend-lsp (bundled) is running. Click to show the output; " +
      "graphmend: Restart Server clears this.",
  });
  // vscode-languageclient restarts a server that exited: the item keeps the trouble, and says it runs again.
  health.changed(first, "stopped", "bundled");
  assert.match(health.view.tooltip, /is not running/);
  health.changed(first, "starting", "bundled");
  health.changed(first, "running", "bundled");
  assert.equal(health.view.text, "$(error) graphmend");
  assert.match(health.view.tooltip, /is running/);
  health.stop();
  const second = health.start();
  health.changed(second, "running", "bundled");
  assert.equal(health.view.text, "$(check) graphmend");
  assert.equal(health.troubled(second, "Server process exited with signal SIGKILL."), true);
});

const CLICK = ". Click to show the output; graphmend: Restart Server clears this.";

test("a server killed by a signal: the tooltip says it exited and whether it is restarted, never that it runs", () => {
  const health = new ServerHealth();
  const first = health.start();
  health.changed(first, "running", "bundled");
  const tooltips: string[] = [];
  const seen = (): void => void tooltips.push(health.view.tooltip);
  // The process's exit is seen while the client still thinks it runs; then its error handler decides.
  assert.equal(health.exited(first, "signal SIGKILL"), true); // the output opens, once
  seen();
  assert.deepEqual(health.view, { text: "$(error) graphmend", tooltip: `graphmend-lsp (bundled) exited with signal SIGKILL${CLICK}` });
  assert.equal(health.closed(first, true), false);
  seen();
  assert.equal(health.view.tooltip, `graphmend-lsp (bundled) exited with signal SIGKILL; it is being restarted${CLICK}`);
  // vscode-languageclient restarts it: stopped (its initial state), starting, running.
  for (const state of ["stopped", "starting"] as const) {
    health.changed(first, state, "bundled");
    seen();
    assert.equal(health.view.tooltip, `graphmend-lsp (bundled) exited with signal SIGKILL; it is being restarted${CLICK}`);
  }
  health.changed(first, "running", "bundled");
  seen();
  assert.deepEqual(health.view, {
    text: "$(error) graphmend",
    tooltip: `graphmend-lsp (bundled) exited with signal SIGKILL and was restarted${CLICK}`,
  });
  for (const tooltip of tooltips) assert.doesNotMatch(tooltip, /is running|is starting/);
  // The restarted server exits too, and the client's handler says it closed before the exit is logged.
  health.closed(first, true);
  assert.match(health.view.tooltip, /^graphmend-lsp \(bundled\) exited; it is being restarted\./);
  health.exited(first, "code 1");
  assert.match(health.view.tooltip, /^graphmend-lsp \(bundled\) exited with code 1; it is being restarted\./);
  // Restart Server clears it; the stopped client's own exit is not trouble.
  health.stop();
  const second = health.start();
  assert.equal(health.exited(first, "code 0"), false);
  assert.equal(health.closed(first, false), false);
  health.changed(second, "running", "bundled");
  assert.deepEqual(health.view, { text: "$(check) graphmend", tooltip: "graphmend-lsp (bundled)" });
});

test("an exit that is not restarted, or whose restart fails, says so", () => {
  const health = new ServerHealth();
  const first = health.start();
  health.changed(first, "running", "PATH");
  health.exited(first, "signal SIGSEGV");
  health.closed(first, false); // the fifth exit in 3 minutes
  health.changed(first, "stopped", "PATH");
  assert.equal(
    health.view.tooltip,
    `graphmend-lsp (PATH) exited with signal SIGSEGV and was not restarted (it exited 5 times within 3 minutes)${CLICK}`,
  );
  const second = health.start();
  health.changed(second, "running", "PATH");
  health.exited(second, "code 1");
  health.closed(second, true);
  health.changed(second, "stopped", "PATH");
  health.changed(second, "starting", "PATH");
  health.changed(second, "stopped", "PATH");
  assert.equal(health.view.tooltip, `graphmend-lsp (PATH) exited with code 1; restarting it failed${CLICK}`);
});

test("an internal error, then an exit: both are told, the error first", () => {
  const health = new ServerHealth();
  const first = health.start();
  health.changed(first, "running", "bundled");
  assert.equal(health.troubled(first, "graphmend internal error: KeyError: 'x'"), true);
  assert.equal(health.exited(first, "signal SIGKILL"), false); // the output opened already
  health.closed(first, true);
  assert.equal(
    health.view.tooltip,
    `graphmend internal error: KeyError: 'x'\ngraphmend-lsp (bundled) exited with signal SIGKILL; it is being restarted${CLICK}`,
  );
});
