"""Deferred messages keep what a user sees (issue 30): the value when the message was issued, the
order of every message in a forward, the log record's file, function and line, and a title that
names what the rewrite cannot keep (a message lost when later code in the graph raises)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from graphmend.api import Settings, check_source, fix_source  # noqa: E402
from graphmend.fixes.in_graph import IN_GRAPH_CHECKPOINT_EAGER, IN_GRAPH_CUDA_GRAPHS, IN_GRAPH_FAKE  # noqa: E402


def _load(path: Path, text: str) -> types.ModuleType:
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _printed(module: types.ModuleType, *inputs: object, compiled: bool) -> str:
    torch._dynamo.reset()
    model = module.Net()
    run = torch.compile(model, backend="eager") if compiled else model
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run(*inputs)
    return out.getvalue()


def _fixes(text: str, path: Path, settings: Settings | None = None) -> dict[int, tuple[str, str]]:
    """Line → (applicability, title) of each fix offered."""
    return {
        d.range.start.line + 1: (d.fix.applicability.value, d.fix.described)
        for d in check_source(text, path, settings=settings)
        if d.fix
    }


# transformers 4.49.0 models/deprecated/nezha/modeling_nezha.py:1486-1492: two shapes (symbolic under
# dynamic shapes, so not formatted while tracing) and the number of choices: all three deferred, in order.
NEZHA = """import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = torch.nn.Dropout(0.0)
        self.classifier = torch.nn.Linear(4, 1)

    def forward(self, outputs, num_choices):
        pooled_output = outputs[1]
        print(pooled_output.shape)
        pooled_output = self.dropout(pooled_output)
        logits = self.classifier(pooled_output)
        print(logits.shape)
        print(num_choices)
        reshaped_logits = logits.view(-1, num_choices)
        return reshaped_logits
"""


def test_nezha_prints_keep_their_order(tmp_path: Path) -> None:
    inputs = (torch.randn(2, 6, 4), 2)
    original = _printed(_load(tmp_path / "nezha_before.py", NEZHA), *inputs, compiled=True)
    fixed_text = fix_source(NEZHA, tmp_path / "nezha_after.py", unsafe=True).fixed
    assert "_in_graph(" not in fixed_text  # one mechanism for the forward's messages
    fixed = _load(tmp_path / "nezha_after.py", fixed_text)
    assert _printed(fixed, *inputs, compiled=True) == original == "torch.Size([6, 4])\ntorch.Size([6, 1])\n2\n"
    assert _printed(fixed, *inputs, compiled=False) == original


VIEW_CHANGED = """import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        x = x * 1
        flat = x.view(-1)
        print(x)
        flat.add_(1)
        return x
"""


def test_a_print_of_a_tensor_changed_through_a_view_shows_the_value_it_had(tmp_path: Path) -> None:
    fixes = _fixes(VIEW_CHANGED, tmp_path / "v.py")
    assert fixes[8][1].startswith("Keep the print in the graph")  # an operator writes the value of its moment
    before = _printed(_load(tmp_path / "view_before.py", VIEW_CHANGED), torch.zeros(2), compiled=True)
    fixed = _load(tmp_path / "view_after.py", fix_source(VIEW_CHANGED, tmp_path / "v.py", unsafe=True).fixed)
    assert _printed(fixed, torch.zeros(2), compiled=True) == before == "tensor([0., 0.])\n"


LOGGED_VIEW = """import logging

import torch

logger = logging.getLogger(__name__)


class Net(torch.nn.Module):
    def forward(self, x):
        rows = x.unbind(0)
        logger.info("first row %s", x[0])
        for row in rows:
            row.mul_(2)
        return x
"""


def test_a_logged_tensor_changed_through_an_alias_is_refused(tmp_path: Path) -> None:
    (diagnostic,) = [d for d in check_source(LOGGED_VIEW, tmp_path / "l.py") if d.code == "GM202"]
    assert diagnostic.fix is None
    assert "`row` is changed in place later" in diagnostic.data.no_fix


RECORDED = """import logging

import torch

logger = logging.getLogger("graphmend_record_test")


class Net(torch.nn.Module):
    def forward(self, x):
        logger.warning("sum %s", x.sum())
        return x
"""


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.pathname, record.funcName, record.lineno))


# Before torch 2.13 the in-graph operator does not hold (2.9.1's inductor drops it under no_grad):
# messages are deferred.
DEFERRING = Settings(torch_version=(2, 12))
NO_IN_GRAPH_PRINT = DEFERRING


def test_a_deferred_log_record_names_the_users_line(tmp_path: Path) -> None:
    target = tmp_path / "recorded.py"
    fixed_text = fix_source(RECORDED, target, unsafe=True, settings=DEFERRING).fixed
    applicability, title = _fixes(RECORDED, target, DEFERRING)[10]
    assert applicability == "unsafe" and "`lineno` is the `def` line" in title
    module = _load(target, fixed_text)
    lines = fixed_text.splitlines()
    call_line = next(n for n, line in enumerate(lines, 1) if '"sum %s"' in line)
    def_line = next(n for n, line in enumerate(lines, 1) if "def forward" in line)
    handler = _Records()
    logger = logging.getLogger("graphmend_record_test")
    logger.addHandler(handler)
    try:
        _printed(module, torch.ones(2), compiled=False)
        _printed(module, torch.ones(2), compiled=True)
    finally:
        logger.removeHandler(handler)
    assert handler.seen == [(str(target), "forward", call_line), (str(target), "forward", def_line)]


INLINED = """import logging
import warnings

import torch

logger = logging.getLogger("graphmend_in_graph_test")


class Inner(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        logger.warning("sum %s", y.sum())
        logger.info(f"mean {y.mean():.2f} of {y.dtype}")
        warnings.warn("inner")
        return y


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Sequential(Inner(), torch.nn.ReLU())

    def forward(self, x):
        return self.inner(x) + 1
"""


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_an_in_graph_message_is_written_on_every_call_where_dynamo_inlines_its_function(
    tmp_path: Path, backend: str
) -> None:
    """Issue 50: a log or warning in a module that compiled code inlines (an `nn.Sequential` of a
    compiled parent) is kept in the graph as an operator with an ordered effect: one graph, and on
    every call the same text, level, order, file, function and line as the original run eagerly."""
    target = tmp_path / "inlined.py"
    result = fix_source(INLINED, target, unsafe=True)
    assert result.converged and not result.remaining
    fixed = _load(target, result.fixed)
    lines = result.fixed.splitlines()
    sites = [n for n, line in enumerate(lines, 1) if "_in_graph(" in line and line.startswith("        ")]
    original = _load(tmp_path / "original.py", INLINED)

    def observed(
        module: types.ModuleType, compiled: bool
    ) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
        handler = _Records()
        handler.setLevel(logging.DEBUG)
        logger = logging.getLogger("graphmend_in_graph_test")
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        torch._dynamo.reset()
        model = module.Net()
        run = torch.compile(model, backend=backend, fullgraph=compiled) if compiled else model
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for _ in range(2):
                    run(torch.ones(2))
        finally:
            logger.removeHandler(handler)
        mine = [w for w in caught if w.filename == str(module.__file__)]  # not torch's own (inductor's)
        return list(handler.seen), [(str(w.message), w.filename, w.lineno) for w in mine]

    records, warned = observed(fixed, compiled=True)  # fullgraph: no break left
    assert [(path, function) for path, function, _ in records] == [(str(target), "forward")] * 4
    assert [line for *_, line in records] == sites[:2] * 2
    assert warned == [("inner", str(target), sites[2])] * 2
    eager_records, eager_warned = observed(original, compiled=False)
    assert [function for _, function, _ in eager_records] == ["forward"] * 4
    assert [text for text, *_ in eager_warned] == [text for text, *_ in warned]


class _Texts(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), record.lineno, record.funcName))


def _messages_of(run: object, calls: int = 2) -> tuple[list[tuple[str, int, str]], list[tuple[str, int]]]:
    """What `run()` writes, `calls` times: the log records (text, line, function) and the warnings."""
    handler = _Texts()
    logger = logging.getLogger("graphmend_in_graph_test")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(calls):
                run()
    finally:
        logger.removeHandler(handler)
    return handler.seen, [(str(w.message), w.lineno) for w in caught if "inlined" in w.filename]


def _exported(module: types.ModuleType, strict: bool) -> tuple[object, ...]:
    """The messages while `torch.export` traces the module (or the error it raises), and on two
    calls of its program."""
    torch._dynamo.reset()
    programs: list[Any] = []
    try:
        exporting = _messages_of(
            lambda: programs.append(torch.export.export(module.Net(), (torch.ones(2),), strict=strict)), calls=1
        )
    except Exception as error:  # noqa: BLE001  (compared with the original's)
        return (type(error).__name__,)
    return [text for text, *_ in exporting[0]], _messages_of(lambda: programs[0].module()(torch.ones(2)))


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non-strict"])
@pytest.mark.parametrize("program", ["inlined", "plain"])
def test_an_in_graph_message_is_exported_as_the_original_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict: bool, program: str
) -> None:
    """Issue 54: while `torch.export` traces, the in-graph helper calls its plain body, so strict
    export drops a logger call as it drops the original's, non-strict export writes it once while
    tracing as the original does (or raises as it does: `f"{y.mean():.2f}"` of a fake tensor), and
    the exported program writes nothing on its calls (the operator would write on every call: the
    hazard the fix named until then)."""
    source = INLINED if program == "inlined" else INLINED.replace("{y.mean():.2f}", "{y.mean()}")
    seen = {}
    for name, text in (("fixed", fix_source(source, tmp_path / "x.py", unsafe=True).fixed), ("original", source)):
        module = _load(tmp_path / f"{program}_{name}_{strict}.py", text)
        monkeypatch.setitem(sys.modules, module.__name__, module)  # strict export imports the module
        seen[name] = _exported(module, strict)
    assert seen["fixed"] == seen["original"]
    if program == "plain":
        messages, calls = seen["fixed"]
        assert calls == ([], []) and bool(messages) is not strict  # non-strict runs the logger while tracing


def test_an_in_graph_helper_is_its_plain_body_where_the_operator_cannot_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 54: on a torch older than 2.13, or one whose private registration moved, the fixed
    module still imports and its helpers are their plain bodies: a compiled run breaks the graph
    where the original did and writes the same messages on every call (before, the fixed module
    raised AttributeError on import where the private name was missing; issue 67's form has one,
    `torch._dynamo.eval_frame.skip_code`)."""
    result = fix_source(INLINED, tmp_path / "inlined.py", unsafe=True)
    original = _load(tmp_path / "inlined_original.py", INLINED)

    def compiled_run(module: types.ModuleType) -> tuple[list[object], int]:
        torch._dynamo.reset()
        counters = torch._dynamo.utils.counters
        counters.clear()
        run = torch.compile(module.Net(), backend="eager")
        texts = _messages_of(lambda: run(torch.ones(2)))
        return [[text for text, *_ in kind] for kind in texts], sum(counters["graph_break"].values())

    before, breaks_before = compiled_run(original)
    assert breaks_before > 0
    for case in ("older", "moved"):
        with monkeypatch.context() as patched:
            if case == "older":
                patched.setattr(torch, "__version__", torch.torch_version.TorchVersion("2.12.1"))
            else:
                patched.delattr(torch._dynamo.eval_frame, "skip_code")
            fixed = _load(tmp_path / f"inlined_{case}.py", result.fixed)
            helpers = [name for name in vars(fixed) if name.endswith("_in_graph")]
            assert helpers and all(getattr(fixed, name).__name__ == name for name in helpers), case
            after, breaks_after = compiled_run(fixed)
        assert after == before and breaks_after > 0, case


def test_a_python_value_with_braces_is_written_as_it_reads(tmp_path: Path) -> None:
    """A Python string formatted into an in-graph message is escaped for the helper's second
    `format` (a name holding `{y}` raised KeyError in the fixed code, eagerly and compiled);
    its conversion and spec are kept (`!r`, `.3f`), through `str.format`, which Dynamo folds right."""
    source = (
        "import logging\n\nimport torch\n\nlogger = logging.getLogger('graphmend_in_graph_test')\n\n\n"
        "class Net(torch.nn.Module):\n    def forward(self, x, name: str, lr: float):\n"
        "        logger.warning(f'loading {name!r} {lr:.3f} sum {x.sum()}')\n        return x + 1\n"
    )
    result = fix_source(source, tmp_path / "braces.py", unsafe=True)
    assert "_in_graph(" in result.fixed
    fixed = _load(tmp_path / "braces.py", result.fixed)
    (site,) = [n for n, line in enumerate(result.fixed.splitlines(), 1) if line.startswith("        _logger_")]
    expected = [("loading 'x{y}' 0.250 sum 2.0", site, "forward")] * 2
    assert _messages_of(lambda: fixed.Net()(torch.ones(2), "x{y}", 0.25))[0] == expected
    torch._dynamo.reset()
    compiled = torch.compile(fixed.Net(), backend="eager", fullgraph=True)
    assert _messages_of(lambda: compiled(torch.ones(2), "x{y}", 0.25))[0] == expected


RAISES_LATER = """import torch


@torch.compile
def f(x: torch.Tensor):
    print("total", x.sum())
    y = x @ x
    return y


@torch.compile
def g(x: torch.Tensor):
    y = x @ x
    print("total", y.sum())
    return y
"""


def test_a_message_before_code_that_may_raise_names_the_loss(tmp_path: Path) -> None:
    fixes = _fixes(RAISES_LATER, tmp_path / "r.py", NO_IN_GRAPH_PRINT)
    assert fixes[6][0] == "unsafe" and "the message is lost if later code in the graph raises" in fixes[6][1]
    assert fixes[14][1].startswith("Defer the print") and "the message is lost" not in fixes[14][1]


def test_no_in_graph_message_for_a_torch_before_it_was_measured(tmp_path: Path) -> None:
    """The in-graph operator holds from torch 2.13 (`benchmarks/inlined_messages.py`): for an older
    torch a changed tensor's print is refused, saying why, and another print is deferred
    (`torch-version`)."""
    older = DEFERRING
    (refused,) = [d for d in check_source(VIEW_CHANGED, tmp_path / "v.py", settings=older) if d.code == "GM201"]
    assert refused.fix is None and "`flat` is changed in place later" in refused.data.no_fix
    submodule = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        print(x)\n        return x\n"
    (deferred,) = [d for d in check_source(submodule, tmp_path / "s.py", settings=older) if d.fix]
    assert deferred.fix.title.startswith("Defer the print")
    (in_graph,) = [d for d in check_source(submodule, tmp_path / "s.py") if d.fix]
    assert in_graph.fix.title.startswith("Keep the print in the graph")


READABLE = """import warnings

import torch

HEADER = "stats"


@torch.compile
def f(x: torch.Tensor):
    print(HEADER, "mean", x.mean())
    print(f"max {x.max()}")
    warnings.warn("clipped")
    return x
"""


def test_a_deferral_reads_like_the_call_it_replaces(tmp_path: Path) -> None:
    """What a reviewer sees (issue 32): a print's own arguments where Dynamo replays them as they
    are, an f-string as its lazy `str.format`, two-line helpers, and torch's public registry."""
    fixed = fix_source(READABLE, tmp_path / "r.py", unsafe=True, settings=DEFERRING).fixed
    assert '_deferred_print(HEADER, "mean", x.mean())' in fixed
    assert '_deferred_print("max {}".format(x.max()))' in fixed
    assert '_deferred_warn("clipped")' in fixed
    assert "    warnings.warn(message, stacklevel=3)\n" in fixed and "_getframe" not in fixed
    assert "torch.compiler.config.reorderable_logging_functions.add(_deferred_print)" in fixed
    assert "graphmend" not in fixed and "_dynamo" not in fixed
    module = _load(tmp_path / "r.py", fixed)
    torch._dynamo.reset()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.compile(module.f, backend="eager", fullgraph=True)(torch.ones(2))
    assert out.getvalue() == "stats mean tensor(1.)\nmax 1.0\n"
    assert [str(w.message) for w in caught] == ["clipped"] and caught[0].filename == str(tmp_path / "r.py")


def test_a_torch_before_2_10_registers_under_the_private_name(tmp_path: Path) -> None:
    """`torch.compiler.config.reorderable_logging_functions` exists from torch 2.10 (read from the
    2.9.1 and 2.10.0 wheels): older code gets `torch._dynamo.config`, and it is read back as deferred."""
    older = Settings(torch_version=(2, 9))
    fixed = fix_source(READABLE, tmp_path / "r.py", unsafe=True, settings=older).fixed
    assert "torch._dynamo.config.reorderable_logging_functions.add(_deferred_print)" in fixed
    assert "torch.compiler.config" not in fixed
    assert fix_source(fixed, tmp_path / "r.py", unsafe=True, settings=older).fixed == fixed
    assert not [d for d in check_source(fixed, tmp_path / "r.py", settings=older) if d.code.startswith("GM2")]


REGISTERED_AND_MESSAGE = """import torch


@torch.compiler.disable
def _deferred_print(*values):
    print("[log]", *values)


torch.compiler.config.reorderable_logging_functions.add(_deferred_print)


@torch.compile(backend="eager")
def f(x: torch.Tensor):
    if x.sum() > 0:
        _deferred_print("pos", x)
    if x.mean() < 0:
        print("neg", x)
    return x + 1
"""


def test_a_users_registered_function_and_a_message_in_branches_keep_their_own_helpers(tmp_path: Path) -> None:
    """Review of issue 32's deferral: the user's `_deferred_print` in a branch is guarded by
    `_deferred_print_when`, the plain print (kept in the graph, issue 50) by `_print_in_graph_if`;
    no name is defined twice, and what is printed is the same (compiled, both branches)."""
    fixed = fix_source(REGISTERED_AND_MESSAGE, tmp_path / "k.py", unsafe=True).fixed
    assert "def _deferred_print_when(when, *args):" in fixed and "def _print_in_graph_if(when: torch.Tensor" in fixed
    defined = [line.split("(")[0] for line in fixed.splitlines() if line.startswith("def ")]
    assert len(defined) == len(set(defined))

    def printed(name: str, text: str) -> str:
        module = _load(tmp_path / f"{name}.py", text)
        torch._dynamo.reset()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            module.f(torch.tensor([-1.0, -2.0]))
            module.f(torch.tensor([1.0, 2.0]))
        return out.getvalue()

    assert printed("fixed", fixed) == printed("original", REGISTERED_AND_MESSAGE) != ""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a plain function of the helper's name and body is not reused: Dynamo would trace it
        (
            "import torch\n\n\ndef _deferred_print(*values):\n    print(*values)\n\n\n"
            "@torch.compile\ndef f(x: torch.Tensor):\n    print('x', x)\n    return x\n",
            "_deferred_print_2('x', x)",
        ),
        # `from sys import stderr`: the helper writes to the object the call named, bound at import
        (
            "from sys import stderr\n\nimport torch\n\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
            "    print('err', x, file=stderr)\n    return x\n",
            "    print(*values, file=stderr)\n",
        ),
        # a module-level constant that a function rebinds (`global`) is formatted, not passed as is
        (
            "import torch\n\nTAG = 'x'\n\n\ndef setup():\n    global TAG\n    TAG = ('run', 1)\n\n\n"
            "@torch.compile\ndef f(x: torch.Tensor):\n    print(TAG, x)\n    return x\n",
            '_deferred_print("{} {!s}".format(TAG, x))',
        ),
    ],
)
def test_what_a_deferral_must_not_take_for_granted(tmp_path: Path, source: str, expected: str) -> None:
    assert expected in fix_source(source, tmp_path / "m.py", unsafe=True, settings=NO_IN_GRAPH_PRINT).fixed


def test_a_warning_instance_is_not_deferred(tmp_path: Path) -> None:
    """`warnings.warn(DeprecationWarning("old"))` takes its category from the instance: formatted into
    a message it would become a UserWarning."""
    source = (
        "import warnings\n\nimport torch\n\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
        "    warnings.warn(DeprecationWarning('old'))\n    return x\n"
    )
    (finding,) = [d for d in check_source(source, tmp_path / "w.py") if d.code == "GM203"]
    assert finding.fix is None and "warning instance" in finding.data.no_fix


CONFIGURED_MESSAGES = """import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


class TinyConfig:
    _attn_implementation = "sdpa"
    _pre_quantization_dtype = None


class Attention(torch.nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        self.q_proj = torch.nn.Linear(2, 2)

    def forward(self, x):
        if torch.is_autocast_enabled():
            target_dtype = torch.get_autocast_gpu_dtype()
        elif self.config._pre_quantization_dtype is not None:
            target_dtype = self.config._pre_quantization_dtype
        else:
            target_dtype = self.q_proj.weight.dtype
        logger.warning_once(f"cast back to {target_dtype} from {self.config._attn_implementation}")
        return x.to(target_dtype)
"""


COMPUTED_FROM_CONFIGURATION = """import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


class TinyConfig:
    attention_window = [4, 8]


class Padder(torch.nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config

    def _pad(self, x):
        attention_window = (
            self.config.attention_window
            if isinstance(self.config.attention_window, int)
            else max(self.config.attention_window)
        )
        logger.warning_once(f"padded to a multiple of `config.attention_window`: {attention_window}")
        return x + 1

    def forward(self, x):
        return self._pad(x) * 2
"""


def test_a_message_showing_what_python_computes_from_the_configuration_is_kept_in_the_graph(tmp_path: Path) -> None:
    """Issue 54, refusal 2: Longformer's `_pad_to_window_size` runs inlined (deferred, its message
    would be lost) and shows `attention_window`, the configuration's field or its `max()`: a Python
    value, so the message goes in the graph, naming nothing but what every in-graph message changes
    (issue 67: CUDA graphs). Eager and compiled (one graph) write the same."""
    path = tmp_path / "computed_from_configuration.py"
    (message,) = [d for d in check_source(COMPUTED_FROM_CONFIGURATION, path) if d.code == "GM202"]
    assert message.fix is not None and message.fix.title.startswith("Keep `logger.warning_once`")
    assert message.fix.hazards == (IN_GRAPH_CUDA_GRAPHS, IN_GRAPH_CHECKPOINT_EAGER, IN_GRAPH_FAKE)
    fixed = _load(path, fix_source(COMPUTED_FROM_CONFIGURATION, path, unsafe=True).fixed)
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    hf_logger = logging.getLogger(fixed.__name__)
    hf_logger.addHandler(handler)
    try:
        fixed.logger.warning_once.cache_clear()
        eager = fixed.Padder(fixed.TinyConfig())(torch.ones(2))
        torch._dynamo.reset()
        fixed.logger.warning_once.cache_clear()
        compiled = torch.compile(fixed.Padder(fixed.TinyConfig()), backend="eager", fullgraph=True)(torch.ones(2))
    finally:
        hf_logger.removeHandler(handler)
    assert logged == ["padded to a multiple of `config.attention_window`: 8"] * 2
    assert torch.equal(eager, compiled)


@pytest.mark.parametrize("annotation", ["TinyConfig", "Optional[TinyConfig] = None", "TinyConfig | None = None"])
def test_a_message_showing_configuration_values_is_kept_in_the_graph_safely(tmp_path: Path, annotation: str) -> None:
    """Issue 54: a value a message shows that is a field of the model's configuration, or a name
    bound only to such fields and dtypes (transformers' `target_dtype`, 39 `warning_once` calls in
    4.49.0), is a Python value Dynamo folds: the message goes in the graph, and no hazard about a
    printed tensor's `grad_fn` is named (5 of 5 judged impossible): only what every in-graph message
    changes (issue 67: CUDA graphs). Eager and compiled (one graph) write the same text. A
    configuration that may be None (BART's attention takes `config: Optional[BartConfig] = None`: 22
    more calls) holds no tensor either."""
    path = tmp_path / "configured_messages.py"
    source = CONFIGURED_MESSAGES.replace("config: TinyConfig)", f"config: {annotation})")
    source = source.replace("import torch\n", "from typing import Optional\n\nimport torch\n", 1)
    (message,) = [d for d in check_source(source, path) if d.code == "GM202"]
    assert message.fix is not None and message.fix.title.startswith("Keep `logger.warning_once`")
    assert message.fix.hazards == (IN_GRAPH_CUDA_GRAPHS, IN_GRAPH_CHECKPOINT_EAGER, IN_GRAPH_FAKE)
    fixed = _load(path, fix_source(source, path, unsafe=True).fixed)
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    hf_logger = logging.getLogger(fixed.__name__)
    hf_logger.addHandler(handler)
    try:
        fixed.logger.warning_once.cache_clear()  # one cache for every logger: an earlier test's message is in it
        fixed.Attention(fixed.TinyConfig())(torch.ones(2))
        torch._dynamo.reset()
        fixed.logger.warning_once.cache_clear()
        torch.compile(fixed.Attention(fixed.TinyConfig()), backend="eager", fullgraph=True)(torch.ones(2))
    finally:
        hf_logger.removeHandler(handler)
    assert logged == ["cast back to torch.float32 from sdpa"] * 2


EXPANDED_PIECES = """import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        positions = torch.zeros(1, 4).expand(2, 4)
        first, second = positions.unbind(0)
        print(first)
        second.add_(x)
        return x * 2
"""
DISJOINT_PIECES = EXPANDED_PIECES.replace("torch.zeros(1, 4).expand(2, 4)", "torch.zeros(2, 4) + x")


def test_pieces_of_an_expanded_tensor_share_memory(tmp_path: Path) -> None:
    """Issue 67, cases 9 and 17: the rows of `zeros(1, 4).expand(2, 4)` (like `position_ids`) are
    one row of memory, so `second.add_(x)` changes `first` too, and a print deferred past it would
    show the later value: refused, saying so. Rows of a tensor made here are disjoint: deferred."""
    (refused,) = [d for d in check_source(EXPANDED_PIECES, tmp_path / "e.py", settings=DEFERRING) if d.code == "GM201"]
    assert refused.fix is None and "changed in place later" in (refused.data.no_fix or "")
    (deferred,) = [d for d in check_source(DISJOINT_PIECES, tmp_path / "d.py", settings=DEFERRING) if d.code == "GM201"]
    assert deferred.fix is not None and deferred.fix.title.startswith("Defer the print")
    torch = pytest.importorskip("torch")
    rows = torch.zeros(1, 4).expand(2, 4)
    first, second = rows.unbind(0)
    second.add_(1)
    assert first.sum() == 4  # what the analysis assumes, measured


LAYERS_WRITE = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(4)
        self.act = nn.ReLU(inplace=True)
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor):
        print("running mean", self.norm.running_mean)
        h = self.norm(x)
        z = self.lin(h)
        print("z", z)
        return self.act(z)
"""


def test_a_deferred_print_before_a_layer_that_writes_in_place_is_refused(tmp_path: Path) -> None:
    """Review 3, left open until issue 67: a batch norm's call in training updates its running
    statistics in place, and a layer built with `inplace=True` writes its input: a print deferred
    past either would show the later value."""
    found = {d.range.start.line + 1: d for d in check_source(LAYERS_WRITE, tmp_path / "l.py", settings=DEFERRING)}
    assert found[13].fix is None and "`self.norm` is changed in place later" in (found[13].data.no_fix or "")
    assert found[16].fix is None and "`z` is changed in place later" in (found[16].data.no_fix or "")


LOGGED_BUFFER = """import logging

import torch
from torch import nn

logger = logging.getLogger("logged_buffer")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 64))

    def forward(self, x: torch.Tensor):
        h = x @ self.w
        logger.warning("h %s", h.sum(0))
        y = (h.sum(0) * 3).cos()
        z = (y + 1).exp() @ self.w
        return (z * 2).sum(0) + 5
"""


def test_a_log_record_kept_for_later_holds_the_value_of_its_call(tmp_path: Path) -> None:
    """Issue 67, case 16: a lazily formatted record (`"h %s", t`) keeps its tensor until a handler
    formats it. Under inductor the tensor the operator was given is a buffer the graph reuses after
    the call, so a handler that keeps records (`MemoryHandler`, `caplog`) showed later values; the
    operator now gives the record a copy."""
    fixed = fix_source(LOGGED_BUFFER, tmp_path / "logged_buffer.py", unsafe=True).fixed
    assert "skip_code" in fixed
    module = _load(tmp_path / "logged_buffer.py", fixed)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("logged_buffer")
    keep = Keep()
    logger.addHandler(keep)
    try:
        torch.manual_seed(0)
        block = module.Block()
        x = torch.randn(8, 64)
        torch._dynamo.reset()
        with torch.no_grad():
            expected = [f"h {(x @ block.w).sum(0)}", f"h {((x + 1) @ block.w).sum(0)}"]
            compiled = torch.compile(block, backend="inductor")
            compiled(x)
            compiled(x + 1)
    finally:
        logger.removeHandler(keep)
    assert [r.getMessage() for r in records] == expected
