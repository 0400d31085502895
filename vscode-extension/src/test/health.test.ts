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
