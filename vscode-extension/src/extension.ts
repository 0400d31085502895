import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorHandler,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { ServerHealth, troubleIn } from "./health";
import { GraphmendSettings, serverOptions } from "./options";
import { Restarts, retire, within } from "./restarts";
import { RunStatus, runView, splitArguments } from "./runs";
import { ServerCommand, Tried, chooseServer, describeTry, noServerMessage, probe, serverCandidates } from "./serverCommand";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let runItem: vscode.StatusBarItem; // the newest recorded run: "graphmend run: 5 min ago · 2 stale"
let runStatus: RunStatus | null = null;
let runRefresh: NodeJS.Timeout | undefined;
let workspaceState: vscode.Memento;
let extensionPath: string;
const health = new ServerHealth();
let ran: ServerCommand | undefined; // the command of the last server that ran: restarts take it without a probe
const restarts = new Restarts(async () => {
  await stop();
  await start();
});
const STATES = { [State.Starting]: "starting", [State.Running]: "running", [State.Stopped]: "stopped" } as const;
const processes = new WeakMap<LanguageClient, ChildProcess>(); // each client's server process, the newest

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

/** The server bundled in the package (`npm run bundle-python`), if this build has one. */
function bundledScript(): string | undefined {
  const script = path.join(extensionPath, "bundled", "tool", "graphmend_lsp.py");
  return fs.existsSync(path.join(extensionPath, "bundled", "libs", "graphmend")) ? script : undefined;
}

/** The first candidate that starts; the output says how each one before it failed. */
async function findServer(): Promise<{ server?: ServerCommand; tried: Tried[] }> {
  const config = vscode.workspace.getConfiguration("graphmend");
  const candidates = serverCandidates({
    path: config.get<string[]>("path", []),
    interpreter: config.get<string[]>("interpreter", []),
    pythonExtension: vscode.workspace.isTrusted ? await pythonExtensionInterpreter() : undefined,
    trusted: vscode.workspace.isTrusted,
    bundledScript: bundledScript(),
  });
  const found = await chooseServer(candidates, probe, ran);
  for (const attempt of found.tried) output.appendLine(`graphmend: ${attempt.candidate.source}: ${describeTry(attempt)}`);
  return found;
}

/**
 * The status item, the output and a message say that the server could not be started. The message is
 * not awaited: a restart that waited for it to be dismissed would hold up the next one.
 */
function notStarted(started: number, message: string): void {
  output.appendLine(`graphmend: ${message}`);
  health.troubled(started, message); // the message offers the output
  showHealth();
  void vscode.window.showErrorMessage(message, "Show Output").then((choice) => choice && output.show());
}

async function start(): Promise<void> {
  const started = health.start();
  showHealth();
  const { server, tried } = await findServer();
  if (!server) {
    health.changed(started, "stopped", "");
    notStarted(started, noServerMessage(tried));
    return;
  }
  output.appendLine(`graphmend: starting ${server.command} ${server.args.join(" ")} (from ${server.source})`);
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
    errorHandler: watchedExits(started, () => next),
  };
  const run = spawner(server, started, (child) => processes.set(next, child));
  const next = new LanguageClient("graphmend", "graphmend", run, clientOptions);
  client = next;
  next.onDidChangeState((event) => {
    if (event.newState === State.Running) ran = server;
    health.changed(started, STATES[event.newState], server.source);
    showHealth();
    refreshRun(0);
  });
  const starting = next.start().catch((error) => {
    if (client !== next) return; // stopped meanwhile by a later restart
    ran = undefined; // the next start probes every candidate again
    const command = `${server.command} ${server.args.join(" ")}`;
    notStarted(started, `graphmend-lsp could not be started: \`${command}\` (from ${server.source}) failed: ${error}`);
  });
  // Restart Server pressed while the server starts joins this restart; a server that hangs holds up none for long.
  await within(starting, 60_000);
}

/**
 * Starts the server's process, here rather than in vscode-languageclient (which calls this again for
 * each restart of its own): the client's kill of a server that does not stop in time runs a script
 * that the bundle leaves out, so such a server ran on beside the next one, while here `stop` can end
 * it. Its exit, with the code or signal, goes to the status item.
 */
function spawner(server: ServerCommand, started: number, spawned: (child: ChildProcess) => void): ServerOptions {
  return async () => {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri; // the working directory the client would give it
    const cwd = folder?.scheme === "file" && fs.existsSync(folder.fsPath) ? folder.fsPath : undefined;
    const child = spawn(server.command, server.args, { cwd });
    child.on("error", (error) => output.appendLine(`graphmend: graphmend-lsp: ${error.message}`));
    await new Promise((resolve, reject) => child.once("spawn", resolve).once("error", reject));
    spawned(child);
    child.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      output.appendLine(`graphmend: graphmend-lsp (pid ${child.pid}) exited with ${how}`);
      if (health.exited(started, how)) output.show(true);
      showHealth();
    });
    return child;
  };
}

/** Ends a server process that did not stop when asked: SIGTERM (the server exits at once), then SIGKILL. */
function end(child: ChildProcess | undefined): void {
  const running = (): boolean => !!child && child.exitCode === null && child.signalCode === null;
  if (!running()) return;
  child?.kill("SIGTERM");
  setTimeout(() => running() && child?.kill("SIGKILL"), 2_000);
}

/**
 * vscode-languageclient's own error handling (up to 4 restarts in 3 minutes), with an exit or a broken
 * connection as trouble. A client that is no longer `client` restarts nothing: Restart Server is
 * replacing it.
 */
function watchedExits(start: number, own: () => LanguageClient): ErrorHandler {
  let defaults: ErrorHandler | undefined;
  const handler = (): ErrorHandler => (defaults ??= own().createDefaultErrorHandler());
  return {
    error: (error, message, count) => {
      troubled(start, `the connection to graphmend-lsp failed: ${error.message}`);
      return handler().error(error, message, count);
    },
    closed: async () => {
      if (client !== own()) {
        return { action: CloseAction.DoNotRestart, message: "graphmend: the replaced server exited", handled: true };
      }
      const answer = await handler().closed();
      if (health.closed(start, answer.action === CloseAction.Restart)) output.show(true);
      showHealth();
      return answer;
    },
  };
}

/** Stops the server for good; its client's reports no longer count. */
async function stop(): Promise<void> {
  const old = client;
  client = undefined; // its error handler restarts nothing from now on
  health.stop();
  if (!old) return;
  await retire(
    {
      state: () => STATES[old.state],
      started: () => old.start(),
      stop: () =>
        old.stop(5_000).catch((error) => {
          output.appendLine(`graphmend: the old server did not stop cleanly (${error}); ending its process`);
          end(processes.get(old));
        }),
      kill: () => end(processes.get(old)),
    },
    30_000,
  );
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  output = vscode.window.createOutputChannel("graphmend");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  status.command = "graphmend.showOutput";
  runItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, -1);
  workspaceState = context.workspaceState;
  const runs = vscode.workspace.createFileSystemWatcher("**/.graphmend/runs/**");
  const ticking = setInterval(showRun, 60_000); // the age grows
  context.subscriptions.push(
    output,
    status,
    runItem,
    runs,
    { dispose: () => clearInterval(ticking) },
    runs.onDidCreate(() => refreshRun()),
    runs.onDidChange(() => refreshRun()),
    runs.onDidDelete(() => refreshRun()),
    vscode.window.onDidChangeActiveTextEditor(() => refreshRun()),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document.languageId === "python") refreshRun();
    }),
    vscode.workspace.onDidSaveTextDocument(() => refreshRun()),
    vscode.commands.registerCommand("graphmend.recordRun", () => runScript("record")),
    vscode.commands.registerCommand("graphmend.proveFixes", () => runScript("prove")),
    vscode.commands.registerCommand("graphmend.showOutput", () => output.show()),
    vscode.commands.registerCommand("graphmend.restart", () => restarts.join()),
    vscode.commands.registerCommand("graphmend.fixAll", () => fixAll(false)),
    vscode.commands.registerCommand("graphmend.fixAllUnsafe", () => fixAll(true)),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("graphmend.path") || event.affectsConfiguration("graphmend.interpreter")) {
        await restarts.queue();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => restarts.queue()),
  );
  await restarts.queue();
}

export async function deactivate(): Promise<void> {
  await restarts.settled();
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

/** The document (a notebook's, for a cell) or else the folder whose newest run the status item shows. */
function runScope(): vscode.Uri | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.uri.scheme === "vscode-notebook-cell") return document.uri.with({ scheme: "file", fragment: "" });
  if (document?.uri.scheme === "file") return document.uri;
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

/** The running client, when its server knows recorded runs (an older graphmend-lsp does not). */
function runsClient(): LanguageClient | undefined {
  const commands = client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  return client?.state === State.Running && commands.includes("graphmend.recordCommand") ? client : undefined;
}

/** Ask the server for the newest run's status soon (edits come in bursts), then show it. */
function refreshRun(delayMs = 500): void {
  clearTimeout(runRefresh);
  runRefresh = setTimeout(async () => {
    const scope = runScope();
    const running = runsClient();
    try {
      runStatus = running && scope ? await running.sendRequest<RunStatus | null>("graphmend/runStatus", { uri: scope.toString() }) : null;
    } catch {
      runStatus = null; // the server stopped meanwhile
    }
    showRun();
  }, delayMs);
}

/** The run's status item: hidden without a run; a click shows the run's folder in the explorer. */
function showRun(): void {
  if (!runStatus) {
    runItem.hide();
    return;
  }
  const { text, tooltip } = runView(runStatus, Date.now());
  runItem.text = text;
  runItem.tooltip = tooltip;
  runItem.command = { title: "Show the run's folder", command: "revealInExplorer", arguments: [vscode.Uri.file(runStatus.folder)] };
  runItem.show();
}

/** What the server's `graphmend.recordCommand` answers: the command line and where to run it. */
interface RecordCommand {
  command: string[];
  cwd: string;
}

/**
 * graphmend: Record a Run… (`graphmend record -- python SCRIPT ARGS`) and graphmend: Prove Fixes on a Run…
 * (`graphmend fix --prove -- python SCRIPT ARGS`: the script runs as it is and with the fixes, and only the fixes
 * the runs prove are applied) with the server's graphmend, as a task in the terminal (the active Python file,
 * else one picked; the arguments asked for, the last ones offered). The script runs with the Python extension's
 * interpreter where there is one, else the server's Python. When the task ends the server analyses the open
 * files again (`graphmend.runRecorded`): findings the run met are marked, fixes say their verdicts.
 */
async function runScript(kind: "record" | "prove"): Promise<void> {
  const doing = kind === "record" ? "recording a run" : "proving fixes";
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(`graphmend: ${doing} executes the script; trust this workspace first.`);
    return;
  }
  const running = runsClient();
  if (!running) {
    void vscode.window.showWarningMessage(
      client?.state === State.Running
        ? `graphmend: this graphmend-lsp is too old for ${doing}; update graphmend.`
        : "graphmend: the server is not running (graphmend: Show Output).",
    );
    return;
  }
  const script = await scriptToRecord();
  if (!script) return;
  const title = kind === "record" ? "Record a Run of" : "Prove Fixes on a Run of";
  const key = `graphmend.recordArguments:${script.fsPath}`;
  const python = (await pythonExtensionInterpreter())?.[0] ?? null;
  // Which Python runs the script, said before it runs: a Python without torch records nothing.
  const runsWith = python ? `with ${python}` : "with the Python graphmend's server runs on (select an interpreter to choose)";
  const line = await vscode.window.showInputBox({
    title: `graphmend: ${title} ${path.basename(script.fsPath)}`,
    prompt:
      kind === "record"
        ? `The script's arguments (empty for none); the run executes the script ${runsWith}`
        : `The script's arguments (empty for none); it runs at least twice ${runsWith}, and what it writes, each run writes`,
    placeHolder: "--steps 20",
    value: workspaceState.get<string>(key, ""),
  });
  if (line === undefined) return;
  await workspaceState.update(key, line);
  let unsafe = false;
  if (kind === "prove") {
    const which = await vscode.window.showQuickPick(
      [
        { label: "Safe and unsafe fixes", detail: "an unsafe fix is applied only if the run proves it", unsafe: true },
        { label: "Safe fixes only", unsafe: false },
      ],
      { title: "graphmend: which fixes to prove" },
    );
    if (!which) return;
    unsafe = which.unsafe;
  }
  for (const document of vscode.workspace.textDocuments) {
    if (document.isDirty && document.languageId === "python" && document.uri.scheme === "file") await document.save();
  } // the run executes the files on disk
  const answer: RecordCommand | null = await running.sendRequest("workspace/executeCommand", {
    command: kind === "record" ? "graphmend.recordCommand" : "graphmend.proveCommand",
    arguments:
      kind === "record"
        ? [script.toString(), splitArguments(line), python]
        : [script.toString(), splitArguments(line), python, null, unsafe],
  });
  if (!answer) return;
  const [command, ...args] = answer.command;
  const name = `${kind} ${path.basename(script.fsPath)}`;
  const task = new vscode.Task(
    { type: "graphmend", script: script.fsPath },
    vscode.workspace.getWorkspaceFolder(script) ?? vscode.TaskScope.Workspace,
    name,
    "graphmend",
    new vscode.ProcessExecution(command, args, { cwd: answer.cwd }),
  );
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true };
  // Listening before it starts (a quick one may end before executeTask answers), and by its name: the
  // execution an event carries is not the one executeTask returned (microsoft/vscode#96643).
  const ended = vscode.tasks.onDidEndTaskProcess(async (event) => {
    if (event.execution.task.source !== "graphmend" || event.execution.task.name !== name) return;
    ended.dispose();
    output.appendLine(`graphmend: ${name} ended with exit code ${event.exitCode}`);
    await client?.sendRequest("workspace/executeCommand", { command: "graphmend.runRecorded" }).catch(() => undefined);
    refreshRun(0);
    if (event.exitCode) {
      void vscode.window.showWarningMessage(
        kind === "record"
          ? `graphmend: the recorded command exited with ${event.exitCode}; what it met until then is kept (see the terminal).`
          : `graphmend: proving fixes ended with exit code ${event.exitCode}; nothing unproved was applied (see the terminal).`,
      );
    }
  });
  await vscode.tasks.executeTask(task).then(undefined, (error) => {
    ended.dispose();
    void vscode.window.showErrorMessage(`graphmend: the ${kind === "record" ? "recording" : "proof"} did not start: ${error}`);
  });
}

/** The active Python file, else one the user picks from the workspace. */
async function scriptToRecord(): Promise<vscode.Uri | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === "python" && active.uri.scheme === "file") return active.uri;
  const files = await vscode.workspace.findFiles("**/*.py", "**/{.venv,venv,node_modules,site-packages,.graphmend}/**", 500);
  const picked = await vscode.window.showQuickPick(
    files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
    { title: "graphmend: Record a Run of…", placeHolder: "The Python script to run" },
  );
  return picked?.uri;
}
