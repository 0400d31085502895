"""Beyond the paper: trace `.item()` and dynamic-shape operators instead of breaking on them.

With `torch._dynamo.config.capture_scalar_outputs` Dynamo traces `t.item()` as a symbolic value,
with `capture_dynamic_output_shape_ops` it traces `torch.nonzero`, `torch.unique`, boolean-mask
reads and one-argument `torch.where` with a symbolic size (measured on torch 2.13: one graph,
outputs equal to eager). The fix turns the setting on for one compiled entry only, by wrapping
what `torch.compile` returns:

    @torch.compile                       @torch._dynamo.config.patch(capture_scalar_outputs=True)
    def f(x): ...                  →     @torch.compile
                                         def f(x): ...

    fn = torch.compile(route)      →     fn = torch._dynamo.config.patch(capture_scalar_outputs=True)(torch.compile(route))

(not for `torch.compile(Net())`: the patch would return a plain function in place of the module)

(a `config.patch` decorator on the function Dynamo traces would itself break the graph; around
the compiled callable it covers every call and recompilation of it). It is never offered where the
value then decides a Python branch or a loop: Dynamo breaks there instead ("Data-dependent
branching" on a symbolic value).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis
from ..regions import CONFIG_PATCH, Entry
from ..semantics import walk
from ..source import Position, Range
from .base import FixContext, Refusal

_TO_PYTHON = frozenset({"tolist", "item"})  # what makes Python values of a symbolic result
_DESCRIPTION = {
    "capture_scalar_outputs": "the scalar",
    "capture_dynamic_output_shape_ops": "the data-dependent shape",
}


def scope_capture(
    node: ast.AST,
    setting: str,
    entry: Entry,
    analysis: FunctionAnalysis,
    ctx: FixContext,
    others: Sequence[ast.AST] | None = None,
) -> Fix | Refusal:
    """Turn `setting` on for `entry`, by wrapping its `torch.compile` (unsafe), or say why not.
    `others`: the other sites of the function the setting changes too (it is per entry)."""
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal(ctx.no_torch_name)
    here = getattr(node, "lineno", 0)
    branch = _deciding_branch(node, analysis)
    if branch is not None:
        return Refusal(f"its value {_use(branch, here)}")
    for other in others or ():
        branch = _deciding_branch(other, analysis) if other is not node else None
        if branch is not None:
            return Refusal(
                f"the setting is per compiled entry, and the value computed {_distance(other.lineno, here)} "  # type: ignore[attr-defined]
                f"{_use(branch, here)}"
            )
    edit = _wrapping_edit(entry, setting, ctx, torch_name)
    if isinstance(edit, Refusal):
        return edit
    title = f"Trace {_DESCRIPTION[setting]} in the graph: turn on `torch._dynamo.config.{setting}` for `{entry.function.qualname}`"
    reasons = [
        "values and sizes become symbolic for everything this compiled entry traces: code that needs them "
        "as Python numbers breaks there instead, and each new value of such a size may recompile"
    ]
    return Fix(title, Applicability.UNSAFE, (edit,), tuple(reasons))


def _use(branch: tuple[str, int], here: int) -> str:
    """What Python does with a symbolic value that Dynamo cannot trace: a test, or a conversion."""
    keyword, line = branch
    if keyword.startswith("."):
        return (
            f"becomes Python values (`{keyword}`) {_distance(line, here)}, which Dynamo cannot do "
            "with a symbolic size or value (it fails)"
        )
    return f"decides the Python `{keyword}` {_distance(line, here)}, where Dynamo would break instead"


def _distance(line: int, here: int) -> str:
    """Where `line` is, seen from `here`: relative, so that the message stays true when the
    function moves (and a re-analysis of only the edited functions may reuse it)."""
    if line == here:
        return "on the same line"
    count = abs(line - here)
    return f"{count} line{'s' if count > 1 else ''} {'below' if line > here else 'above'}"


def _deciding_branch(node: ast.AST, analysis: FunctionAnalysis) -> tuple[str, int] | None:
    """The nearest `if`/`while`/conditional expression/loop at or after `node` (in source order;
    before it only inside a loop that runs it again) whose test or iteration reads the value `node`
    computes, directly or through names computed from it. Reading means the value, not what
    tracing knows anyway: `x.device`, `x.dtype`, `x is None` read nothing (T5's `labels =
    labels.to(logits.device)` does not make `labels` the masked result's)."""
    function = analysis.function
    if function is None:
        return None
    holder = next(
        (
            s
            for s in walk(function.node)
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return))
            and any(n is node for n in walk(s))
        ),
        None,
    )
    tainted: set[str] = set()
    if isinstance(holder, ast.Assign):
        tainted |= {
            n.id for t in holder.targets for n in walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    changed = True
    while changed:  # names computed from tainted names
        changed = False
        for stmt in walk(function.node):
            if isinstance(stmt, ast.Assign) and _reads_value(stmt.value, tainted, node):
                for target in stmt.targets:
                    for n in walk(target):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in tainted:
                            tainted.add(n.id)
                            changed = True
    for current in walk(holder) if holder is not None else ():
        if (
            isinstance(current, ast.Call)
            and isinstance(current.func, ast.Attribute)
            and current.func.attr in _TO_PYTHON
            and any(n is node for n in walk(current.func.value))
        ):
            return f".{current.func.attr}()", current.func.end_lineno or current.lineno  # a Python list or number of it
    here = getattr(node, "lineno", 0)
    again = {
        id(n)
        for loop in walk(function.node)
        if isinstance(loop, (ast.For, ast.While)) and _inside(node, loop)
        for n in walk(loop)
    }
    found: list[tuple[str, int]] = []
    for current in walk(function.node):
        tested = None
        if isinstance(current, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tested = current.test
        elif isinstance(current, (ast.For, ast.AsyncFor, ast.comprehension)):
            tested = current.iter
        if tested is None or not _reads_value(tested, tainted, node):
            continue
        line = getattr(current, "lineno", getattr(tested, "lineno", 0))
        if line < here and id(current) not in again:
            continue  # decided before the value exists
        keyword = {ast.If: "if", ast.While: "while", ast.IfExp: "conditional expression", ast.Assert: "assert"}.get(
            type(current), "loop"
        )
        found.append((keyword, line))
    after = [f for f in found if f[1] >= here]
    return min(after, key=lambda f: f[1]) if after else max(found, key=lambda f: f[1], default=None)


_TRACED_ATTRIBUTES = frozenset({"device", "dtype", "ndim", "is_cuda", "layout", "requires_grad", "is_sparse"})


def _reads_value(expr: ast.AST, tainted: set[str], node: ast.AST) -> bool:
    """Whether evaluating `expr` reads `node`'s value or a tainted name's, other than through what
    tracing knows without it (a traced attribute, an `is None` test)."""
    skipped: set[int] = set()
    for current in walk(expr):
        if isinstance(current, ast.Attribute) and current.attr in _TRACED_ATTRIBUTES:
            skipped.update(id(n) for n in walk(current.value))
        elif isinstance(current, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in current.ops):
            skipped.update(id(n) for n in walk(current))
        if id(current) in skipped:
            continue
        if current is node or (isinstance(current, ast.Name) and current.id in tainted):
            return True
    return False


def _inside(node: ast.AST, loop: ast.AST) -> bool:
    return any(n is node for n in walk(loop))


def _wrapping_edit(entry: Entry, setting: str, ctx: FixContext, torch_name: str) -> TextEdit | Refusal:
    site = entry.site
    patch = f"{torch_name}._dynamo.config.patch"
    settings = sorted(entry.captures | {setting})
    arguments = ", ".join(f"{s}=True" for s in settings)
    if isinstance(site, ast.expr) and site in entry.function.node.decorator_list:  # @torch.compile
        decorators = entry.function.node.decorator_list
        position = decorators.index(site)
        existing = next((d for d in decorators[:position] if _is_patch(d, ctx)), None)
        if existing is not None:
            return TextEdit(ctx.source.node_range(existing), f"{patch}({arguments})")
        line = ctx.source.lines[site.lineno - 1]
        indent = line[: len(line) - len(line.lstrip())]
        start = Position(ctx.source.node_range(site).start.line, 0)
        return TextEdit(Range(start, start), f"{indent}@{patch}({arguments})\n")
    if isinstance(site, ast.Call):  # model = torch.compile(...)
        if _compiles_a_module(site, entry):
            return Refusal(
                "the compiled object is a module, and `config.patch(...)` around it returns a plain function "
                "(`.parameters()`, `.train()`, `.state_dict()` and `.to()` would fail on it)",
                f"set `torch._dynamo.config.{setting} = True` before compiling, for the whole program",
            )
        wrapper = _wrapping_patch(site, ctx)
        if wrapper is not None:
            return TextEdit(ctx.source.node_range(wrapper.func), f"{patch}({arguments})")
        return TextEdit(ctx.source.node_range(site), f"{patch}({arguments})({ctx.segment(site)})")
    return Refusal(
        f"this file has no `torch.compile` of `{entry.function.qualname}` to scope the setting to",
        f"set `torch._dynamo.config.{setting} = True` where it is compiled",
    )


def _compiles_a_module(site: ast.Call, entry: Entry) -> bool:
    """`torch.compile(Net())`, `torch.compile(model)`: the entry is a module's `forward`, reached
    through the instance (not `torch.compile(model.forward)`, a bound method, which a patch may wrap)."""
    target = site.args[0] if site.args else next((k.value for k in site.keywords if k.arg == "model"), None)
    method = entry.function.method
    if method is None or method.owner is None or entry.function.node.name != "forward":
        return False
    return not (isinstance(target, ast.Attribute) and target.attr == "forward")


def _is_patch(expr: ast.expr, ctx: FixContext) -> bool:
    return isinstance(expr, ast.Call) and ctx.index.qualified_name(expr.func) == CONFIG_PATCH


def _wrapping_patch(call: ast.Call, ctx: FixContext) -> ast.Call | None:
    """The `torch._dynamo.config.patch(...)(call)` around a compile call, if any."""
    for node in walk(ctx.index.tree):
        if isinstance(node, ast.Call) and node.args and node.args[0] is call and _is_patch(node.func, ctx):
            return node
    return None
