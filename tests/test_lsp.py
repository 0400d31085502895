"""End-to-end tests of graphmend-lsp over stdio, under VS Code's and Neovim's client capabilities.

VS Code 1.65 gets pushed diagnostics, UTF-16 columns and versioned TextDocumentEdits; Neovim 0.11
pulls diagnostics, negotiates UTF-8 and takes plain `changes` edits. Every test runs under both.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import pytest_lsp
from conftest import ROOT, SAFE_FIGURE1
from lsp_helpers import (
    accept_registrations,
    apply_edits,
    change_document,
    code_actions,
    diagnostics,
    open_document,
    text_edits,
    uses_pull,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIGURE1 = SAFE_FIGURE1
PRINTS = """import torch


@torch.compile
def f(x):
    y = torch.relu(x)
    print("relu:", y)
    return y
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]),
    params=["visual_studio_code", "neovim"],
)
async def client(request, lsp_client: LanguageClient):
    accept_registrations(lsp_client)
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=ROOT.as_uri(),
            # The documents live in tmp_path: indexing this repository would only slow each start
            # (test_lsp_project and test_workspace_index test the index).
            initialization_options={"graphmend": {"debounce": 20, "index": False}},
        )
    )
    encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    lsp_client.encoding = "utf-8" if encoding == types.PositionEncodingKind.Utf8 else "utf-16"
    yield
    await lsp_client.shutdown_session()


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path.as_uri()


async def test_open_change_close(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, uri, FIGURE1)
    (diagnostic,) = await diagnostics(client, uri)
    assert diagnostic.code == "GM101" and diagnostic.source == "graphmend"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.range == types.Range(types.Position(9, 7), types.Position(9, 19))
    assert diagnostic.code_description.href.endswith("/gb0170.html")
    assert diagnostic.data["fix"]["applicability"] == "safe"
    assert "z = _exact_where(cond, z_if, z_else)" in diagnostic.data["fix"]["edits"][-1]["newText"]
    assert diagnostic.related_information and "compiled" in diagnostic.related_information[0].message

    change_document(client, uri, FIGURE1 + PRINTS.split("\n", 1)[1].replace("def f", "def g"), 2)
    assert {d.code for d in await diagnostics(client, uri)} == {"GM101", "GM201"}

    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    assert await diagnostics(client, uri) == []


async def test_quick_fix_removes_the_break(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, uri, FIGURE1)
    (diagnostic,) = await diagnostics(client, uri)
    actions = await code_actions(client, uri, diagnostic)
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "torch.where" in a.title)
    assert fix.is_preferred
    if fix.edit is None:  # lazily resolved
        fix = await client.code_action_resolve_async(fix)
    edits, version = text_edits(fix.edit, uri)
    assert version in (1, None)
    fixed = apply_edits(FIGURE1, edits, client.encoding)
    assert "z = _exact_where(cond, z_if, z_else)" in fixed
    ast.parse(fixed)
    change_document(client, uri, fixed, 2)
    assert await diagnostics(client, uri) == []


async def test_a_quick_fix_resolves_from_the_fix_its_diagnostic_carries(client: LanguageClient, tmp_path: Path) -> None:
    """Issue 40: the code action needs no copy of the analysis on the server: an action whose
    `data` names no analysis the server has (version 0, an index out of range) resolves from the
    fix in its diagnostic's `data`, computed for the document's current version."""
    uri = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, uri, FIGURE1)
    (diagnostic,) = await diagnostics(client, uri)
    action = types.CodeAction(
        title="graphmend: fix",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        data={"uri": uri, "version": 0, "index": 10**6},
    )
    resolved = await client.code_action_resolve_async(action)
    assert resolved.edit is not None
    fixed = apply_edits(FIGURE1, text_edits(resolved.edit, uri)[0], client.encoding)
    assert "z = _exact_where(cond, z_if, z_else)" in fixed
    change_document(client, uri, "# a new first line\n" + FIGURE1, 2)
    await diagnostics(client, uri)
    stale = await client.code_action_resolve_async(action)  # carried for version 1: not applied to 2
    assert stale.edit is None


async def test_fix_all_and_command(client: LanguageClient, tmp_path: Path) -> None:
    # two safe fixes (a message's fix is never safe since issue 50, a masked write's since issue 67): two `if`s
    second = "\n\n@torch.compile\ndef g(h):\n    h = h * 2\n    if h.sum() > 0:\n        h = h + 1\n    return h\n"
    text = FIGURE1 + second
    uri = write(tmp_path, "both.py", text)
    open_document(client, uri, text)
    assert len(await diagnostics(client, uri)) == 2
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert actions is not None
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.graphmend"
    if fix_all.edit is None:
        fix_all = await client.code_action_resolve_async(fix_all)
    fixed = apply_edits(text, text_edits(fix_all.edit, uri)[0], client.encoding)
    assert "z = _exact_where(cond, z_if, z_else)" in fixed and "h = _exact_where(" in fixed
    change_document(client, uri, fixed, 2)
    assert await diagnostics(client, uri) == []
    diff = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="graphmend.showFixDiff", arguments=[uri])
    )
    assert diff == ""  # nothing left to rewrite


async def test_ignore_comment_action(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "prints.py", PRINTS)
    open_document(client, uri, PRINTS)
    (diagnostic,) = await diagnostics(client, uri)
    actions = await code_actions(client, uri, diagnostic)
    ignore = next(a for a in actions if a.title == "graphmend: ignore GM201 on this line")
    assert not ignore.is_preferred
    suppressed = apply_edits(PRINTS, text_edits(ignore.edit, uri)[0], client.encoding)
    assert 'print("relu:", y)  # graphmend: ignore[GM201]' in suppressed
    change_document(client, uri, suppressed, 2)
    assert await diagnostics(client, uri) == []


async def test_hover_explains_and_previews(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, uri, FIGURE1)
    await diagnostics(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(9, 10))
    )
    text = hover.contents.value
    # the action first, with its preview; then one paragraph of why; then Dynamo's page
    assert text.startswith("**Fix (safe):** Compute both branches and select with `torch.where`\n```python\n")
    assert "z = _exact_where(cond, z_if, z_else)" in text and text.endswith("gb0170.html)")
    assert len(re.sub(r"```.*?```", "", text, flags=re.S).split()) <= 80
    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 0))
    )
    assert nothing is None


HANDED_OVER = (ROOT / "tests" / "fixtures" / "GM501" / "helper_passed_to_compiled.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with one real recorded run of two programs (`graphmend record` of one process that
    runs both): recorded once for the tests that only read it, whichever client."""
    import subprocess

    project = tmp_path_factory.mktemp("recorded")
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "figure1.py").write_text(FIGURE1 + "\nf(torch.ones(3) * 20, torch.ones(3))\n", encoding="utf-8")
    (project / "handed.py").write_text(HANDED_OVER, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "graphmend", "record", "--", sys.executable, "-c",
         "import runpy; runpy.run_path('figure1.py', run_name='__main__'); runpy.run_path('handed.py', run_name='__main__')"],
        cwd=project, check=True, capture_output=True,
    )  # fmt: skip
    return project


async def test_a_finding_the_last_recorded_run_met_is_confirmed_in_the_editor(
    client: LanguageClient, recorded: Path
) -> None:
    """Issue 41: with a run under the project's .graphmend/runs/ (`graphmend record`), a finding on
    a line the run met carries `run` in its data and the hover says so, also after an unsaved edit
    moved the line; a line whose text the edit changed is no longer confirmed."""
    uri = (recorded / "figure1.py").as_uri()
    edited = "# an unsaved line above\n" + FIGURE1
    open_document(client, uri, edited)
    (diagnostic,) = await diagnostics(client, uri)
    assert diagnostic.range.start.line == 10 and diagnostic.data["run"]["count"] >= 1
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(10, 10))
    )
    assert "Confirmed: the run of " in hover.contents.value
    change_document(client, uri, edited.replace("x.sum() > 10", "x.sum() > 11"), 2)
    (changed,) = await diagnostics(client, uri)
    assert "run" not in changed.data


async def test_a_function_the_recorded_run_shows_compiled_is_analysed_as_compiled(
    client: LanguageClient, recorded: Path
) -> None:
    """Issues 41 and 51: a real recorded run of a program whose helpers reach compiled code only
    through an argument: the run is in the analysis, so the helpers are compiled code and their
    breaks are the static rules' findings (GM101, GM201), confirmed by the run; the quick fix is
    GM101's rewrite, which the run's line then no longer matches; the recompile on the helper's
    identity is the run's own finding (GM502)."""
    uri = (recorded / "handed.py").as_uri()
    open_document(client, uri, HANDED_OVER)
    found = await diagnostics(client, uri)
    assert [(d.range.start.line + 1, d.code) for d in found] == [(6, "GM101"), (12, "GM201"), (17, "GM502")]
    branch = found[0]
    assert branch.data["run"]["count"] >= 1 and "dynamo" not in branch.data
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=branch.range.start)
    )
    assert hover.contents.value.startswith("**Fix (safe):** Compute both branches")
    assert "Confirmed: the run of " in hover.contents.value
    fix = next(a for a in await code_actions(client, uri, branch) if "torch.where" in a.title)
    if fix.edit is None:  # lazily resolved
        fix = await client.code_action_resolve_async(fix)
    fixed = apply_edits(HANDED_OVER, text_edits(fix.edit, uri)[0], client.encoding)
    change_document(client, uri, fixed, 2)
    assert [d.code for d in await diagnostics(client, uri)] == ["GM201", "GM502"]  # the print, the recompile


async def test_the_newest_runs_status_and_a_new_run_marks_the_open_documents(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Issue 41: `graphmend/runStatus` is null without a run. The command line
    `graphmend.recordCommand` gives records the script into its project's runs; after
    `graphmend.runRecorded` the open document's finding is confirmed with no edit, and the status
    names the run, its events and torch. An unsaved edit of the line's text makes its event stale;
    the run deleted, seen by the file watchers, takes the mark away."""
    import asyncio
    import shutil
    import subprocess

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    text = FIGURE1 + "\nf(torch.ones(3) * 20, torch.ones(3))\n"
    uri = write(tmp_path, "figure1.py", text)

    async def status() -> dict | None:
        answer = await client.protocol.send_request_async("graphmend/runStatus", {"uri": uri})
        return answer._asdict() if answer is not None else None  # pygls gives a custom method's object as a tuple

    async def command(name: str, *arguments: object) -> dict | None:
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        )

    assert await status() is None
    open_document(client, uri, text)
    (diagnostic,) = await diagnostics(client, uri)
    assert "run" not in diagnostic.data
    record = await command("graphmend.recordCommand", uri)
    assert record["cwd"] == str(tmp_path.resolve())
    assert record["command"][-2:] == [sys.executable, str(tmp_path / "figure1.py")]
    subprocess.run(record["command"], cwd=record["cwd"], check=True, capture_output=True)
    await command("graphmend.runRecorded")
    (confirmed,) = await diagnostics(client, uri)
    assert confirmed.data["run"]["count"] >= 1
    found = await status()
    (folder,) = (tmp_path / ".graphmend" / "runs").iterdir()
    assert found["run"] == folder.name and found["stale"] == 0 and found["events"] >= 1
    assert found["torch"].startswith("2.") and abs(found["recordedAt"] - folder.stat().st_mtime) < 60

    change_document(client, uri, text.replace("x.sum() > 10", "x.sum() > 11"), 2)
    (changed,) = await diagnostics(client, uri)
    assert "run" not in changed.data and (await status())["stale"] == 1
    change_document(client, uri, text, 3)
    (again,) = await diagnostics(client, uri)
    assert "run" in again.data

    shutil.rmtree(folder)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(folder / "run.json").as_uri(), type=types.FileChangeType.Deleted)]
        )
    )
    for _ in range(40):  # the server waits for the run's files to rest (1 s); a pulling client asks again
        (gone,) = await diagnostics(client, uri)
        if "run" not in gone.data:
            break
        await asyncio.sleep(0.25)
    assert "run" not in gone.data and await status() is None


LIBRARY_CALLER = """import torch
import fourlib


@torch.compile(backend="eager")
def step(x):
    x = fourlib.report(x)
    return x * 0.5
"""


async def test_a_library_break_offers_the_escape_hatch_at_the_call(client: LanguageClient, tmp_path: Path) -> None:
    """Issue 53: a run's breaks at two lines inside a library the user's line calls: one GM501
    finding with both library lines as related information, and the unsafe quick fix that
    disables the callee at the call."""
    import json

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    uri = write(tmp_path, "prog.py", LIBRARY_CALLER)
    library = "/opt/venv/lib/python3.11/site-packages/fourlib/__init__.py"
    user = {"path": str(tmp_path / "prog.py"), "line": 7, "func": "step", "text": "x = fourlib.report(x)"}
    events = [
        {"id": str(line), "kind": "graph_break", "reason": "Failed to trace builtin operator: print",
         "gb_type": "Failed to trace builtin operator", "frames": [user, {"path": library, "line": line,
         "func": "report", "text": "print(x)"}], "files": {}}
        for line in (2, 3)
    ]  # fmt: skip
    run = tmp_path / ".graphmend" / "runs" / "20261128-000000-1"
    run.mkdir(parents=True)
    lines = [{"header": {"torch": "2.13.0", "started": 1.0}}, *events, {"again": "2"}]
    (run / "process-1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (run / "run.json").write_text(json.dumps({"started": 1.0, "ended": 2.0, "exit_code": 0}))
    open_document(client, uri, LIBRARY_CALLER)
    (diagnostic,) = await diagnostics(client, uri)
    assert diagnostic.code == "GM501" and diagnostic.range.start.line == 6
    related = [
        (Path(r.location.uri).name, r.location.range.start.line, r.message)
        for r in diagnostic.related_information or []
    ]
    assert related == [
        ("__init__.py", 1, "Dynamo broke the graph here, in `report` (2 times)"),
        ("__init__.py", 2, "Dynamo broke the graph here, in `report`"),
    ], related
    fix = next(a for a in await code_actions(client, uri, diagnostic) if "torch.compiler.disable" in a.title)
    assert not fix.is_preferred
    if fix.edit is None:  # lazily resolved
        fix = await client.code_action_resolve_async(fix)
    fixed = apply_edits(LIBRARY_CALLER, text_edits(fix.edit, uri)[0], client.encoding)
    assert "    x = torch.compiler.disable(fourlib.report)(x)\n" in fixed


async def test_prove_fixes_on_a_run_gives_each_fix_its_verdict(client: LanguageClient, tmp_path: Path) -> None:
    """Issue 52: `graphmend.proveCommand` gives the command line that proves the project's fixes on a
    run of the script (`fix --prove`); after it and `graphmend.runRecorded`, the finding carries its
    fix's verdict, the hover says it and the code action's title too. The LayerDrop fix gives a
    dropped layer a zero gradient instead of none: it differs, and is not applied."""
    import shutil
    import subprocess

    shutil.copytree(ROOT / "tests" / "prove_programs" / "layerdrop", tmp_path / "p")
    project = tmp_path / "p"
    text = (project / "model.py").read_text(encoding="utf-8")
    uri = (project / "model.py").as_uri()
    open_document(client, uri, text)
    (diagnostic,) = await diagnostics(client, uri)
    assert "proof" not in diagnostic.data
    prove = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="graphmend.proveCommand",
            arguments=[(project / "train.py").as_uri(), [], sys.executable, None, True],
        )
    )
    assert prove["command"][-6:] == [
        "fix",
        "--prove",
        "--unsafe-fixes",
        "--",
        sys.executable,
        str(project / "train.py"),
    ]
    subprocess.run(prove["command"], cwd=prove["cwd"], check=True, capture_output=True, timeout=300)
    assert (project / "model.py").read_text(encoding="utf-8") == text  # a fix that differs is not applied
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.runRecorded"))
    (proved,) = await diagnostics(client, uri)
    assert proved.data["proof"]["verdict"] == "differs" and proved.data["proof"]["steps"] == 3
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=proved.range.start)
    )
    assert "\n\n*Changes behaviour on your run of `" in hover.contents.value  # right below the fix's title
    (action,) = [a for a in await code_actions(client, uri, proved) if "ignore" not in a.title]
    assert "unsafe; changes behaviour on your run of" in action.title and not action.is_preferred


async def test_hover_on_a_cuda_graph_blocker_says_why(client: LanguageClient, tmp_path: Path) -> None:
    """GM4xx findings are not graph breaks: their why has its own heading, and the hover shows it."""
    text = (ROOT / "tests" / "fixtures" / "GM401" / "fix_scalar_buffer.in.py").read_text(encoding="utf-8")
    uri = write(tmp_path, "scaled.py", text)
    open_document(client, uri, text)
    (diagnostic,) = await diagnostics(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start)
    )
    text = hover.contents.value
    assert text.startswith("**Fix (unsafe):** Register `scale` as a non-persistent buffer")
    assert "*May change:* 2 things, listed below." in text and "`.half()`" in text
    assert "**GM401**" in text and "CUDA graphs:" in text


async def test_settings_from_the_editor(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "prints.py", PRINTS)
    open_document(client, uri, PRINTS)
    assert [d.code for d in await diagnostics(client, uri)] == ["GM201"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"graphmend": {"ignore": ["GM2"], "debounce": 20}})
    )
    assert await diagnostics(client, uri) == []
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"graphmend": {"debounce": 20}})
    )
    assert [d.code for d in await diagnostics(client, uri)] == ["GM201"]


async def test_settings_from_pyproject(client: LanguageClient, tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.graphmend]\nignore = ["GM201"]\n')
    uri = write(tmp_path, "prints.py", PRINTS)
    open_document(client, uri, PRINTS)
    assert await diagnostics(client, uri) == []
    pyproject.write_text("[tool.graphmend]\nignore = []\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=pyproject.as_uri())))
    assert [d.code for d in await diagnostics(client, uri)] == ["GM201"]


async def test_syntax_error_keeps_the_server_and_other_files(client: LanguageClient, tmp_path: Path) -> None:
    good = write(tmp_path, "prints.py", PRINTS)
    bad = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, good, PRINTS)
    assert [d.code for d in await diagnostics(client, good)] == ["GM201"]
    open_document(client, bad, FIGURE1)
    await diagnostics(client, bad)
    change_document(client, bad, FIGURE1.replace("if x.sum() > 10:", "if x.sum() >"), 2)
    (error,) = await diagnostics(client, bad)
    assert error.code == "GM001" and error.severity == types.DiagnosticSeverity.Error
    assert error.range.start.line == 9
    if uses_pull(client):
        assert [d.code for d in await diagnostics(client, good)] == ["GM201"]
    else:
        assert [d.code for d in client.diagnostics[good]] == ["GM201"]
    assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_non_ascii_columns(client: LanguageClient, tmp_path: Path) -> None:
    text = FIGURE1.replace(
        "    return torch.relu(z)\n", "    z = ('😀é', z)[1] if x.sum() > 0 else z  # ü\n    return torch.relu(z)\n"
    )
    uri = write(tmp_path, "unicode.py", text)
    open_document(client, uri, text)
    ternary = next(d for d in await diagnostics(client, uri) if d.code == "GM102")
    line = text.split("\n")[13]
    prefix = line[: line.index("x.sum()")]
    units = len(prefix.encode("utf-8")) if client.encoding == "utf-8" else len(prefix.encode("utf-16-le")) // 2
    assert ternary.range.start == types.Position(13, units)


async def test_stale_code_action_is_not_applied(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "figure1.py", FIGURE1)
    open_document(client, uri, FIGURE1)
    (diagnostic,) = await diagnostics(client, uri)
    actions = await code_actions(client, uri, diagnostic)
    fix = next(a for a in actions if "torch.where" in a.title)
    change_document(client, uri, "# a new first line\n" + FIGURE1, 2)
    await diagnostics(client, uri)
    if fix.edit is None:
        resolved = await client.code_action_resolve_async(fix)
        assert resolved.edit is None and resolved.disabled is not None
    else:
        assert text_edits(fix.edit, uri)[1] == 1  # versioned: the editor refuses it for version 2


FP16_GUARD = """import torch


class Layer(torch.nn.Module):
    def forward(self, hidden_states):
        if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():
            hidden_states = torch.clamp(hidden_states, min=-1000, max=1000)
        if self.training:
            print("step", hidden_states.sum())
        return hidden_states
"""


async def test_diagnostics_say_the_configuration_they_break_in(client: LanguageClient, tmp_path: Path) -> None:
    uri = write(tmp_path, "layer.py", FP16_GUARD)
    open_document(client, uri, FP16_GUARD)
    found = {d.code: d for d in await diagnostics(client, uri)}
    assert found["GM101"].data["only_when"] == ["hidden_states.dtype == torch.float16"]
    assert "breaks only when" not in found["GM101"].message  # one sentence; the condition is data and hover
    assert found["GM201"].data["only_when"] == ["self.training"]

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"graphmend": {"assumeTraining": False, "assumeDtypes": ["bfloat16"], "debounce": 20}}
        )
    )
    assert await diagnostics(client, uri) == []  # an eval model in bfloat16 hits neither break
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"graphmend": {"assumeTraining": True, "debounce": 20}})
    )
    assert {d.code for d in await diagnostics(client, uri)} == {"GM101", "GM201"}


async def test_code_copied_out_of_transformers(client: LanguageClient, tmp_path: Path) -> None:
    """Flagged under a base from an unseen package; not behind a relative `is_torchdynamo_compiling()`."""
    text = (ROOT / "tests" / "data" / "copied_transformers_layer.py").read_text(encoding="utf-8")
    uri = write(tmp_path, "modeling_foo.py", text)
    open_document(client, uri, text)
    (diagnostic,) = await diagnostics(client, uri)
    assert (diagnostic.code, diagnostic.range.start.line) == ("GM101", 16)
    assert diagnostic.related_information is not None
    compiled, *chain = diagnostic.related_information
    assert "`FooLayer` is taken for an nn.Module" in compiled.message
    assert [(r.message, r.location.range.start.line) for r in chain] == [
        ("`h` ← `self.proj(x)`", 15),
        ("`x`: a parameter of `FooLayer.forward`", 14),
    ]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(16, 12))
    )
    assert "`h` ← `self.proj(x)`" not in hover.contents.value  # the hover leads with the action; the rows say why


RESUMED_CALL = """import torch


class Layer(torch.nn.Module):
    def forward(self, h: torch.Tensor, mask: torch.BoolTensor):
        return h.masked_scatter(
            mask.unsqueeze(-1),
            h[mask] * 2,
        )
"""


async def test_a_break_in_a_calls_arguments_names_the_calls_second_break(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = write(tmp_path, "layer.py", RESUMED_CALL)
    open_document(client, uri, RESUMED_CALL)
    (diagnostic,) = await diagnostics(client, uri)
    assert (diagnostic.code, diagnostic.range.start.line) == ("GM302", 7)
    (resumed,) = [r for r in diagnostic.related_information if r.message.startswith("Dynamo breaks here too")]
    assert resumed.location.range.start == types.Position(5, 17)  # `masked_scatter`, the line Dynamo reports
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(7, 12))
    )
    # What to do leads (the refusal's own action: a setting where the model is compiled), then why no fix.
    assert hover.contents.value.startswith("**What to do:** Set `torch._dynamo.config.capture_dynamic_output_shape_ops")
    assert "*No automatic fix:*" in hover.contents.value
    assert "Dynamo breaks here too" not in hover.contents.value  # the second break is a related row


CPU_ATTRIBUTE = """import torch


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.tensor(0.5)

    def forward(self, x):
        return x * self.scale


model = torch.compile(Scaled(), mode="reduce-overhead")
"""


async def test_a_cuda_graph_blocker_is_fixed_where_the_attribute_is_made(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = write(tmp_path, "scaled.py", CPU_ATTRIBUTE)
    open_document(client, uri, CPU_ATTRIBUTE)
    (diagnostic,) = await diagnostics(client, uri)
    assert (diagnostic.code, diagnostic.range.start.line) == ("GM401", 9)
    assert diagnostic.data["cuda_graphs"] == '`Scaled.forward` is compiled with mode="reduce-overhead" at line 13'
    assert diagnostic.code_description is None  # not a graph break: no Dynamo page
    actions = await code_actions(client, uri, diagnostic)
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "buffer" in a.title)
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    fixed = apply_edits(CPU_ATTRIBUTE, text_edits(fix.edit, uri)[0], client.encoding)
    assert 'self.register_buffer("scale", torch.tensor(0.5), persistent=False)' in fixed.splitlines()[6]
    change_document(client, uri, fixed, 2)
    assert await diagnostics(client, uri) == []
    change_document(client, uri, CPU_ATTRIBUTE, 3)
    assert [d.code for d in await diagnostics(client, uri)] == ["GM401"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"graphmend": {"cudaGraphs": "never", "debounce": 20}})
    )
    assert await diagnostics(client, uri) == []


ONLY_UNSAFE = """import torch


@torch.compile
def scale(x: torch.Tensor):
    n = x.sum().item()
    return x * n
"""


async def test_fix_all_says_what_it_did_and_what_it_left(client: LanguageClient, tmp_path: Path) -> None:
    """Fix All on a file whose fixes are all unsafe applies nothing and says so (it used to answer
    `{"applied": 0}` silently); with `unsafe`, it applies them, after a client showed `hazards`."""
    uri = write(tmp_path, "scale.py", ONLY_UNSAFE)
    open_document(client, uri, ONLY_UNSAFE)
    assert [d.code for d in await diagnostics(client, uri)] == ["GM301"]
    edits: list[types.WorkspaceEdit] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="graphmend.applyAllFixes", arguments=[uri])
    )
    assert answer["applied"] == 0 and answer["unsafeAvailable"] == 1 and not edits
    assert answer["message"] == "graphmend: applied 0 safe fixes; 1 unsafe fix available (Fix All, Including Unsafe)"
    [hazard] = answer["hazards"]
    assert (
        hazard.startswith("line 6: Trace the scalar in the graph")
        and "(unsafe: values and sizes become symbolic" in hazard
    )
    assert [m.message for m in client.messages] == [answer["message"]]
    preview = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="graphmend.unsafeFixes", arguments=[uri])
    )
    assert preview["hazards"] == answer["hazards"] and not edits and len(client.messages) == 1
    # The dialog's text: a line per fix, then each hazard once (issue 39).
    assert preview["detail"].startswith("Line 6: Trace the scalar in the graph")
    assert "[1]\n\nMay change:\n[1] values and sizes become symbolic" in preview["detail"]
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="graphmend.applyAllFixes", arguments=[uri, True, False])
    )
    assert answer["applied"] == 1 and answer["message"] == "graphmend: applied 1 fix" and len(edits) == 1
    assert len(client.messages) == 1  # notify=False: the client shows its own


async def test_fix_all_asked_for_by_hand_answers_even_with_no_safe_fix(client: LanguageClient, tmp_path: Path) -> None:
    """Issue 39: `code_action({only = {'source.fixAll.graphmend'}, apply = true})` on a file with no
    safe fix got no action ("No code actions available" in Neovim); now one whose command reports
    what Fix All did and left. Asked for automatically (on save, the lightbulb), there is none."""
    uri = write(tmp_path, "scale.py", ONLY_UNSAFE)
    open_document(client, uri, ONLY_UNSAFE)
    await diagnostics(client, uri)

    async def fix_all_actions(trigger: types.CodeActionTriggerKind) -> list:
        return list(
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                    context=types.CodeActionContext(
                        diagnostics=[], only=["source.fixAll.graphmend"], trigger_kind=trigger
                    ),
                )
            )
            or []
        )

    (action,) = await fix_all_actions(types.CodeActionTriggerKind.Invoked)
    # lsprotocol reads any answer with a `command` key as a Command (its union hook), so this
    # CodeAction arrives as a Command whose `command` is the text of the nested one.
    assert action.title == "graphmend: no safe fix to apply (say what is left)"
    assert "'command': 'graphmend.applyAllFixes'" in str(action.command) and uri in str(action.command)
    assert not await fix_all_actions(types.CodeActionTriggerKind.Automatic)


RATE_SCHEDULE = (ROOT / "benchmarks" / "recompile_corpus" / "number_lr_argument.py").read_text(encoding="utf-8")


async def test_a_predicted_recompile_names_its_guard_and_its_cause(client: LanguageClient, tmp_path: Path) -> None:
    """A GM601 finding sits at the read Dynamo guards, points at the call whose argument changes,
    says the guard and how often it fails in the hover, and its unsafe fix passes a tensor."""
    uri = write(tmp_path, "schedule.py", RATE_SCHEDULE)
    open_document(client, uri, RATE_SCHEDULE)
    (diagnostic,) = await diagnostics(client, uri)
    assert diagnostic.code == "GM601" and diagnostic.range.start.line == 8
    (cause,) = [r for r in diagnostic.related_information or [] if "changes between calls" in r.message]
    assert cause.location.range.start.line == 14
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start)
    )
    assert "`lr == 0.1`" in hover.contents.value and "once, for its second value" in hover.contents.value
    actions = await code_actions(client, uri, diagnostic)
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "0-d tensor" in a.title)
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    fixed = apply_edits(RATE_SCHEDULE, text_edits(fix.edit, uri)[0], client.encoding)
    assert "sgd_update(weight, torch.full((8,), 0.5), torch.tensor(lr))" in fixed
    change_document(client, uri, fixed, 2)
    assert await diagnostics(client, uri) == []
