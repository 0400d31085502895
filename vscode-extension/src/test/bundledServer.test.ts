import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const root = path.resolve(__dirname, "..", "..");
const script = path.join(root, "bundled", "tool", "graphmend_lsp.py");
const bundled = existsSync(path.join(root, "bundled", "libs", "graphmend"));

/** LSP over stdio: Content-Length framed JSON-RPC. */
function frame(message: object): string {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

// The .vsix must work with no `pip install`: the bundled server, run by a Python that has no
// site-packages at all (`-I -S`), publishes the findings of the paper's Figure 1.
test("the bundled server runs on a bare Python", { skip: bundled ? false : "no bundled/libs: run `npm run package` first" }, async () => {
  const server = spawn("python3", ["-I", "-S", script, "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  server.stderr.on("data", (chunk) => (stderr += chunk));
  const figure = path.join(root, "..", "examples", "figure1.py");
  const diagnostics = new Promise<{ code: string; data?: { no_fix?: string } }[]>((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    server.stdout.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const header = buffer.indexOf("\r\n\r\n");
        if (header < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, header).toString())?.[1]);
        if (buffer.length < header + 4 + length) return;
        const message = JSON.parse(buffer.subarray(header + 4, header + 4 + length).toString());
        buffer = buffer.subarray(header + 4 + length);
        if (message.method === "textDocument/publishDiagnostics" && message.params.diagnostics.length) {
          resolve(message.params.diagnostics);
        }
      }
    });
    server.on("exit", (code) => reject(new Error(`the server exited with ${code}: ${stderr}`)));
  });
  server.stdin.write(frame({ id: 1, method: "initialize", params: { processId: null, rootUri: null, capabilities: {} } }));
  server.stdin.write(frame({ method: "initialized", params: {} }));
  server.stdin.write(frame({
    method: "textDocument/didOpen",
    params: { textDocument: { uri: pathToFileURL(figure).href, languageId: "python", version: 1, text: readFileSync(figure, "utf8") } },
  }));
  const timeout = setTimeout(() => server.kill(), 60_000);
  try {
    const found = await diagnostics;
    assert.deepEqual(found.map((d) => d.code), ["GM101"]);
    // LibCST is compiled, so not bundled: the predicated fix says what it needs.
    assert.match(found[0].data?.no_fix ?? "", /pip install libcst/);
  } finally {
    clearTimeout(timeout);
    server.kill();
  }
});
