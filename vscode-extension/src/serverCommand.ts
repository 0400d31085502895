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

export const INSTALL_HINT =
  "graphmend-lsp could not be started: no Python 3.10+ was found to run the bundled server. Select an " +
  "interpreter with the Python extension, install graphmend into the Python you use (from a clone: " +
  "`pip install /path/to/graphmend`), or set `graphmend.path` to the graphmend-lsp executable.";
