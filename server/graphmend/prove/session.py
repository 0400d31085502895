"""A proof: the command run as it is, then with fixes served in its processes, compared.

1. The original run, with the lines each fix rewrites traced (only in those files): a fix whose
   lines never ran, and that met no break there, is *not exercised*.
2. A run with every exercised fix. Nothing differs: each is *proved*.
3. Something differs: the fixes are bisected, halves run on their own, until each difference is
   pinned on one fix (or on fixes that differ only together); those *differ*, and the rest is run
   once more together, so that what is proved was proved as it will be applied.

Each run is a recorder run (its compile events) plus the probe's observations, in its own folder
under `.graphmend/proofs/<proof>/`. Both runs get the same seeds, environment, cwd and standard
input (read once, given to every run; a terminal gives none).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import untrusted
from ..files import decode_source, read_bytes
from ..proof_records import DIFFERS, NOT_EXERCISED, PROOFS, PROVED
from ..record.runner import BOOT, LIBRARY, POSIX, forwarding, in_own_group
from ..record.runs import Run, make_room, read_run, stamp
from ..record.trace import GRAPH_BREAK, RECOMPILE
from ..reporting import plural
from .candidates import Candidate, line_map, rewritten
from .compare import Difference, LineMaps, Process, differences, masked, read_processes, unquoted, unshifted


@dataclass
class RunResult:
    folder: Path
    fixes: tuple[Candidate, ...]
    exit_code: int | None
    processes: list[Process]
    seconds: float
    recorded: Run  # its compile events, read once
    line_maps: LineMaps  # its rewritten files' lines in the originals' numbers


@dataclass
class Verdict:
    candidate: Candidate
    verdict: str
    differences: list[Difference] = field(default_factory=list)
    together_with: list[Candidate] = field(default_factory=list)  # fixes it differs only together with
    breaks_removed: int = 0  # break sites at its lines in the original run, gone with it
    breaks_before: int = 0
    measured_with: RunResult | None = None  # the run with it and the fewest other fixes: its graphs


@dataclass
class Proof:
    command: list[str]
    folder: Path
    verdicts: list[Verdict]
    runs: list[RunResult]
    original: RunResult
    torch: str | None
    seeds: list[str]  # what the command seeds itself, or that graphmend seeded it
    stdin: str  # "piped (N bytes, given to every run)", "a terminal: none", "none"
    final: RunResult | None = None  # the run with the proved fixes together
    # why the proof proves nothing: the command failed as it is, or two runs of it as it is differ
    failure: list[str] = field(default_factory=list)

    @property
    def processes(self) -> int:
        return len(self.original.processes)

    @property
    def steps(self) -> int:
        return sum(p.step_count for p in self.original.processes)

    @property
    def calls(self) -> int:
        return sum(len(p.calls) for p in self.original.processes)


Say = Callable[[str], None]


class Prover:
    """Runs the command for a proof and keeps what each run showed."""

    def __init__(
        self,
        command: list[str],
        root: Path,
        candidates: list[Candidate],
        workdir: Path | None = None,
        say: Say = lambda line: None,
        masks: tuple[re.Pattern[str], ...] = (),
    ) -> None:
        self.command = command
        self.masks = masks
        self.root = root
        self.candidates = candidates
        self.workdir = workdir
        self.say = say
        proofs = untrusted.owned_folders(root, PROOFS)  # not through a link a repository ships
        make_room(proofs, "proof.json")
        self.folder = proofs / stamp()
        self.runs: list[RunResult] = []
        self.stdin, self.stdin_note = _read_stdin()
        self._texts: dict[Path, str] = {}  # the files as the fixes were made for them, read now
        self._noise_checked = False
        for path in {c.path for c in candidates}:
            self._original(path)

    # ------------------------------------------------------------------ runs
    def run(self, fixes: tuple[Candidate, ...], trace_lines: bool = False) -> RunResult:
        name = f"fixes-{len(self.runs)}" if fixes else "original" if not self.runs else f"original-{len(self.runs)}"
        folder = self.folder / name
        folder.mkdir(parents=True)
        served: dict[str, str] = {}
        line_maps: dict[str, list[int]] = {}
        for path in sorted({c.path for c in fixes}):
            text = rewritten(path, fixes, self._original(path))
            served_file = folder / f"served-{len(served)}.py"
            served_file.write_text(text, encoding="utf-8")
            served[str(path)] = str(served_file)
            line_maps[os.path.realpath(path)] = line_map(self._original(path), text)
        lines: dict[str, list[int]] = {}
        if trace_lines:
            for candidate in self.candidates:
                lines.setdefault(str(candidate.path), []).extend(candidate.lines)
        plan = {"served": served, "lines": lines}
        (folder / "plan.json").write_text(json.dumps(plan, indent=1), encoding="utf-8")
        (folder / "line-maps.json").write_text(json.dumps(line_maps), encoding="utf-8")
        self.say(f"graphmend: run {len(self.runs) + 1}: {_what(fixes, trace_lines, bool(self.runs))}")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *filter(None, [env.get("PYTHONPATH")])])
        env["GRAPHMEND_RECORD_DIR"] = str(folder.resolve())
        env["GRAPHMEND_RECORD_LIB"] = str(LIBRARY)
        env["GRAPHMEND_PROVE_PLAN"] = str((folder / "plan.json").resolve())
        env.setdefault("PYTHONHASHSEED", "0")
        cwd = None
        if self.workdir is not None:  # a fresh folder per run, never one an earlier proof left
            cwd = self.workdir / f"{self.folder.name}-{name}"
            cwd.mkdir(parents=True)
        started = time.monotonic()
        received: list[int] = []
        with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
            try:
                process = subprocess.Popen(  # noqa: PLW1509  (in a group of its own, as `record` runs it)
                    self.command,
                    env=env,
                    cwd=cwd,
                    stdin=subprocess.PIPE,
                    stdout=out,
                    stderr=err,
                    preexec_fn=in_own_group() if POSIX else None,
                )
            except OSError:
                if not self.runs:  # nothing ran: no proof to keep
                    shutil.rmtree(self.folder, ignore_errors=True)
                raise
            with forwarding(process.pid, received) if POSIX else contextlib.nullcontext():
                try:
                    process.communicate(self.stdin)
                except KeyboardInterrupt:  # not forwarded (off the main thread): the command ends its way
                    received.append(signal.SIGINT)
                    process.wait()
        if received:  # the user stopped the proof: no verdict rests on a run cut short
            raise KeyboardInterrupt if received[0] == signal.SIGINT else SystemExit(128 + received[0])
        seconds = time.monotonic() - started
        (folder / "run.json").write_text(
            json.dumps({"argv": self.command, "exit_code": process.returncode, "seconds": seconds}), encoding="utf-8"
        )
        result = RunResult(
            folder, fixes, process.returncode, read_processes(folder), seconds, read_run(folder), line_maps
        )
        self.runs.append(result)
        return result

    def compare(self, original: RunResult, fixed: RunResult) -> list[Difference]:
        """What `fixed` does not do as `original` did; the first time something differs, the
        command runs once more as it is, and what differs between its own two runs ends the proof
        (`_Noisy`): no fix is blamed for the command's noise."""
        found = self._differences(original, fixed)
        if found and not self._noise_checked:
            self._noise_checked = True
            noise = self._differences(original, self.run(()))
            if noise:
                raise _Noisy(noise)
        return found

    def _differences(self, original: RunResult, fixed: RunResult) -> list[Difference]:
        line_maps = fixed.line_maps
        found = differences(original.processes, fixed.processes, line_maps, self.masks)
        loaded = {path for process in fixed.processes for path in process.served}
        for path in sorted({os.path.realpath(c.path) for c in fixed.fixes} - loaded):
            found.append(Difference("the command", "rewrite", path, "no process ran the rewritten file"))
        if original.exit_code != fixed.exit_code:
            found.append(
                Difference("the command", "exit code", "", f"{original.exit_code} before, {fixed.exit_code} after")
            )
        if not found and len(original.processes) <= 1:
            # what no Python process wrote through sys.stdout (a C extension, a child program); with
            # several processes, how their lines interleave is up to the scheduler: each one's own is compared
            for stream in ("stdout.txt", "stderr.txt"):
                before = masked(unquoted(_program_text(original, stream), line_maps), self.masks)
                after = masked(unquoted(unshifted(_program_text(fixed, stream), line_maps), line_maps), self.masks)
                if before != after:
                    found.append(Difference("the command", stream.removesuffix(".txt"), "", "its output differs"))
        return found

    def original_text(self, path: Path) -> str:
        """The text of `path` the fixes were made for (read once, at the first run that served it)."""
        return self._original(path)

    def _original(self, path: Path) -> str:
        if path not in self._texts:
            self._texts[path] = decode_source(read_bytes(path))[0]
        return self._texts[path]

    # ------------------------------------------------------------------ the proof
    def prove(self) -> Proof:
        original = self.run((), trace_lines=True)
        if original.exit_code:  # a run that fails proves nothing (issue 69)
            return self._failed(original, _failed_words(original))
        try:
            return self._verdicts(original)
        except _Noisy as noisy:
            return self._failed(original, _noise_words(noisy.differences))

    def _failed(self, original: RunResult, failure: list[str]) -> Proof:
        return Proof(
            self.command,
            self.folder,
            [],
            self.runs,
            original,
            original.recorded.torch,
            _seeds(original.processes),
            self.stdin_note,
            None,
            failure,
        )

    def _verdicts(self, original: RunResult) -> Proof:
        exercised = [c for c in self.candidates if _exercised(c, original)]
        verdicts = {id(c): Verdict(c, NOT_EXERCISED) for c in self.candidates}
        final = None
        if exercised:
            differing = self._bisect(original, tuple(exercised), None)
            for candidate, (found, together) in differing.items():
                verdicts[id(candidate)].verdict = DIFFERS
                verdicts[id(candidate)].differences = found
                verdicts[id(candidate)].together_with = together
            proved = tuple(c for c in exercised if c not in differing)
            while proved and differing:  # prove the rest as it will be applied: together
                confirm = self.run(proved)
                found = self.compare(original, confirm)
                if not found:
                    final = confirm
                    break
                more = self._bisect(original, proved, found)
                for candidate, (found_here, together) in more.items():
                    verdicts[id(candidate)].verdict = DIFFERS
                    verdicts[id(candidate)].differences = found_here
                    verdicts[id(candidate)].together_with = together
                differing.update(more)
                proved = tuple(c for c in proved if c not in more)
            for candidate in proved:
                verdicts[id(candidate)].verdict = PROVED
            if final is None and proved and not differing:
                final = next(r for r in self.runs if r.fixes == proved)
        for verdict in verdicts.values():
            self._breaks(verdict, original)
        return Proof(
            self.command,
            self.folder,
            list(verdicts.values()),
            self.runs,
            original,
            original.recorded.torch,
            _seeds(original.processes),
            self.stdin_note,
            final,
        )

    def _bisect(
        self, original: RunResult, fixes: tuple[Candidate, ...], known: list[Difference] | None
    ) -> dict[Candidate, tuple[list[Difference], list[Candidate]]]:
        """The fixes among `fixes` that make the run differ, with what differed; `known`: what the
        run with all of `fixes` is already known to show."""
        found = known if known is not None else self.compare(original, self.run(fixes))
        if not found:
            return {}
        if len(fixes) == 1:
            return {fixes[0]: (found, [])}
        half = len(fixes) // 2
        first = self._bisect(original, fixes[:half], None)
        second = self._bisect(original, fixes[half:], None)
        if first or second:
            return {**first, **second}
        # each half alone changes nothing: they differ only together
        return {c: (found, [o for o in fixes if o is not c]) for c in fixes}

    def _breaks(self, verdict: Verdict, original: RunResult) -> None:
        """The breaks the fix's lines met in the original run, and how many the run with it left."""
        candidate = verdict.candidate
        before = _break_lines(original, candidate)
        verdict.breaks_before = len(before)
        with_it = [r for r in self.runs if candidate in r.fixes]
        if with_it:
            verdict.measured_with = min(with_it, key=lambda r: len(r.fixes))
        if before and with_it:
            run = max(with_it, key=lambda r: len(r.fixes))
            after = _break_lines(run, candidate, run.line_maps.get(os.path.realpath(candidate.path)))
            verdict.breaks_removed = len(before - after)


class _Noisy(Exception):
    """Two runs of the command as it is differ: what differs is the command's, not a fix's."""

    def __init__(self, differences: list[Difference]) -> None:
        super().__init__(str(differences[0]))
        self.differences = differences


# Kinds of difference that are text a run writes: `--mask` hides what varies in them.
_TEXT_KINDS = frozenset({"stdout", "stderr", "log", "warning"})


def _failed_words(original: RunResult) -> list[str]:
    """The failure of the original run, with the end of its stderr."""
    tail = [line for line in _program_text(original, "stderr.txt").splitlines() if line.strip()][-6:]
    return [
        f"the command fails as it is (exit code {original.exit_code}): nothing is proved, nothing applied",
        *(f"    {line[:200]}" for line in tail),
    ]


def _noise_words(noise: list[Difference]) -> list[str]:
    """What differed between two runs of the command as it is, and how to keep it out of a proof."""
    words = [
        "two runs of the command as it is differ, so no fix can be judged on it: nothing is proved, nothing applied",
        *(f"    {difference}" for difference in noise[:5]),
    ]
    if any(d.kind in _TEXT_KINDS for d in noise):
        words.append(
            "    text that varies from run to run (a clock, a duration, an id) can be masked: --mask REGEX (repeatable)"
        )
    words.append(
        "    a command that reads what an earlier run wrote (a checkpoint it resumes from, a cache) can run in fresh "
        "folders: --workdir DIR"
    )
    return words


def graphs(run: RunResult) -> int:
    return sum(f["graphs"] for p in run.processes for f in p.functions.values())


def recompiles(run: RunResult) -> int:
    return sum(e.count for e in run.recorded.events if e.kind == RECOMPILE)


def _break_lines(run: RunResult, candidate: Candidate, lines: list[int] | None = None) -> set[int]:
    """The lines of `candidate` at which `run` met a graph break (in the original's numbers)."""
    real = os.path.realpath(candidate.path)
    found = set()
    for event in run.recorded.events:
        if event.kind != GRAPH_BREAK:
            continue
        for frame in event.frames:
            if os.path.realpath(frame["path"]) != real:
                continue
            line = frame["line"]
            if lines is not None and 0 < line <= len(lines):
                line = lines[line - 1]
            if line in candidate.lines:
                found.add(line)
    return found


def _exercised(candidate: Candidate, original: RunResult) -> bool:
    real = os.path.realpath(candidate.path)
    ran = any(
        os.path.realpath(path) == real and line in candidate.lines for p in original.processes for path, line in p.lines
    )
    return ran or bool(_break_lines(original, candidate))


def _seeds(processes: list[Process]) -> list[str]:
    seeded: dict[str, str] = {}
    for process in processes:
        for library, where in process.seeds.items():
            seeded.setdefault(library, where)
    said = [f"the command seeds {library} itself ({where})" for library, where in sorted(seeded.items())]
    rest = [library for library in ("torch", "random", "numpy") if library not in seeded]
    if rest:
        said.append(f"graphmend seeded {', '.join(rest)} with 0 in each process (the command does not)")
    return said


def _read_stdin() -> tuple[bytes, str]:
    """The standard input, read once for every run: piped text is given to each; a terminal gives none."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return b"", "none"
    try:
        if stream.isatty():
            return b"", "a terminal: each run reads an empty standard input"
        data = stream.buffer.read()
    except (OSError, ValueError, AttributeError):
        return b"", "none"
    return data, f"piped ({len(data)} bytes, given to every run)" if data else "empty"


def _program_text(run: RunResult, stream: str) -> str:
    """The command's output, less what torch's compile loggers wrote (about graph breaks a fix removes)."""
    text = (run.folder / stream).read_bytes().decode("utf-8", errors="replace")
    for process in run.processes:
        for chunk in process.compile_text:
            text = text.replace(chunk, "", 1)
    return text


def _what(fixes: tuple[Candidate, ...], traced: bool, again: bool) -> str:
    if fixes:
        return f"with {plural(len(fixes), 'fix')} served"
    if again:
        return "the command as it is, again (what differs between its own runs is no fix's doing)"
    return "the command as it is" + (" (tracing the lines the fixes rewrite)" if traced else "")
