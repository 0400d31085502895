"""transformers 4.49.0's own modeling code: the paper's break sites are found, nothing crashes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")

from graphmend.api import check_paths, check_source, read_source  # noqa: E402

# One pytest-xdist worker runs the whole file: the whole models tree checked once for the module.
pytestmark = pytest.mark.xdist_group("test_transformers")

MODELS = Path(transformers.__file__).parent / "models"


def flagged(relative: str) -> dict[int, set[str]]:
    path = MODELS / relative
    by_line: dict[int, set[str]] = {}
    for d in check_source(read_source(path), path):
        by_line.setdefault(d.range.start.line + 1, set()).add(d.code)
    return by_line


def line_text(relative: str, number: int) -> str:
    return (MODELS / relative).read_text(encoding="utf-8").splitlines()[number - 1]


def test_version_is_the_one_with_the_papers_breaks() -> None:
    assert transformers.__version__ == "4.49.0"


def test_t5_warning_once_is_flagged() -> None:
    assert "logger.warning_once(" in line_text("t5/modeling_t5.py", 1019)
    assert "GM202" in flagged("t5/modeling_t5.py").get(1019, set())


def test_a_break_behind_a_switch_left_off_is_information() -> None:
    """T5 (issue 32): the break a plain compile meets (1019) stays a warning; the one under
    `gradient_checkpointing` (False in `__init__`) and the one under flash attention (opt-in) are
    information, with the switch in `data["off_by_default"]`."""
    path = MODELS / "t5/modeling_t5.py"
    found = {(d.range.start.line + 1, d.code): d for d in check_source(read_source(path), path)}
    assert found[(1019, "GM202")].severity.value == "warning" and found[(1019, "GM202")].data.off_by_default is None
    assert found[(994, "GM202")].severity.value == "information"
    assert found[(994, "GM202")].data.off_by_default == "self.gradient_checkpointing"
    assert found[(1208, "GM101")].severity.value == "information"
    assert found[(1208, "GM101")].data.off_by_default == "self.config._attn_implementation == 'flash_attention_2'"


HOVERED = [
    "t5/modeling_t5.py",
    "longformer/modeling_longformer.py",
    "mamba2/modeling_mamba2.py",
    "aria/modeling_aria.py",
]


def test_a_hover_says_what_to_do_in_about_80_words() -> None:
    """Issue 32: the action, one paragraph of why and the link in at most 100 words of prose (the
    preview's code aside), 80 for T5 and Longformer; an unsafe fix's long hazards come after the link."""
    import re

    from graphmend.lsp.hover import hover_text

    words: dict[tuple[str, int], int] = {}
    for relative in HOVERED:
        path = MODELS / relative
        source = read_source(path)
        for d in check_source(source, path):
            text = hover_text(d, source.splitlines())
            before_link = re.sub(r"```python.*?```", "", text.split("Dynamo logs it as")[0], flags=re.S)
            words[(relative, d.range.start.line + 1)] = len(before_link.split())
    assert len(words) > 25 and max(words.values()) <= 100
    assert max(n for (relative, _), n in words.items() if relative in HOVERED[:2]) <= 80


def test_phi3_longrope_branch_is_flagged() -> None:
    assert "if seq_len > original_max_position_embeddings:" in line_text("phi3/modeling_phi3.py", 395)
    assert "GM101" in flagged("phi3/modeling_phi3.py").get(395, set())


def test_longformer_sites() -> None:
    sites = flagged("longformer/modeling_longformer.py")
    assert "GM202" in sites.get(1592, set())  # logger.warning_once on the padding path
    assert "GM301" in sites.get(1282, set())  # .item(): not fixable by a rewrite


@pytest.fixture(scope="module")
def model_results() -> list:
    """Every file of `models/` checked once, for the tests over the whole tree."""
    return check_paths([MODELS], jobs=2)


def test_whole_models_tree_without_crash(model_results) -> None:
    results = model_results
    assert len(results) > 1000
    assert not [r for r in results if r.error]
    syntax_errors = [(r.path, d.message) for r in results for d in r.diagnostics if d.code == "GM001"]
    assert not syntax_errors
    counts = Counter(d.code for r in results for d in r.diagnostics)
    assert counts["GM101"] > 0 and counts["GM202"] > 0


CONFIGURED = {
    "bart/modeling_bart.py": (585, 1099),
    "pegasus/modeling_pegasus.py": (325, None),
    "m2m_100/modeling_m2m_100.py": (634, 1067),
    "phi3/modeling_phi3.py": (None, None),
}


@pytest.fixture(scope="module")
def model_json(model_results) -> list[dict]:
    """The findings of the whole models/ check, as `check --output-format json` writes each one."""
    from graphmend.reporting import Finding, diagnostic_json

    return [diagnostic_json(Finding(r.path, d)) for r in model_results for d in r.diagnostics]


@pytest.fixture(scope="module")
def findings_json(model_json) -> dict[tuple[str, int], dict]:
    """`model_json` by (path under models/, line)."""
    return {(Path(item["path"]).relative_to(MODELS).as_posix(), item["line"]): item for item in model_json}


@pytest.mark.parametrize("relative", [r for r, (fp16, _) in CONFIGURED.items() if fp16])
def test_findings_say_the_configuration_they_break_in(relative: str, findings_json) -> None:
    """The fp16 clamp guard breaks only in half precision, a LayerDrop gate only in training: the
    JSON (`only_when`) and message say so."""
    fp16_line, layerdrop_line = CONFIGURED[relative]
    guard = findings_json[(relative, fp16_line)]
    assert guard["only_when"] == ["hidden_states.dtype == torch.float16"]
    assert "breaks only when" not in guard["message"]  # the condition is in `only_when`, the message one sentence
    if layerdrop_line is not None:
        assert findings_json[(relative, layerdrop_line)]["only_when"] == ["self.training"]


def test_a_break_on_every_call_has_no_condition(findings_json) -> None:
    longrope = findings_json[("phi3/modeling_phi3.py", 395)]  # every long-RoPE call past the original length
    assert longrope["only_when"] == [] and "breaks only when" not in longrope["message"]


def test_every_message_is_one_short_sentence(model_json) -> None:
    """On all of transformers' `models/`, each finding's message is at most 120 characters: the rule's
    one sentence, with the conditions, refusals and CUDA-graph sites in JSON fields, not appended
    (each finding as `check --output-format json` writes it)."""
    found = model_json
    assert len(found) > 1000
    assert max(len(item["message"]) for item in found) <= 120
    assert any(item["only_when"] for item in found) and any("no_fix" in item for item in found)
    switched_off = [item for item in found if "off_by_default" in item]
    assert switched_off and all(item["severity"] == "information" for item in switched_off)
    # Issue 39: the plain-language half first; Dynamo's words belong after it, with the link (the hover).
    reasons = dynamo_reasons()
    assert len(reasons) > 400
    opening_with_a_reason = [
        item["message"] for item in found if any(item["message"].lower().startswith(r) for r in reasons)
    ]
    assert not opening_with_a_reason


def dynamo_reasons() -> set[str]:
    """The reasons Dynamo logs for a break: every rule's, and every type in the installed torch's
    registry of graph breaks (lower case), with the shortenings older messages used."""
    import json

    import torch

    from graphmend.rules import RULES

    registry = Path(torch.__file__).parent / "_dynamo" / "graph_break_registry.json"
    types = {entry["Gb_type"] for entries in json.loads(registry.read_text()).values() for entry in entries}
    reasons = {reason.lower() for reason in types | {rule.reason for rule in RULES}}
    return reasons | {reason.removeprefix("logging.") for reason in reasons}


def test_a_hover_without_a_fix_opens_with_what_to_do_or_why_it_can_be_left(model_results) -> None:
    """Issue 39: a no-fix hover opened with what graphmend cannot do; now its first sentence is an
    action (the rule's, or the refusal's setting), or why it can be left (a plain compile never
    reaches it). Why there is no fix comes after."""
    from graphmend.lsp.hover import hover_text
    from graphmend.rules import RULES_BY_CODE

    openings: Counter[str] = Counter()
    for result in model_results:
        without_fix = [d for d in result.diagnostics if d.fix is None and d.code in RULES_BY_CODE]
        if not without_fix:
            continue
        lines = read_source(result.path).splitlines()
        for diagnostic in without_fix:
            first = hover_text(diagnostic, lines).split("\n")[0]
            openings[first.split(":**")[0] + ":**"] += 1
            if diagnostic.data.off_by_default is not None and diagnostic.data.action is None:
                assert first.startswith("**Can be left as is:** a plain compile never reaches it"), first
    assert set(openings) == {"**What to do:**", "**Can be left as is:**"}, openings
    assert sum(openings.values()) > 500


def test_the_unsafe_fix_all_dialog_for_t5_is_short() -> None:
    """Issue 39: the dialog before Fix All applies T5's 5 unsafe fixes ran 379 words, the same
    hazards repeated per fix; now a line per fix and each hazard once, under 150 words with the
    question the VS Code extension asks (`confirmUnsafe`): 9 hazards since issue 50 named what a
    deferral drops and strict export, and what the in-graph operator changes; since issue 54 its two
    in-graph `warning_once` fixes were safe, leaving 3; since issue 67 every in-graph message names
    CUDA graphs (its token is a CPU tensor), so the 5 are back, still under 150 words."""
    from graphmend.lsp.commands import FixAllReport

    path = MODELS / "t5/modeling_t5.py"
    report = FixAllReport.of(check_source(read_source(path), path), unsafe=False)
    detail = report.detail.splitlines()
    assert len(report.unsafe_left) == 5 and len([line for line in detail if line.startswith("Line ")]) == 5
    assert detail[6] == "May change:" and len(detail) == 7 + len(
        {h for left in report.unsafe_left for h in left.fix.hazards}
    )
    question = f"graphmend: apply {len(report.unsafe_left)} unsafe fixes?"
    assert len(question.split()) + len(report.detail.split()) < 150
