import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  ErrorHandler,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { ServerHealth, troubleIn } from "./health";
import { GraphmendSettings, serverOptions } from "./options";
import { INSTALL_HINT, ServerCommand, probeArgs, serverCandidates } from "./serverCommand";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let extensionPath: string;
const health = new ServerHealth();
let restarts: ErrorHandler; // the current client's default handler: up to 4 restarts in 3 minutes

function settings(): GraphmendSettings {
  const config = vscode.workspace.getConfiguration("graphmend");
  return {
    select: config.get<string[]>("select", []),
    ignore: config.get<string[]>("ignore", []),
    run: config.get<"onType" | "onSave">("run", "onType"),
    moduleForwardIsCompiled: config.get<boolean | null>("moduleForwardIsCompiled", null),
    maxFileSizeKb: config.get<number | null>("maxFileSizeKb", null),
    assumeTraining: config.get<boolean | null>("assumeTraining", null),
    assumeDtypes: config.get<string[]>("assumeDtypes", []),
    layerSkip: config.get<"where" | "cond" | null>("layerSkip", null),
    cudaGraphs: config.get<"auto" | "always" | "never" | null>("cudaGraphs", null),
    torchVersion: config.get<string | null>("torchVersion", null),
    moduleBases: config.get<string[]>("moduleBases", []),
    index: config.get<boolean>("index", true),
    closedFiles: config.get<boolean>("closedFiles", false),
  };
}

function showHealth(): void {
  const { text, tooltip } = health.view;
  status.text = text;
  status.tooltip = tooltip;
  status.show();
}

/** The status item shows the trouble; the output opens on the first one only. */
function troubled(start: number, what: string): void {
  if (health.troubled(start, what)) output.show(true);
  showHealth();
}

/** The output channel as the client writes to it (log messages, the server's stderr), read for trouble. */
function watchedOutput(start: number): vscode.OutputChannel {
  const read = (text: string): void => {
    const what = troubleIn(text);
    if (what) troubled(start, what);
  };
  return Object.assign(Object.create(output) as vscode.OutputChannel, {
    append(text: string) {
      output.append(text);
      read(text);
    },
    appendLine(text: string) {
      output.appendLine(text);
      read(text);
    },
  });
}

async function pythonExtensionInterpreter(): Promise<string[] | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const environment = api?.environments?.getActiveEnvironmentPath?.();
    return environment?.path ? [environment.path] : undefined;
  } catch {
    return undefined;
  }
}

function starts(candidate: ServerCommand): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(candidate.command, probeArgs(candidate), { timeout: 15000 }, (error) => resolve(!error));
  });
}

/** The server bundled in the package (`npm run bundle-python`), if this build has one. */
function bundledScript(): string | undefined {
  const script = path.join(extensionPath, "bundled", "tool", "graphmend_lsp.py");
  return fs.existsSync(path.join(extensionPath, "bundled", "libs", "graphmend")) ? script : undefined;
}

async function findServer(): Promise<ServerCommand | undefined> {
  const config = vscode.workspace.getConfiguration("graphmend");
  const candidates = serverCandidates({
    path: config.get<string[]>("path", []),
    interpreter: config.get<string[]>("interpreter", []),
    pythonExtension: vscode.workspace.isTrusted ? await pythonExtensionInterpreter() : undefined,
    trusted: vscode.workspace.isTrusted,
    bundledScript: bundledScript(),
  });
  for (const candidate of candidates) {
    if (await starts(candidate)) return candidate;
    output.appendLine(`graphmend: ${candidate.source}: \`${candidate.command} ${probeArgs(candidate).join(" ")}\` did not start`);
  }
  return undefined;
}

async function start(): Promise<void> {
  const started = health.start();
  showHealth();
  const server = await findServer();
  if (!server) {
    health.changed(started, "stopped", "");
    health.troubled(started, INSTALL_HINT); // the message below offers the output
    showHealth();
    const choice = await vscode.window.showErrorMessage(INSTALL_HINT, "Show Output");
    if (choice) output.show();
    return;
  }
  output.appendLine(`graphmend: starting ${server.command} ${server.args.join(" ")} (from ${server.source})`);
  const run: ServerOptions = { command: server.command, args: server.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      // Python cells of Jupyter notebooks: the server syncs them as notebook documents (LSP 3.17),
      // and this selector lets code actions and hovers be asked for in the cells.
      { scheme: "vscode-notebook-cell", language: "python" },
    ],
    initializationOptions: serverOptions(settings()),
    synchronize: { configurationSection: "graphmend" },
    outputChannel: watchedOutput(started),
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    errorHandler: watchedExits(started),
  };
  client = new LanguageClient("graphmend", "graphmend", run, clientOptions);
  restarts = client.createDefaultErrorHandler();
  const states = { [State.Starting]: "starting", [State.Running]: "running", [State.Stopped]: "stopped" } as const;
  client.onDidChangeState((event) => {
    health.changed(started, states[event.newState], server.source);
    showHealth();
  });
  try {
    await client.start();
  } catch (error) {
    health.troubled(started, String(error));
    showHealth();
    output.appendLine(`graphmend: the server failed to start: ${error}`);
    void vscode.window.showErrorMessage(INSTALL_HINT, "Show Output").then((choice) => choice && output.show());
  }
}

/** vscode-languageclient's own error handling, with an exit or a broken connection as trouble. */
function watchedExits(start: number): ErrorHandler {
  return {
    error: (error, message, count) => {
      troubled(start, `the connection to graphmend-lsp failed: ${error.message}`);
      return restarts.error(error, message, count);
    },
    closed: () => {
      troubled(start, "graphmend-lsp exited unexpectedly");
      return restarts.closed();
    },
  };
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  health.stop();
  if (running) await running.stop();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  output = vscode.window.createOutputChannel("graphmend");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  status.command = "graphmend.showOutput";
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("graphmend.showOutput", () => output.show()),
    vscode.commands.registerCommand("graphmend.restart", async () => {
      await stop();
      await start();
    }),
    vscode.commands.registerCommand("graphmend.fixAll", () => fixAll(false)),
    vscode.commands.registerCommand("graphmend.fixAllUnsafe", () => fixAll(true)),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("graphmend.path") || event.affectsConfiguration("graphmend.interpreter")) {
        await stop();
        await start();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await stop();
      await start();
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** What the server's `graphmend.applyAllFixes` and `graphmend.unsafeFixes` answer (commands.py, `FixAllReport`). */
interface FixAllAnswer {
  applied: number;
  unsafeAvailable: number;
  withoutFix: number;
  /** Each unsafe fix in one line, with its hazards in full. */
  hazards: string[];
  /** The unsafe fixes for a dialog: a line each, then what they may change, each hazard once. */
  detail?: string;
  message: string;
}

const APPLY_UNSAFE = "Apply Unsafe Fixes…";
const APPLY = "Apply";
const SHOW_PROBLEMS = "Show Problems";

/**
 * Fix All says what it did and what it left ("applied 0 safe fixes; 5 unsafe fixes available"), with a
 * button for the unsafe fixes; those are applied only after a modal dialog has listed their hazards.
 */
async function fixAll(unsafe: boolean): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) return;
  const uri = editor.document.uri.toString();
  if (unsafe && !(await confirmUnsafe(uri))) return;
  const answer: FixAllAnswer = await client.sendRequest("workspace/executeCommand", {
    command: "graphmend.applyAllFixes",
    arguments: [uri, unsafe, false],
  });
  if (!answer) return;
  const choice = answer.unsafeAvailable
    ? await vscode.window.showInformationMessage(answer.message, APPLY_UNSAFE)
    : await vscode.window.showInformationMessage(answer.message);
  if (choice === APPLY_UNSAFE) await fixAll(true);
}

/**
 * The unsafe fixes and what they may change, in a modal dialog. Its default button (Enter) is VS Code's
 * first non-close item, so that is Show Problems, which applies nothing (the findings, each with its
 * own quick fix); Apply is second, and Escape is VS Code's Cancel.
 */
async function confirmUnsafe(uri: string): Promise<boolean> {
  if (!client) return false;
  const preview: FixAllAnswer = await client.sendRequest("workspace/executeCommand", {
    command: "graphmend.unsafeFixes",
    arguments: [uri],
  });
  if (!preview || preview.hazards.length === 0) {
    vscode.window.showInformationMessage("graphmend: no unsafe fix to apply");
    return false;
  }
  const count = preview.hazards.length;
  const choice = await vscode.window.showWarningMessage(
    `graphmend: apply ${count} unsafe fix${count === 1 ? "" : "es"}?`,
    { modal: true, detail: preview.detail ?? preview.hazards.join("\n") }, // a server without `detail`: its list
    SHOW_PROBLEMS,
    APPLY,
  );
  if (choice === SHOW_PROBLEMS) await vscode.commands.executeCommand("workbench.action.problems.focus");
  return choice === APPLY;
}
