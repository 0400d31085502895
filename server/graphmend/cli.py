"""`graphmend check`: the command-line front over `graphmend.api`."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__, api
from .api import (
    CUDA_GRAPH_SCOPES,
    DEFAULT_MAX_FILE_SIZE_KB,
    NOT_ANALYSED_CODES,
    Applicability,
    Finding,
    notebooks,
    plural,
    reporting,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find TorchDynamo graph breaks in PyTorch source before it runs.",
    )
    parser.add_argument("--version", action="version", version=f"graphmend {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser("check", help="report graph breaks in files or directories")
    _add_selection_options(check)
    check.add_argument(
        "--output-format",
        choices=reporting.FORMATS,
        type=lambda name: "text" if name == "full" else name,  # Ruff's name for the default
        default="text",
        help="text (with the source line; also `full`, as in Ruff), concise (one line each), json, json-lines, "
        "sarif (2.1.0), github (workflow annotations), gitlab (Code Quality)",
    )
    check.add_argument("--quiet", "-q", action="store_true", help="only the findings: no source lines, no summary")
    check.add_argument("--statistics", action="store_true", help="count the findings per code instead of listing them")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when graph breaks are found")
    check.add_argument("--fix", action="store_true", help="apply the safe fixes, then report what remains")
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff: also fixes marked unsafe (their titles say what may change)",
    )
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    _add_fix_parser(commands)
    verify = commands.add_parser(
        "verify",
        help="run a file and its rewritten version under real Dynamo and compare them (EXECUTES the file)",
        description="This EXECUTES the code in FILE (the only graphmend command that does). It imports FILE "
        "and its rewritten twin, compiles ENTRY in each with torch.compile, calls it on every --inputs, and compares "
        "graphs, graph-break sites, fullgraph=True, outputs, and printed/logged/warned text. Needs torch "
        "(pip install 'graphmend[verify]').",
    )
    verify.add_argument("file", type=Path, metavar="FILE")
    verify.add_argument(
        "--entry",
        required=True,
        metavar="NAME",
        help="a function, nn.Module class or instance in FILE (dotted for attributes)",
    )
    verify.add_argument(
        "--inputs",
        action="append",
        required=True,
        metavar="EXPR",
        help="arguments of one call, as a Python expression with `torch` in scope, "
        "e.g. 'torch.randn(4), torch.randn(4)'; repeat for more calls",
    )
    verify.add_argument("--unsafe-fixes", action="store_true", help="include fixes marked unsafe")
    _add_record_parser(commands)
    rules = commands.add_parser("rules", help="list the rules and their codes")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    rule = commands.add_parser("rule", help="explain a rule as markdown: what it flags, why, an example, the fix")
    which = rule.add_mutually_exclusive_group(required=True)
    which.add_argument("code", nargs="?", metavar="CODE", help="a rule's code, e.g. GM101")
    which.add_argument("--all", action="store_true", help="every rule")
    which.add_argument(
        "--write-docs",
        type=Path,
        metavar="DIR",
        help="write every rule's page and their index (README.md) to DIR, e.g. docs/rules",
    )
    return parser


def _add_fix_parser(commands: Any) -> None:
    fix = commands.add_parser("fix", help="rewrite graph breaks away (safe fixes; unsafe ones on request)")
    _add_selection_options(fix)
    fix.add_argument("--diff", action="store_true", help="print the changes as a unified diff; write nothing")
    fix.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (their titles say what may change)"
    )
    fix.add_argument(
        "--apply-proved-fixes",
        action="store_true",
        help="also apply the unsafe fixes `fix --prove` proved on your own run, while the function is the one "
        "proved (a project's settings cannot turn this on)",
    )
    fix.add_argument(
        "--prove",
        action="store_true",
        help="RUN the command after `--` as it is and with the fixes served in its processes, compare the runs, "
        "and apply only the fixes the run proves (graphmend fix --prove -- python train.py; docs/prove.md)",
    )
    fix.add_argument(
        "--workdir",
        type=Path,
        metavar="DIR",
        help="with --prove: run the command in a fresh folder under DIR each time, so that the files it writes "
        "are kept apart (give it absolute paths)",
    )
    fix.add_argument(
        "--mask",
        action="append",
        default=[],
        metavar="REGEX",
        help="with --prove: text that may differ between two runs of the command (clock times, durations, "
        "addresses and UUIDs are masked already); repeat for more",
    )


def _add_record_parser(commands: Any) -> None:
    record = commands.add_parser(
        "record",
        help="run a command and record the graph breaks, recompiles and compile failures torch.compile meets",
        description="This RUNS the command after `--`, unchanged, with graphmend's recorder in each of its Python "
        "processes (torchrun and subprocesses included), and writes what torch.compile met to a run under "
        ".graphmend/runs/ at the project root. It exits with the command's exit code.",
    )
    record.add_argument(
        "--out", type=Path, metavar="DIR", help="the run's folder (default: a new one under .graphmend/runs/)"
    )
    record.add_argument(
        "--import-trace",
        type=Path,
        metavar="DIR",
        help="instead of running a command, read a TORCH_TRACE folder from a run made elsewhere",
    )
    record.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="for CI: exit 1 when the run meets a break, recompile or failure FILE does not hold (a JSON file "
        "`--write-baseline` writes; events are matched by file, function and line text, not line numbers)",
    )
    record.add_argument("--write-baseline", action="store_true", help="write the run's events to --baseline FILE")
    record.add_argument(
        "--output-format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="the run's events (with --baseline: the new ones) on standard output: text (with --baseline only), "
        "json, github (workflow annotations) or sarif (2.1.0); the summary goes to standard error",
    )
    record.add_argument(
        "run_command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command to run, after `--`"
    )


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path(".")],
        metavar="PATH",
        help="files or directories (recursive); `-` reads the standard input; default: the current directory",
    )
    parser.add_argument(
        "--stdin-filename",
        type=Path,
        metavar="PATH",
        help="the name of the code read from `-`: where settings are looked up, what messages say",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also say which files were passed over and why (FIFOs, links out of the tree...)",
    )
    parser.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where unchanged files' results are kept (default: $GRAPHMEND_CACHE_DIR or .graphmend_cache)",
    )
    parser.add_argument("--no-cache", action="store_true", help="analyse every file, read and write no cache")
    parser.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report (default: GM)")
    parser.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes not to report")
    forward = parser.add_mutually_exclusive_group()
    forward.add_argument(
        "--module-forward",
        dest="module_forward",
        action="store_true",
        default=None,
        help="treat every nn.Module.forward as compiled (the default)",
    )
    forward.add_argument(
        "--no-module-forward",
        dest="module_forward",
        action="store_false",
        help="only code reached from torch.compile counts as compiled",
    )
    parser.add_argument(
        "--cuda-graphs",
        choices=CUDA_GRAPH_SCOPES,
        help='where the CUDA-graph rules (GM401-GM404) run: auto (code compiled with mode="reduce-overhead", '
        '"max-autotune" or triton.cudagraphs; the default), always, never',
    )
    parser.add_argument(
        "--torch-version",
        metavar="X.Y",
        help="the torch release the code runs on; no fix uses an API it lacks (default: the installed torch)",
    )
    _add_library_options(parser)
    parser.add_argument(
        "--max-file-size-kb",
        type=_kilobytes,
        metavar="KB",
        help=f"analyse files up to this size (default {DEFAULT_MAX_FILE_SIZE_KB}; 0: no limit; a project's "
        "pyproject.toml can only lower it)",
    )
    parser.add_argument(
        "--no-runs",
        action="store_true",
        help="do not mark the findings the newest recorded run met (`graphmend record`; default: marked)",
    )


def _codes(value: str) -> list[str]:
    """Comma-separated rule codes or prefixes; one that names no rule is an error (exit 2), as in Ruff."""
    codes = [c.strip() for c in value.split(",") if c.strip()]
    unknown = api.unknown_codes(codes)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown)}: no graphmend rule has {'this code or prefix' if len(unknown) == 1 else 'these codes or prefixes'} "
            f"(known: {', '.join(api.KNOWN_CODES)}; `graphmend rules` lists them)"
        )
    return codes


def _add_library_options(parser: argparse.ArgumentParser) -> None:
    """Where compiled code is followed into installed packages."""
    parser.add_argument(
        "--follow-libraries",
        action="store_true",
        default=None,
        help="follow compiled code into installed packages and report their breaks at your calls",
    )
    parser.add_argument(
        "--report-library-files",
        action="store_true",
        default=None,
        help="with --follow-libraries, also report the findings inside those files (implies it)",
    )
    parser.add_argument(
        "--library-path",
        action="append",
        metavar="DIR",
        help="a folder to look for packages in first (repeatable; implies --follow-libraries)",
    )


def _kilobytes(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"{value!r}: a whole number of kilobytes (0: no limit)")
    return int(value)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if args.select is not None:
        overrides["select"] = args.select
    if args.ignore is not None:
        overrides["ignore"] = args.ignore
    if args.module_forward is not None:
        overrides["module-forward-is-compiled"] = args.module_forward
    if args.cuda_graphs is not None:
        overrides["cuda-graphs"] = args.cuda_graphs
    if args.torch_version is not None:
        overrides["torch-version"] = args.torch_version
    if args.follow_libraries or args.library_path or args.report_library_files:
        overrides["follow-libraries"] = True
    if args.report_library_files:
        overrides["report-library-files"] = True
    if args.library_path:
        overrides["library-paths"] = args.library_path
    if args.max_file_size_kb is not None:
        overrides["max-file-size-kb"] = args.max_file_size_kb
    if args.no_runs:
        overrides["runs"] = False
    if getattr(args, "apply_proved_fixes", False):
        overrides["apply-proved-fixes"] = True
    return overrides


def _cache_dir(args: argparse.Namespace) -> Path | None:
    """Where `check` and `fix` keep unchanged files' results (None: `--no-cache`)."""
    if args.no_cache:
        return None
    return args.cache_dir or Path(os.environ.get("GRAPHMEND_CACHE_DIR", ".graphmend_cache"))


def _missing_paths(args: argparse.Namespace) -> bool:
    missing = [str(p) for p in args.paths if str(p) != "-" and not p.exists() and not p.is_symlink()]
    if missing:
        print(f"graphmend: error: no such file or directory: {', '.join(missing)}", file=sys.stderr)
    return bool(missing)


def _files(args: argparse.Namespace) -> list[Path]:
    """The files to work on; what is passed over is said when it was named, or with --verbose."""
    files, skipped = api.discover(args.paths)
    named = {str(p) for p in args.paths}
    for item in skipped:
        if args.verbose or str(item.path) in named:
            print(
                f"graphmend: {'note' if str(item.path) not in named else 'warning'}: {item.path}: {item.reason}; skipped",
                file=sys.stderr,
            )
    return files


@dataclass
class _Fixed:
    """What a `fix` run did: fixes applied, findings left, how many of those an unsafe fix would take."""

    applied: int = 0
    remaining: int = 0
    unsafe_available: int = 0
    failed: bool = False  # an internal error: a rewrite that did not parse
    changed: bool = False


def _apply_fixes(args: argparse.Namespace, announce: bool) -> _Fixed | None:
    """Fix the files (`--diff`: print the changes instead of writing them); None on a settings error.
    `announce`: say per file what was fixed (`fix`; `check --fix` reports the remaining findings)."""
    files = _files(args)
    try:
        results = api.fix_paths(
            files,
            _overrides(args),
            unsafe=args.unsafe_fixes,
            write=not args.diff,
            jobs=args.jobs,
            cache_dir=_cache_dir(args),
        )
    except api.SettingsError as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return None
    done = _Fixed()
    for path, result in zip(files, results):
        if result.error is not None:
            print(f"graphmend: warning: {path}: {result.error}", file=sys.stderr)
            done.failed = done.failed or result.internal_error
            done.remaining += len(result.remaining)
            continue
        if not result.converged:
            print(f"graphmend: warning: {path}: {_NOT_CONVERGED}", file=sys.stderr)
        if result.fixed != result.original:
            done.applied += result.applied
            done.changed = True
            if args.diff:
                sys.stdout.writelines(_diff(path, result.original, result.fixed))
            elif announce:
                print(f"{path}: fixed {plural(result.applied, 'graph break')}")
        for d in result.remaining:
            done.remaining += 1
            if d.fix is not None and d.fix.applicability is Applicability.UNSAFE:
                done.unsafe_available += 1
    sys.stdout.flush()
    return done


def _say_settings_notes(args: argparse.Namespace) -> None:
    """What the project's settings said that graphmend did not take (`apply-proved-fixes`), once."""
    notes: dict[str, None] = {}
    for path in [Path(p) for p in args.paths][:1] or [Path.cwd()]:
        try:
            notes.update(dict.fromkeys(text for _, text in api.settings_for(path).merged(_overrides(args)).notes))
        except api.SettingsError:
            return  # said with the fixes
    for note in notes:
        print(f"graphmend: warning: {note}", file=sys.stderr)


def _run_fix(args: argparse.Namespace) -> int:
    if _stdin_misused(args) or _missing_paths(args):
        return EXIT_ERROR
    if getattr(args, "prove", False) or (args.command == "fix" and args.run_command):  # (`check --diff` comes here too)
        return _run_prove(args)
    if _reads_stdin(args):
        return _fix_stdin(args)
    _say_settings_notes(args)
    done = _apply_fixes(args, announce=True)
    if done is None:
        return EXIT_ERROR
    verb = "Would fix" if args.diff else "Fixed"
    summary = f"{verb} {plural(done.applied, 'graph break')}; {done.remaining} remaining"
    if done.unsafe_available and not args.unsafe_fixes:
        summary += f" ({done.unsafe_available} fixable with --unsafe-fixes)"
    print(summary + ".", file=sys.stderr if args.diff else sys.stdout)
    if done.failed:
        return EXIT_ERROR
    return EXIT_FINDINGS if done.remaining or (done.changed and args.diff) else EXIT_CLEAN


def _run_prove(args: argparse.Namespace) -> int:
    """`fix --prove -- COMMAND`: apply (with --diff: show) the fixes the command's own run proves."""
    if not args.prove or not args.run_command:
        print(
            "graphmend: error: --prove needs a command after `--`, and a command needs --prove, "
            "e.g. graphmend fix --prove -- python train.py",
            file=sys.stderr,
        )
        return EXIT_ERROR
    root = api.project_root(Path.cwd())
    try:
        outcome = api.prove_command(
            args.run_command,
            _files(args),
            root,
            _overrides(args),
            unsafe=args.unsafe_fixes,
            workdir=args.workdir.resolve() if args.workdir else None,
            write=not args.diff,
            say=lambda line: print(line, file=sys.stderr, flush=True),
            masks=tuple(args.mask),
        )
    except re.error as error:
        print(f"graphmend: error: --mask is not a regular expression: {error}", file=sys.stderr)
        return EXIT_ERROR
    except (api.SettingsError, api.UntrustedFileError) as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as error:
        print(f"graphmend: error: cannot run {args.run_command[0]}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    for line in api.proof_report(outcome, root):
        print(line)
    if args.diff:
        for path, (before, after) in outcome.changed.items():
            sys.stdout.writelines(_diff(path, before, after))
    if outcome.record is not None:
        if args.diff:
            verdicts = outcome.proof.verdicts if outcome.proof is not None else []
            shown = [v for v in verdicts if v.verdict == "proved" and v.candidate.path in outcome.changed]
            said = f"Would apply {plural(len(shown), 'proved fix')}"
        else:  # what was written: a file edited during the proof keeps its text
            said = f"Applied {plural(len(outcome.applied), 'proved fix')}"
        print(f"{said}; record: {api.project_relative(outcome.record, root)}")
    return EXIT_ERROR if outcome.proof is not None and outcome.proof.failure else EXIT_CLEAN


def _diff(path: Path, original: str, fixed: str) -> list[str]:
    """A unified diff of a fix; for a notebook, of the sources of the cells it changes
    (`a/nb.ipynb:cell 3`), not of the JSON."""
    if not api.is_notebook(path):
        return list(
            api.unified_diff(
                original.splitlines(keepends=True), fixed.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        )
    before, after = json.loads(original)["cells"], json.loads(fixed)["cells"]
    sources = [("".join(old.get("source", "")), "".join(new.get("source", ""))) for old, new in zip(before, after)]
    return notebooks.cell_diff(str(path), [(number, a, b) for number, (a, b) in enumerate(sources, start=1) if a != b])


def _fix_stdin(args: argparse.Namespace) -> int:
    """`fix -`: the fixed code on the standard output (all of it, changed or not), the summary on stderr."""
    try:
        path, settings, context = _stdin_setup(args, _overrides(args))
        data = sys.stdin.buffer.read()
        text = api.decode_notebook(data) if api.is_notebook(path) else api.decode_source(data)[0]
    except (api.SettingsError, api.SourceError) as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    fix = api.fix_notebook_text if api.is_notebook(path) else api.fix_source
    result = fix(text, path, settings, unsafe=args.unsafe_fixes, context=context)
    if args.diff:
        sys.stdout.writelines(_diff(path, text, result.fixed) if result.error is None else [])
    else:
        sys.stdout.write(result.fixed)
    sys.stdout.flush()
    if result.error is not None:
        print(f"graphmend: warning: {path}: {result.error}", file=sys.stderr)
    if not result.converged:
        print(f"graphmend: warning: {path}: {_NOT_CONVERGED}", file=sys.stderr)
    print(
        f"{'Would fix' if args.diff else 'Fixed'} {plural(result.applied, 'graph break')}; "
        f"{len(result.remaining)} remaining.",
        file=sys.stderr,
    )
    if result.internal_error:
        return EXIT_ERROR
    return EXIT_FINDINGS if result.remaining or (args.diff and result.fixed != text) else EXIT_CLEAN


def _run_verify(args: argparse.Namespace) -> int:
    from .verify import VerifyError, verify

    if not args.file.is_file():
        print(f"graphmend: error: no such file: {args.file}", file=sys.stderr)
        return EXIT_ERROR
    try:
        report = verify(args.file, args.entry, args.inputs, api.settings_for(args.file), unsafe=args.unsafe_fixes)
    except (VerifyError, api.SettingsError, api.SourceError) as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{args.file}: {plural(report.fixes_applied, 'fix')} applied to the twin")
    print(report.table())
    if report.after.fullgraph_error and not report.after.fullgraph:
        print(f"after, fullgraph=True: {report.after.fullgraph_error}")
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS


def _run_check(args: argparse.Namespace) -> int:
    overrides = _overrides(args)
    if _stdin_misused(args) or _missing_paths(args):
        return EXIT_ERROR
    if args.diff or (args.fix and _reads_stdin(args)):
        return _run_fix(args)  # Ruff's `check --diff`: the fixes as a diff; from stdin, the fixed text
    _say_settings_notes(args)
    fixed = None
    if args.fix:
        done = _apply_fixes(args, announce=False)
        if done is None:
            return EXIT_ERROR
        fixed = done.applied
    texts: dict[Path, Any] = {}  # what was read from `-`
    try:
        if _reads_stdin(args):
            findings, files, unreadable = _check_stdin(args, overrides, texts)
        else:
            findings, files, unreadable = _check_files(args, overrides)
    except (api.SettingsError, api.SourceError) as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    _report(args, findings, files, _SourceLines(texts), fixed)
    for path, reason in unreadable:
        print(f"graphmend: warning: {path}: {reason}; skipped", file=sys.stderr)
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _check_files(
    args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[list[Finding], int, list[tuple[Path, str]]]:
    files = _files(args)
    with _progress_bar(args, len(files)) as progress:
        results = api.check_paths(files, overrides, jobs=args.jobs, cache_dir=_cache_dir(args), progress=progress)
    findings = [Finding(r.path, d) for r in results for d in r.diagnostics]
    return findings, len(results), [(r.path, r.error) for r in results if r.error is not None]


def _check_stdin(
    args: argparse.Namespace, overrides: dict[str, Any], texts: dict[Path, Any]
) -> tuple[list[Finding], int, list[tuple[Path, str]]]:
    """The code on the standard input, as if it were the file `--stdin-filename` (settings, project)."""
    path, settings, context = _stdin_setup(args, overrides)
    data = sys.stdin.buffer.read()
    if api.is_notebook(path):
        notebook = api.notebook_from_text(api.decode_notebook(data))
        texts[path] = notebook.raw
        return [Finding(path, d) for d in api.check_notebook(notebook, path, settings, context)], 1, []
    text, _ = api.decode_source(data)
    texts[path] = text
    return [Finding(path, d) for d in api.check_source(text, path, settings, context)], 1, []


def _stdin_setup(
    args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[Path, api.Settings, api.ProjectContext | None]:
    """The name, settings and project context of the code read from `-`: those of `--stdin-filename`
    (its pyproject.toml, and what the rest of its project compiles when the file exists there)."""
    path = args.stdin_filename or Path("-")
    if args.stdin_filename is None:
        return path, api.Settings().merged(overrides), None
    settings = api.settings_for(path.parent if path.parent.exists() else Path.cwd()).merged(overrides).for_file(path)
    context = api.context_for(api.build_project([path], overrides), path, settings) if path.is_file() else None
    return path, settings, context


def _reads_stdin(args: argparse.Namespace) -> bool:
    return any(str(p) == "-" for p in args.paths)


def _stdin_misused(args: argparse.Namespace) -> bool:
    if _reads_stdin(args) and len(args.paths) > 1:
        print("graphmend: error: `-` (the standard input) cannot be combined with other paths", file=sys.stderr)
        return True
    if args.stdin_filename is not None and not _reads_stdin(args):
        print("graphmend: error: --stdin-filename needs `-` among the paths", file=sys.stderr)
        return True
    return False


class _progress_bar:
    """A progress bar on stderr for a long interactive run: only when stderr is a terminal, the
    output is text and there are enough files to wait for; never in pipes or machine formats."""

    MIN_FILES = 200

    def __init__(self, args: argparse.Namespace, files: int) -> None:
        self.bar: Any = None
        if (
            files >= self.MIN_FILES
            and args.output_format in ("text", "concise")
            and not args.quiet
            and sys.stderr.isatty()
            and not os.environ.get("CI")
        ):
            from tqdm import tqdm

            self.bar = tqdm(total=files, unit="file", file=sys.stderr, leave=False, dynamic_ncols=True)

    def __enter__(self) -> Any:
        return self.update if self.bar is not None else None

    def update(self, done: int, total: int) -> None:
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


class _SourceLines:
    """The lines findings are in, read once per file and run: a file's, or a notebook cell's (`-`:
    what was read)."""

    def __init__(self, known: dict[Path, Any]) -> None:
        self.known = known  # path → text, or a notebook's JSON
        self.files: dict[Path, Any] = {}
        self.stored: dict[Path, list[tuple[int, int] | None]] = {}  # a notebook's cells' lines as stored

    def __call__(self, finding: Finding) -> list[str] | None:
        content = self._content(finding.path)
        if finding.cell is None:
            return content.splitlines() if isinstance(content, str) else None
        try:
            return "".join(content["cells"][finding.cell - 1]["source"]).splitlines()
        except (TypeError, KeyError, IndexError):
            return None

    def file_line(self, finding: Finding) -> int | None:
        """A notebook finding's 0-based line in the `.ipynb` as stored (`notebooks.cell_lines_in_file`,
        read and worked out once per notebook)."""
        if finding.cell is None or finding.path in self.known:
            return None
        if finding.path not in self.stored:
            try:
                self.stored[finding.path] = notebooks.cell_lines_in_file(finding.path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self.stored[finding.path] = []
        cells = self.stored[finding.path]
        found = cells[finding.cell - 1] if 0 < finding.cell <= len(cells) else None
        line = finding.diagnostic.range.start.line
        return found[0] + line if found is not None and line < found[1] else None

    def _content(self, path: Path) -> Any:
        if path in self.known:
            return self.known[path]
        if path not in self.files:
            try:
                self.files[path] = api.read_notebook(path).raw if api.is_notebook(path) else api.read_source(path)
            except api.SourceError:
                self.files[path] = None
        return self.files[path]


def _report(
    args: argparse.Namespace, findings: list[Finding], files: int, lines: _SourceLines, fixed: int | None = None
) -> None:
    style = reporting.Style.for_stream(sys.stdout)
    if args.statistics:
        rows = reporting.statistics(findings)
        if args.output_format in ("json", "json-lines"):
            print(json.dumps(rows, indent=2 if args.output_format == "json" else None))
        else:
            if rows:
                print(reporting.statistics_text(rows, style))
            if not args.quiet:
                print(_summary(findings, files, fixed, args.unsafe_fixes))
                if rows:
                    print(reporting.statistics_legend(rows))
        return
    fmt = args.output_format
    if fmt == "json":
        print(json.dumps([reporting.diagnostic_json(f) for f in findings], indent=2))
    elif fmt == "json-lines":
        if findings:
            print(reporting.json_lines(findings))
    elif fmt == "sarif":
        print(reporting.sarif(findings, Path.cwd(), lines.file_line))
    elif fmt == "github":
        if findings:
            print(reporting.github(findings, lines.file_line))
    elif fmt == "gitlab":
        print(reporting.gitlab(findings, lines, lines.file_line))
    else:
        show_source = fmt == "text" and not args.quiet
        listing = reporting.text(findings, lines, style, show_source)
        if listing:
            print(listing)
        if not args.quiet:
            print(_summary(findings, files, fixed, args.unsafe_fixes))


_NOT_BREAKS = {
    "GM502": "CUDA-graph or recompilation issue",
    "GM503": "compile failure",
    "GM504": "CUDA-graph or recompilation issue",
}


def _what_it_is(code: str) -> str:
    """What the summary counts a finding as: a graph break, or (GM4xx and the recorded run's
    recompiles, CUDA-graph skips and compile failures, the predicted recompiles) something else."""
    rule = api.RULES_BY_CODE.get(code)
    if rule is not None and rule.family is api.Family.CUDA_GRAPHS:
        return "CUDA-graph or recompilation issue"
    if rule is not None and rule.family is api.Family.RECOMPILES:
        return "predicted recompile"
    return _NOT_BREAKS.get(code, "graph break")


_NOT_CONVERGED = "fixes still applied in the last round allowed; run `graphmend fix` again for the rest"


def _summary(findings: list[Finding], files: int, fixed: int | None = None, unsafe_fixes: bool = False) -> str:
    """Ruff's summary: what was found, in how many of the files checked, what `--fix` did, and what
    `--fix` (and `--unsafe-fixes`) would take."""
    unparsable = len({f.path for f in findings if f.diagnostic.code in NOT_ANALYSED_CODES and f.cell is None})
    cells = len({(f.path, f.cell) for f in findings if f.diagnostic.code in NOT_ANALYSED_CODES and f.cell is not None})
    counted: dict[str, int] = {"graph break": 0}
    for finding in findings:
        if finding.diagnostic.code not in NOT_ANALYSED_CODES:
            kind = _what_it_is(finding.diagnostic.code)
            counted[kind] = counted.get(kind, 0) + 1
    found = [plural(count, kind) for kind, count in counted.items() if count]
    if unparsable:
        found.append(plural(unparsable, "file") + " that could not be analysed")
    if cells:
        found.append(plural(cells, "notebook cell") + " that could not be analysed")
    done = f" ({fixed} fixed)" if fixed else ""
    if not found:
        return f"No graph breaks {'left' if fixed else 'found'} in {plural(files, 'file')}{done}."
    with_findings = len({f.path for f in findings})
    checked = f" ({files} checked)" if with_findings != files else ""
    lines = [f"Found {' and '.join(found)}{done} in {plural(with_findings, 'file')}{checked}."]
    safe = sum(f.diagnostic.fix is not None and f.diagnostic.fix.applicability is Applicability.SAFE for f in findings)
    unsafe = sum(
        f.diagnostic.fix is not None and f.diagnostic.fix.applicability is Applicability.UNSAFE for f in findings
    )
    if unsafe_fixes:
        safe, unsafe = safe + unsafe, 0
    if safe:
        more = f" ({unsafe} more with `--unsafe-fixes`)" if unsafe else ""
        lines.append(f"[*] {safe} fixable with `--fix`{more}.")
    elif unsafe:
        lines.append(f"{plural(unsafe, 'unsafe fix')} available with `--fix --unsafe-fixes`.")
    return "\n".join(lines)


def _run_rules(args: argparse.Namespace) -> int:
    rows = [
        {
            "code": r.code,
            "name": r.name,
            "severity": r.severity.value,
            "fixable": r.fixable,
            "reason": r.reason,
            "reason_id": r.reason_id,
        }
        for r in api.RULES
    ]
    if args.output_format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['code']}  {row['name']:<28} {row['severity']:<12} {row['reason']}")
    return EXIT_CLEAN


def _run_rule(args: argparse.Namespace) -> int:
    if args.write_docs is not None:
        pages = api.rule_pages()
        args.write_docs.mkdir(parents=True, exist_ok=True)
        for name, page in pages.items():
            (args.write_docs / name).write_text(page, encoding="utf-8", newline="\n")
        print(f"Wrote {plural(len(pages), 'page')} to {args.write_docs}.")
        return EXIT_CLEAN
    if args.all:
        print("\n".join(api.rule_page(rule) for rule in api.RULES), end="")
        return EXIT_CLEAN
    rule = api.RULES_BY_CODE.get(args.code.upper())
    if rule is None:
        print(f"graphmend: error: no rule {args.code}; `graphmend rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    print(api.rule_page(rule), end="")
    return EXIT_CLEAN


def _run_record(args: argparse.Namespace) -> int:
    command = args.run_command[1:] if args.run_command[:1] == ["--"] else args.run_command
    root = api.project_root(Path.cwd())
    if args.import_trace is not None and command:
        print("graphmend: error: give either --import-trace or a command, not both", file=sys.stderr)
        return EXIT_ERROR
    if args.import_trace is None and not command:
        print(
            "graphmend: error: record needs a command after `--`, e.g. graphmend record -- python train.py",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        run = args.out or api.new_run(root)
        run.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        where = args.out or root / api.RUNS
        print(f"graphmend: error: cannot write the run to {where}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    if args.import_trace is not None:
        if not args.import_trace.exists():
            print(f"graphmend: error: {args.import_trace}: no such file or folder", file=sys.stderr)
            return EXIT_ERROR
        api.import_trace(args.import_trace, run, (root, *api.library_roots()))
        code = EXIT_CLEAN
    else:
        try:
            code, run = api.record_command(command, run, root)
        except OSError as error:
            print(f"graphmend: error: cannot run {command[0]}: {error.strerror or error}", file=sys.stderr)
            return EXIT_ERROR
    recorded = api.read_run(run)
    for line in api.run_report.summary(recorded, root):
        print(line, file=sys.stderr)
    if args.baseline is not None:
        return _against_baseline(args, recorded, root, code)
    report = api.run_report.events(recorded.events, root, args.output_format)
    if args.output_format != "text" and report:
        print(report)
    return code


def _against_baseline(args: argparse.Namespace, run: api.Run, root: Path, code: int) -> int:
    """`record --baseline`: write it, or compare the run with it (exit 1 on anything new)."""
    if args.write_baseline:
        count = api.write_baseline(run, root, args.baseline)
        print(f"graphmend: wrote {plural(count, 'event')} to {args.baseline}", file=sys.stderr)
        return code
    try:
        new, gone = api.compare_with_baseline(run, root, args.baseline)
    except (OSError, ValueError) as error:
        print(f"graphmend: error: cannot read the baseline {args.baseline}: {error}", file=sys.stderr)
        print(
            f"(write one with: graphmend record --baseline {args.baseline} --write-baseline -- COMMAND)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    report = api.run_report.events(new, root, args.output_format, "new since the baseline: ")
    if report:
        print(report)
    for gone_event in gone:
        user = gone_event.get("user") or gone_event.get("site") or {}
        print(
            f"graphmend: not met any more: {gone_event.get('kind')} {gone_event.get('what')} at {user.get('path')}: {user.get('text')}",
            file=sys.stderr,
        )
    if new:
        print(
            f"graphmend: {plural(len(new), 'event')} new since {args.baseline}; if expected, update it with --write-baseline",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    print(f"graphmend: nothing new since {args.baseline}", file=sys.stderr)
    return code


def _command_start(parser: argparse.ArgumentParser, argv: list[str], start: int) -> int | None:
    """Where `fix --prove`'s command starts when no `--` marks it: the first word after the options
    that is not a file or folder here, or is a program (`python`, `torchrun`, `/usr/bin/python3`), so `fix --prove src python train.py
    --epochs 3` fixes `src` and runs `python train.py --epochs 3`; None where every word names a path."""
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    fix = subcommands.choices["fix"]
    taking_values = {option for action in fix._actions if action.nargs != 0 for option in action.option_strings}
    index = start
    while index < len(argv):
        word = argv[index]
        if word.startswith("-"):
            index += 2 if word in taking_values else 1
            continue
        path = Path(word)
        if not path.exists() or (path.is_file() and os.access(path, os.X_OK) and path.suffix not in (".py", ".ipynb")):
            return index  # a program (`python`, `/usr/bin/python3`), not something to fix
        index += 1  # a file or folder to fix: `fix --prove src python train.py`
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    run_command: list[str] = []
    if "fix" in argv and "--" in argv[argv.index("fix") :]:  # `fix --prove -- COMMAND`: the command is not a path
        split = argv.index("--", argv.index("fix"))
        argv, run_command = argv[:split], argv[split + 1 :]
    elif "fix" in argv and "--prove" in argv:  # `fix --prove python train.py`, as `record` takes it
        start = _command_start(parser, argv, argv.index("fix") + 1)
        if start is not None:
            argv, run_command = argv[:start], argv[start:]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_ERROR if exit_.code not in (0, None) else EXIT_CLEAN
    args.run_command = run_command if args.command == "fix" else getattr(args, "run_command", [])
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        runners = {
            "check": _run_check,
            "fix": _run_fix,
            "verify": _run_verify,
            "record": _run_record,
            "rules": _run_rules,
            "rule": _run_rule,
        }
        return runners[args.command](args)
    except KeyboardInterrupt:  # Ctrl-C: as a shell reports it (`fix --prove` once its command has ended)
        print("graphmend: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    except BrokenPipeError:  # `graphmend check | head`: the reader has gone; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_ERROR
    except Exception as error:  # an internal bug: say so plainly, exit 2, no traceback at the user
        print(f"graphmend: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        print("Please report this with the file that triggered it.", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
