"""What around the `if` the rewrite changes, though neither branch does (issue 50): the grad mode
the selection runs in, other names that hold the tensor a merged name holds, and callers that pass
NumPy arrays.

- **Grad mode.** `torch.where` runs where the `if` was. Inside `with torch.no_grad():` (or
  `inference_mode`, `enable_grad`, `set_grad_enabled`, or such a decorator) the original left a
  name on the path that did not run the branch holding the tensor it had, made outside the block
  and requiring grad; the selection is a new tensor made inside the block, so it no longer does:
  backward raises, or what came before gets no gradient. Only a merge outside the block would be
  exact, and the block may read the name after the `if`: unsafe, with the change named.
- **Aliases.** `skip = h`, then `if ...: h = clamp(h)`: where the branch did not run, `h` and
  `skip` are one tensor, so an in-place change of either after the `if` (an `nn.ReLU(inplace=True)`
  on `h`) also changes the other. The selection makes `h` a new tensor. Safe only with evidence
  that nothing after the `if` changes either in place: no in-place method, augmented or indexed
  store, no call not known pure that receives one, and not both returned.
- **NumPy callers.** A helper that compiled code calls with tensors may also be called with NumPy
  arrays (the same file's eager code, module-level code): the `if` works on both, `torch.where`
  raises TypeError on an array. Unless the condition's Python part admits tensors only
  (`h.dtype == torch.float16`), such a caller makes the fix unsafe, naming the call's line.
"""

from __future__ import annotations

import ast

from ...analysis import liveness
from ...analysis.aliases import alias_group, loop_nodes, memory_sources, written_after
from ...analysis.purity import call_impurity, names_in
from ...kinds import Kind
from ...semantics import walk
from .arms import Arm
from .site import Site

# Context managers and decorators that set the grad mode for what runs inside them.
GRAD_MODES = frozenset(
    f"{prefix}.{name}"
    for prefix in ("torch", "torch.autograd", "torch.autograd.grad_mode")
    for name in ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled")
)


def check_surroundings(site: Site, arms: list[Arm]) -> None:
    """Mark the fix unsafe, naming what changes, where the grad mode or a live alias makes the
    selection differ from what the `if` left behind."""
    mode = grad_mode_around(site)
    if mode is not None:
        site.unsafe(_grad_mode_hazard(mode))
    numpy_calls = numpy_callers(site, arms)
    if numpy_calls:
        name = site.function.node.name
        lines = ", ".join(str(line) for line in numpy_calls)
        site.unsafe(
            f"`{name}` is also called with a NumPy array (line {lines}), where the rewrite's `{site.torch}.where` "
            "raises TypeError"
        )
    for name in _merged_names(arms):
        alias = _live_alias(site, name)
        if alias is not None:
            site.unsafe(
                f"`{alias}` may share memory with `{name}` before the `if`; the rewrite makes `{name}` a new "
                f"tensor where the branch does not run, so an in-place change of one after it no longer shows in "
                "the other"
            )


def grad_mode_around(site: Site) -> str | None:
    """The text of the innermost grad-mode context manager or decorator the `if` runs under."""
    function = site.function.node
    current: ast.AST = site.node
    while current is not function:
        found = liveness.locate(function, current)  # type: ignore[arg-type]
        if found is None:
            break
        holder = found[0]
        if isinstance(holder, (ast.With, ast.AsyncWith)):
            for item in holder.items:
                if _sets_grad_mode(item.context_expr, site):
                    return site.ctx.segment(item.context_expr)
        current = holder
    for decorator in function.decorator_list:
        if _sets_grad_mode(decorator, site):
            return f"@{site.ctx.segment(decorator)}"
    return None


def _sets_grad_mode(expr: ast.expr, site: Site) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    return site.analysis.qualified_name(target) in GRAD_MODES


def _grad_mode_hazard(mode: str) -> str:
    if "inference_mode" in mode:
        change = (
            "it is an inference tensor where the original kept the tensor from outside, and autograd refuses it "
            "later (backward raises)"
        )
    elif "no_grad" in mode or "False" in mode:
        change = (
            "it no longer requires grad where the original kept the tensor from outside: backward raises, or "
            "what it was computed from gets no gradient"
        )
    else:
        change = "whether it requires grad, and the gradients through it, differ from the original's where the branch did not run"
    return f"the selection runs under `{mode}`, which sets the grad mode of the new tensor: {change}"


def _merged_names(arms: list[Arm]) -> list[str]:
    names: list[str] = []
    for arm in arms:
        names.extend(n for n in arm.mapping if "." not in n and n not in names)
    return names


def _live_alias(site: Site, name: str) -> str | None:
    """Another name or attribute that may hold the tensor `name` holds before the `if`, still in
    use after it, when something after the `if` may change one of them in place."""
    function = site.function.node
    analysis = site.analysis
    group = alias_group(function, {name}, analysis, elements_are_new=True, lines=_since_made(site, name)) - {name}
    live = sorted(
        other
        for other in group
        if "." in other
        or (_may_be_tensor(site.before.get(other, Kind.UNKNOWN)) and liveness.live_after(function, site.end, other))
    )
    if not live:
        return None
    held = {name, *live}
    if written_after(function, site.end, held, analysis) is not None or _passed_after(site, held):
        return live[0]
    return None


def _may_be_tensor(kind: Kind) -> bool:
    return kind.is_tensor or kind in (Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS)


def _since_made(site: Site, name: str) -> tuple[int, int] | None:
    """The lines from the assignments that make `name`'s tensor before the `if` to the `if`, when
    each makes a new tensor (`residual + h`, a layer's output): only a binding there can hold it
    too. None (every binding counts) where a value may be another's tensor or is not known."""
    values = liveness.reaching_values(site.function.node, site.node, name)
    if values is None or any(where is None or memory_sources(value, site.analysis, True) for where, value in values):
        return None
    if any(isinstance(value, ast.Name) for _, value in values):
        return None
    return min(where.lineno for where, _ in values if where is not None), site.node.lineno


def _passed_after(site: Site, held: set[str]) -> bool:
    """Whether code after the `if` hands one of `held` to a call not known pure (a submodule
    built with `inplace=True`, a function of another library), or returns two of them."""
    function = site.function.node
    end_line = site.last_line
    again = loop_nodes(function, site.node)  # a loop around the `if` runs its earlier lines again
    for node in walk(function):
        if getattr(node, "lineno", 0) <= end_line and id(node) not in again:
            continue
        if isinstance(node, ast.Call):
            passed = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                passed.append(node.func.value)
            if any(names_in(p) & held for p in passed) and call_impurity(node, site.analysis) is not None:
                return True
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            if len({v.id for v in values if isinstance(v, ast.Name)} & held) > 1:
                return True
    return False


def numpy_callers(site: Site, arms: list[Arm]) -> list[int]:
    """Lines of this file's calls that pass a NumPy array to a parameter of the function, when the
    condition's Python part does not keep arrays out of the rewrite."""
    if not site.analysis.module.imports_numpy:
        return []
    merged = _merged_names(arms)
    if merged and all(name in site.floating for name in merged):
        return []  # `h.dtype == torch.float16 and ...`: an array never reaches the selection
    return site.analysis.module.numpy_call_lines(site.function)
