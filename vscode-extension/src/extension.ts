import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { GraphmendSettings, serverOptions } from "./options";
import { INSTALL_HINT, ServerCommand, probeArgs, serverCandidates } from "./serverCommand";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let extensionPath: string;

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

function setStatus(text: string, tooltip: string): void {
  status.text = text;
  status.tooltip = tooltip;
  status.show();
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
  setStatus("$(sync~spin) graphmend", "Starting graphmend-lsp");
  const server = await findServer();
  if (!server) {
    setStatus("$(error) graphmend", INSTALL_HINT);
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
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  client = new LanguageClient("graphmend", "graphmend", run, clientOptions);
  client.onDidChangeState((event) => {
    if (event.newState === State.Running) setStatus("$(check) graphmend", `graphmend-lsp (${server.source})`);
    if (event.newState === State.Stopped) setStatus("$(circle-slash) graphmend", "graphmend-lsp stopped");
  });
  try {
    await client.start();
  } catch (error) {
    setStatus("$(error) graphmend", String(error));
    output.appendLine(`graphmend: the server failed to start: ${error}`);
    void vscode.window.showErrorMessage(INSTALL_HINT, "Show Output").then((choice) => choice && output.show());
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
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

/** What the server's `graphmend.applyAllFixes` answers (commands.py, `FixAllReport`). */
interface FixAllAnswer {
  applied: number;
  unsafeAvailable: number;
  withoutFix: number;
  hazards: string[];
  message: string;
}

const APPLY_UNSAFE = "Apply Unsafe Fixes…";

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

/** The unsafe fixes' hazards, each fix's title naming what it may change, in a modal dialog. */
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
  const choice = await vscode.window.showWarningMessage(
    `graphmend: apply ${preview.hazards.length} unsafe fix${preview.hazards.length === 1 ? "" : "es"}?`,
    { modal: true, detail: preview.hazards.join("\n\n") },
    "Apply",
  );
  return choice === "Apply";
}
