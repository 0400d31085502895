"""`graphmend check`: the command-line front over `graphmend.api`."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from . import __version__, api
from .checker import NOT_ANALYSED_CODES
from .diagnostics import Applicability, Diagnostic

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
    check.add_argument("--output-format", choices=("text", "json"), default="text")
    check.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    check.add_argument("--cache-dir", type=Path, default=None,
                       help="where unchanged files' results are kept (default: $GRAPHMEND_CACHE_DIR or .graphmend_cache)")
    check.add_argument("--no-cache", action="store_true", help="analyse every file, read and write no cache")
    fix = commands.add_parser("fix", help="rewrite graph breaks away (safe fixes; unsafe ones on request)")
    _add_selection_options(fix)
    fix.add_argument("--diff", action="store_true", help="print the changes as a unified diff; write nothing")
    fix.add_argument("--unsafe-fixes", action="store_true",
                     help="also apply fixes marked unsafe (their titles say what may change)")
    verify = commands.add_parser(
        "verify",
        help="run a file and its rewritten version under real Dynamo and compare them (EXECUTES the file)",
        description="This EXECUTES the code in FILE (the only graphmend command that does). It imports FILE "
        "and its rewritten twin, compiles ENTRY in each with torch.compile, calls it on every --inputs, and compares "
        "graphs, graph-break sites, fullgraph=True, outputs, and printed/logged/warned text. Needs torch "
        "(pip install 'graphmend[verify]').",
    )
    verify.add_argument("file", type=Path, metavar="FILE")
    verify.add_argument("--entry", required=True, metavar="NAME",
                        help="a function, nn.Module class or instance in FILE (dotted for attributes)")
    verify.add_argument("--inputs", action="append", required=True, metavar="EXPR",
                        help="arguments of one call, as a Python expression with `torch` in scope, "
                        "e.g. 'torch.randn(4), torch.randn(4)'; repeat for more calls")
    verify.add_argument("--unsafe-fixes", action="store_true", help="include fixes marked unsafe")
    rules = commands.add_parser("rules", help="list the rules and their codes")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    return parser


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH",
                        help="files or directories (recursive); default: the current directory")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also say which files were passed over and why (FIFOs, links out of the tree...)")
    parser.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report (default: GM)")
    parser.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes not to report")
    forward = parser.add_mutually_exclusive_group()
    forward.add_argument("--module-forward", dest="module_forward", action="store_true", default=None,
                         help="treat every nn.Module.forward as compiled (the default)")
    forward.add_argument("--no-module-forward", dest="module_forward", action="store_false",
                         help="only code reached from torch.compile counts as compiled")


def _codes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def diagnostic_json(diagnostic: Diagnostic, path: Path) -> dict[str, Any]:
    start, end = diagnostic.range.start, diagnostic.range.end
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "path": str(path),
        "line": start.line + 1,
        "column": start.character + 1,
        "end_line": end.line + 1,
        "end_column": end.character + 1,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "fix": None if fix is None else {"title": fix.title, "applicability": fix.applicability.value},
        "related": [
            {"path": _display_path(r.path) if r.path is not None else str(path), "line": r.range.start.line + 1,
             "column": r.range.start.character + 1, "message": r.message}
            for r in diagnostic.related
        ],
        "only_when": diagnostic.data.get("only_when", []),  # the configurations it breaks in; [] = every call
    }


def _display_path(path: str) -> str:
    """A path of another file as the user would write it: relative to the working folder when inside it."""
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    except ValueError:  # another drive (Windows)
        return path


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if args.select is not None:
        overrides["select"] = args.select
    if args.ignore is not None:
        overrides["ignore"] = args.ignore
    if args.module_forward is not None:
        overrides["module-forward-is-compiled"] = args.module_forward
    return overrides


def _missing_paths(args: argparse.Namespace) -> bool:
    missing = [str(p) for p in args.paths if not p.exists() and not p.is_symlink()]
    if missing:
        print(f"graphmend: error: no such file or directory: {', '.join(missing)}", file=sys.stderr)
    return bool(missing)


def _files(args: argparse.Namespace) -> list[Path]:
    """The files to work on; what is passed over is said when it was named, or with --verbose."""
    files, skipped = api.discover(args.paths)
    named = {str(p) for p in args.paths}
    for item in skipped:
        if args.verbose or str(item.path) in named:
            print(f"graphmend: {'note' if str(item.path) not in named else 'warning'}: {item.path}: {item.reason}; skipped",
                  file=sys.stderr)
    return files


def _run_fix(args: argparse.Namespace) -> int:
    if _missing_paths(args):
        return EXIT_ERROR
    try:
        files = _files(args)
        work = list(api.iter_settings(files, _overrides(args)))
        project = api.build_project(files, _overrides(args))
    except api.SettingsError as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    fixed = remaining = unsafe_available = 0
    failed = would_change = False
    for path, settings in work:
        result = api.fix_file(path, settings, unsafe=args.unsafe_fixes, write=not args.diff,
                              context=api.context_for(project, path))
        if result.error is not None:
            print(f"graphmend: warning: {path}: {result.error}", file=sys.stderr)
            failed = failed or result.internal_error
            remaining += len(result.remaining)
            continue
        if result.fixed != result.original:
            fixed += result.applied
            would_change = would_change or args.diff
            if args.diff:
                sys.stdout.writelines(difflib.unified_diff(
                    result.original.splitlines(keepends=True), result.fixed.splitlines(keepends=True),
                    fromfile=f"a/{path}", tofile=f"b/{path}"))
            else:
                print(f"{path}: fixed {_plural(result.applied, 'graph break')}")
        for d in result.remaining:
            remaining += 1
            if d.fix is not None and d.fix.applicability is Applicability.UNSAFE:
                unsafe_available += 1
    sys.stdout.flush()
    verb = "Would fix" if args.diff else "Fixed"
    summary = f"{verb} {_plural(fixed, 'graph break')}; {remaining} remaining"
    if unsafe_available and not args.unsafe_fixes:
        summary += f" ({unsafe_available} fixable with --unsafe-fixes)"
    print(summary + ".", file=sys.stderr if args.diff else sys.stdout)
    if failed:
        return EXIT_ERROR
    return EXIT_FINDINGS if remaining or would_change else EXIT_CLEAN


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
    print(f"{args.file}: {_plural(report.fixes_applied, 'fix')} applied to the twin")
    print(report.table())
    if report.after.fullgraph_error and not report.after.fullgraph:
        print(f"after, fullgraph=True: {report.after.fullgraph_error}")
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS


def _run_check(args: argparse.Namespace) -> int:
    overrides = _overrides(args)
    if _missing_paths(args):
        return EXIT_ERROR
    try:
        cache_dir = None if args.no_cache else (args.cache_dir or Path(os.environ.get("GRAPHMEND_CACHE_DIR", ".graphmend_cache")))
        results = api.check_paths(_files(args), overrides, jobs=args.jobs, cache_dir=cache_dir)
    except api.SettingsError as error:
        print(f"graphmend: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    findings = [(r.path, d) for r in results for d in r.diagnostics]
    unreadable = [r for r in results if r.error is not None]
    if args.output_format == "json":
        print(json.dumps([diagnostic_json(d, p) for p, d in findings], indent=2))
    else:
        for path, d in findings:
            print(f"{path}:{d.range.start.line + 1}:{d.range.start.character + 1}: {d.code} {d.message}")
        print(_summary(findings, len(results)))
    for result in unreadable:
        print(f"graphmend: warning: {result.path}: {result.error}; skipped", file=sys.stderr)
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'es' if noun.endswith('x') and count != 1 else 's' if count != 1 else ''}"


def _summary(findings: list[tuple[Path, Diagnostic]], files: int) -> str:
    unparsable = len({path for path, d in findings if d.code in NOT_ANALYSED_CODES})
    breaks = sum(d.code not in NOT_ANALYSED_CODES for _, d in findings)
    found = [_plural(breaks, "graph break")] if breaks else []
    if unparsable:
        found.append(_plural(unparsable, "file") + " that could not be analysed")
    head = f"Found {' and '.join(found)}" if found else "No graph breaks found"
    return f"{head} in {_plural(files, 'file')}."


def _run_rules(args: argparse.Namespace) -> int:
    rows = [
        {"code": r.code, "name": r.name, "severity": r.severity.value, "fixable": r.fixable,
         "reason": r.reason, "reason_id": r.reason_id}
        for r in api.RULES
    ]
    if args.output_format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['code']}  {row['name']:<28} {row['severity']:<12} {row['reason']}")
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_ERROR if exit_.code not in (0, None) else EXIT_CLEAN
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        runners = {"check": _run_check, "fix": _run_fix, "verify": _run_verify, "rules": _run_rules}
        return runners[args.command](args)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:  # `graphmend check | head`: the reader has gone; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_ERROR
    except Exception as error:  # an internal bug: say so plainly, exit 2, no traceback at the user
        print(f"graphmend: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        print("Please report this with the file that triggered it.", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
