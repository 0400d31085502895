/**
 * Which command starts graphmend-lsp. Pure: the order of candidates is decided here, probing them
 * (does it start?) is the caller's job, so the rules are unit-tested without VS Code.
 */

export interface ServerSources {
  /** `graphmend.path`: the command itself, e.g. ["/venv/bin/graphmend-lsp"]. */
  path: string[];
  /** `graphmend.interpreter`: a Python to run `-m graphmend.lsp` with. */
  interpreter: string[];
  /** The Python extension's active interpreter, when that extension is installed. */
  pythonExtension?: string[];
  /** Whether the workspace is trusted: untrusted ones never run a workspace interpreter. */
  trusted: boolean;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for the output channel and error messages. */
  source: "graphmend.path" | "graphmend.interpreter" | "Python extension" | "PATH";
}

function fromArgv(argv: string[], extra: string[], source: ServerCommand["source"]): ServerCommand | undefined {
  const [command, ...args] = argv.filter((part) => part.trim() !== "");
  return command ? { command, args: [...args, ...extra], source } : undefined;
}

/** Candidates in the order they are tried: path, interpreter, Python extension, PATH. */
export function serverCandidates(sources: ServerSources): ServerCommand[] {
  const candidates: (ServerCommand | undefined)[] = [
    fromArgv(sources.path, ["--stdio"], "graphmend.path"),
    sources.trusted ? fromArgv(sources.interpreter, ["-m", "graphmend.lsp", "--stdio"], "graphmend.interpreter") : undefined,
    sources.trusted && sources.pythonExtension
      ? fromArgv(sources.pythonExtension, ["-m", "graphmend.lsp", "--stdio"], "Python extension")
      : undefined,
    { command: "graphmend-lsp", args: ["--stdio"], source: "PATH" },
  ];
  return candidates.filter((c): c is ServerCommand => c !== undefined);
}

/** The same command asked for its version: a cheap "does it start?" probe. */
export function probeArgs(candidate: ServerCommand): string[] {
  return [...candidate.args.filter((a) => a !== "--stdio"), "--version"];
}

export const INSTALL_HINT =
  "graphmend-lsp could not be started. Install it into the Python you use (`pip install graphmend`), " +
  "or set `graphmend.path` to the graphmend-lsp executable.";
