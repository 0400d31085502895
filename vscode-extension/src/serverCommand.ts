/**
 * Which command starts graphmend-lsp: the order of candidates, the probe (does it start?) and what a
 * failed search tells the user. Free of VS Code, so the rules are unit-tested without it.
 */

import { ExecFileException, execFile } from "node:child_process";

export interface ServerSources {
  /** `graphmend.path`: the command itself, e.g. ["/venv/bin/graphmend-lsp"]. */
  path: string[];
  /** `graphmend.interpreter`: a Python to run `-m graphmend.lsp` with. */
  interpreter: string[];
  /** The Python extension's active interpreter, when that extension is installed. */
  pythonExtension?: string[];
  /** Whether the workspace is trusted: untrusted ones never run a workspace interpreter. */
  trusted: boolean;
  /** The extension's own server (bundled/tool/graphmend_lsp.py), when the package has one. */
  bundledScript?: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for the output channel and error messages. */
  source: "graphmend.path" | "graphmend.interpreter" | "Python extension" | "PATH" | "bundled";
}

function fromArgv(argv: string[], extra: string[], source: ServerCommand["source"]): ServerCommand | undefined {
  const [command, ...args] = argv.filter((part) => part.trim() !== "");
  return command ? { command, args: [...args, ...extra], source } : undefined;
}

/**
 * Candidates in the order they are tried: path, interpreter, Python extension, PATH; then the
 * bundled server (no `pip install` needed), run by the Python extension's interpreter, else by
 * python3 or python on PATH. A graphmend installed by the user comes first: it sees the same
 * packages (torch's version, LibCST for every fix) as the code.
 */
export function serverCandidates(sources: ServerSources): ServerCommand[] {
  const workspacePython = sources.trusted ? sources.pythonExtension : undefined;
  const candidates: (ServerCommand | undefined)[] = [
    fromArgv(sources.path, ["--stdio"], "graphmend.path"),
    sources.trusted ? fromArgv(sources.interpreter, ["-m", "graphmend.lsp", "--stdio"], "graphmend.interpreter") : undefined,
    workspacePython ? fromArgv(workspacePython, ["-m", "graphmend.lsp", "--stdio"], "Python extension") : undefined,
    { command: "graphmend-lsp", args: ["--stdio"], source: "PATH" },
  ];
  if (sources.bundledScript) {
    for (const python of [...(workspacePython ? [workspacePython] : []), ["python3"], ["python"]]) {
      candidates.push(fromArgv(python, [sources.bundledScript, "--stdio"], "bundled"));
    }
  }
  return candidates.filter((c): c is ServerCommand => c !== undefined);
}

/** The same command asked for its version: a cheap "does it start?" probe. */
export function probeArgs(candidate: ServerCommand): string[] {
  return [...candidate.args.filter((a) => a !== "--stdio"), "--version"];
}

/** How long a probe may take: Python's start and `import graphmend`, on a busy machine. */
export const PROBE_TIMEOUT_MS = 15_000;

/**
 * What a probe showed. Only "missing" and "failed" say that the command cannot run the server: one
 * that timed out or was killed (a busy machine, a start racing a stop) says nothing either way.
 */
export type Probe =
  | { outcome: "started" }
  | { outcome: "missing" }
  | { outcome: "failed"; detail: string }
  | { outcome: "timedOut"; afterMs: number }
  | { outcome: "interrupted"; signal: string };

/** Runs the candidate's probe (`probeArgs`). */
export function probe(candidate: ServerCommand, timeoutMs = PROBE_TIMEOUT_MS): Promise<Probe> {
  return new Promise((resolve) => {
    execFile(candidate.command, probeArgs(candidate), { timeout: timeoutMs }, (error, _stdout, stderr) =>
      resolve(probeOutcome(error, String(stderr), timeoutMs)),
    );
  });
}

/** What execFile's answer means; `killed` is set only when execFile itself killed it, at the time limit. */
export function probeOutcome(error: ExecFileException | null, stderr: string, timeoutMs: number): Probe {
  if (!error) return { outcome: "started" };
  if (error.code === "ENOENT") return { outcome: "missing" };
  if (error.killed) return { outcome: "timedOut", afterMs: timeoutMs };
  if (error.signal) return { outcome: "interrupted", signal: error.signal };
  const said = stderr.trim().split("\n").pop();
  return { outcome: "failed", detail: typeof error.code === "number" ? `exit code ${error.code}${said ? `: ${said}` : ""}` : error.message };
}

/** A candidate that did not start, and what its probe showed. */
export interface Tried {
  candidate: ServerCommand;
  probe: Exclude<Probe, { outcome: "started" }>;
}

/**
 * The first candidate whose probe starts, in order. `known`, the command of a server that ran in this
 * session, is taken without a probe when its turn comes: under load its probe can time out, though the
 * server ran a moment ago. `tried` holds the candidates that did not start.
 */
export async function chooseServer(
  candidates: ServerCommand[],
  run: (candidate: ServerCommand) => Promise<Probe>,
  known?: ServerCommand,
): Promise<{ server?: ServerCommand; tried: Tried[] }> {
  const tried: Tried[] = [];
  for (const candidate of candidates) {
    if (known && sameCommand(candidate, known)) return { server: candidate, tried };
    const result = await run(candidate);
    if (result.outcome === "started") return { server: candidate, tried };
    tried.push({ candidate, probe: result });
  }
  return { tried };
}

function sameCommand(a: ServerCommand, b: ServerCommand): boolean {
  return a.source === b.source && a.command === b.command && a.args.join("\0") === b.args.join("\0");
}

/** A probe as the output channel and messages say it: "`python3 x.py --version` did not answer within 15 s". */
export function describeTry({ candidate, probe }: Tried): string {
  const line = `\`${[candidate.command, ...probeArgs(candidate)].join(" ")}\``;
  switch (probe.outcome) {
    case "missing":
      return `${line} was not found`;
    case "failed":
      return `${line} failed (${probe.detail})`;
    case "timedOut":
      return `${line} did not answer within ${probe.afterMs / 1000} s`;
    case "interrupted":
      return `${line} was interrupted (${probe.signal})`;
  }
}

/**
 * What to say when no candidate started: the install hint only when every probe showed that its
 * command cannot run the server; otherwise which probes gave no answer, and that a restart tries again.
 */
export function noServerMessage(tried: Tried[]): string {
  const unanswered = tried.filter(({ probe }) => probe.outcome === "timedOut" || probe.outcome === "interrupted");
  if (unanswered.length === 0) return INSTALL_HINT;
  return (
    `graphmend-lsp could not be started: ${unanswered.map(describeTry).join("; ")}, so whether a Python 3.10+ ` +
    "can run it is not known (a busy machine can cause this). graphmend: Restart Server tries again."
  );
}

export const INSTALL_HINT =
  "graphmend-lsp could not be started: no Python 3.10+ was found to run the bundled server. Select an " +
  "interpreter with the Python extension, install graphmend into the Python you use (from a clone: " +
  "`pip install /path/to/graphmend`), or set `graphmend.path` to the graphmend-lsp executable.";
