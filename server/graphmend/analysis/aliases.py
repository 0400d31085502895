"""Which tensors of a function may share memory, and where one of them is written.

A deferred message formats its tensors after the graph has run, so a write to the same memory
between the message and the end of the graph shows the later value. The write need not use the
printed name: `y = x.view(-1); print(x); y.add_(1)` changes `x` too. Names are grouped by the
assignments that may bind a view (`y = x[0]`, `y = x.t()`, `a, b = x.chunk(2)`, `y = x`, `for r in
x`, `y = x.to(device)` which returns `x` itself when nothing changes): every name in a group may
alias every other, except the pieces of one split (`a` and `b` of `x.chunk(2)`) of a tensor made here
by an operation that is not an overlapping view (`expand`, `as_strided`), which do not overlap. Calls of other functions are taken to return new tensors; writes made by
called functions are not seen (a module's `forward` rarely writes its input).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..inference import FunctionAnalysis
from ..semantics import ancestors, node_ids, walk
from ..torch_api import VIEW_METHODS
from .liveness import reaching_values, target_names
from .purity import built_in_place, dotted, in_place

# Methods that may return the tensor itself (no copy when the dtype or device already match).
_MAY_RETURN_SELF = frozenset("to type type_as contiguous float double half bfloat16 int long bool cpu cuda".split())


def memory_sources(expr: ast.expr, analysis: FunctionAnalysis, elements_are_new: bool = False) -> set[str]:
    """The names whose memory `expr` may share. With `elements_are_new`, an item of a value not
    known to be a tensor (`outputs[0]` of a layer's tuple) is its own object, as a call's result is."""
    if isinstance(expr, (ast.Name, ast.Attribute)) and dotted(expr) is not None:
        if isinstance(expr, ast.Attribute) and expr.attr in VIEW_METHODS:
            return memory_sources(expr.value, analysis, elements_are_new) | {dotted(expr) or ""}
        return {dotted(expr) or ""}
    if isinstance(expr, ast.Attribute) and expr.attr in VIEW_METHODS:  # `(x + 1).T`: a view of a new tensor
        return memory_sources(expr.value, analysis, elements_are_new)
    if isinstance(expr, ast.Subscript):
        if elements_are_new and not analysis.used_as_tensor(expr.value):
            return set()
        return memory_sources(expr.value, analysis, elements_are_new)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if _is_torch_function(expr.func, analysis):  # `torch.transpose(x, 0, 1)`
            return memory_sources(expr.args[0], analysis) if expr.args and expr.func.attr in VIEW_METHODS else set()
        if expr.func.attr in VIEW_METHODS or expr.func.attr in _MAY_RETURN_SELF:
            return memory_sources(expr.func.value, analysis)
    if isinstance(expr, ast.IfExp):
        return memory_sources(expr.body, analysis) | memory_sources(expr.orelse, analysis)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return {name for element in expr.elts for name in memory_sources(element, analysis)}
    if isinstance(expr, ast.NamedExpr):
        return memory_sources(expr.value, analysis)
    return set()


# A piece of a split: the splitting assignment (the same for two that read alike, like the two paths
# of Zamba2's mixer: `hidden_states, B, C = torch.split(hidden_states_B_C, sizes, dim=-1)`, which
# bind all their pieces anew each time) and the piece's place among its targets.
Piece = tuple[str, int]
# What splits a tensor into views (`a, b = x.chunk(2)`): where the tensor's elements are each their
# own memory (`_without_overlap`), an in-place change of one piece never shows in another.
_SPLITTING = frozenset("split chunk unbind tensor_split split_with_sizes hsplit vsplit dsplit".split())


def _bindings(
    function: ast.AST, analysis: FunctionAnalysis, elements_are_new: bool, lines: tuple[int, int] | None
) -> Iterator[tuple[list[str], set[str], Piece | None]]:
    """(names bound, names whose memory they may share, the piece of a split they are) for each
    binding in `function` (only those on `lines`, first to last, when given)."""
    for node in walk(function):
        if lines is not None and not lines[0] <= getattr(node, "lineno", 0) <= lines[1]:
            continue
        if isinstance(node, ast.Assign):
            sources = memory_sources(node.value, analysis, elements_are_new)
            pieces = _pieces(node, analysis, function)
            if pieces is not None:
                for place, name in enumerate(pieces):
                    yield [name], sources, (ast.dump(node), place)
                continue
            for target in node.targets:
                yield [*target_names(target), *(d for d in [dotted(target)] if d and "." in d)], sources, None
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            yield target_names(node.target), memory_sources(node.value, analysis, elements_are_new), None
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            yield target_names(node.target), memory_sources(node.iter, analysis, elements_are_new), None
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    yield (
                        target_names(item.optional_vars),
                        memory_sources(item.context_expr, analysis, elements_are_new),
                        None,
                    )


def _pieces(node: ast.Assign, analysis: FunctionAnalysis, function: ast.AST) -> list[str] | None:
    """The names `a, b = x.chunk(2)` or `a, b = torch.split(x, n)` binds to the pieces, in order;
    None for any other assignment."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], (ast.Tuple, ast.List)):
        return None
    names = [e.id if isinstance(e, ast.Name) else None for e in node.targets[0].elts]
    value = node.value
    if (
        any(name is None for name in names)
        or not isinstance(value, ast.Call)
        or not isinstance(value.func, ast.Attribute)
        or value.func.attr not in _SPLITTING
    ):
        return None
    if _is_torch_function(value.func, analysis) and not value.args:
        return None
    split = value.args[0] if _is_torch_function(value.func, analysis) else value.func.value
    if not _without_overlap(split, analysis, function, node):
        return None  # pieces of what may be an expanded tensor may be one memory: bound like views
    return names  # type: ignore[return-value]


# Views whose elements may share memory with one another: an expanded tensor's rows are one row
# (`zeros(1, 4).expand(2, 4)`, like `position_ids`), and `as_strided` and `unfold` may overlap.
# Pieces of such a tensor (its rows by `unbind`, `chunk`...) are then not disjoint.
_OVERLAPPING = frozenset("expand expand_as broadcast_to as_strided unfold".split())


def _without_overlap(
    expr: ast.expr, analysis: FunctionAnalysis, function: ast.AST, at: ast.stmt, seen: frozenset[str] = frozenset()
) -> bool:
    """`expr`, evaluated at `at`, is a tensor whose elements are each their own memory: made in
    this function by an operation that is not an overlapping view (`self.proj(x)`, `x + 1`,
    `torch.cat(...)`), or a view of one that keeps that (`.view`, `.transpose`, a slice). A
    parameter or an attribute may be anything the caller made, an expanded tensor included."""
    if isinstance(expr, ast.Name):
        values = None if expr.id in seen else reaching_values(function, at, expr.id)
        return values is not None and all(
            where is not None and _without_overlap(value, analysis, function, where, seen | {expr.id})
            for where, value in values
        )
    if isinstance(expr, ast.Subscript):
        return _without_overlap(expr.value, analysis, function, at, seen)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _OVERLAPPING:
        return False
    if _is_torch_function(func, analysis):
        return name not in VIEW_METHODS or (
            bool(expr.args) and _without_overlap(expr.args[0], analysis, function, at, seen)
        )
    if isinstance(func, ast.Attribute) and (name in VIEW_METHODS or name in _MAY_RETURN_SELF):
        return _without_overlap(func.value, analysis, function, at, seen)
    return True  # another function's or a layer's result: a new tensor (as `memory_sources` takes it)


def alias_group(
    function: ast.AST,
    names: set[str],
    analysis: FunctionAnalysis,
    elements_are_new: bool = False,
    lines: tuple[int, int] | None = None,
) -> set[str]:
    """`names` and every name that may share memory with one of them in `function`, through the
    bindings on `lines` when given (those between a value's making and its use). A piece of a split
    shares memory with what was split, and that with every piece; but a piece reaches the whole
    without reaching its siblings, whose memory is disjoint from its own."""
    bindings = [  # `_` is a throwaway target: it links nothing (`b, s, _ = x.shape` and `_, y = x.chunk(2)`)
        (set(bound) - {"_"}, sources, piece)
        for bound, sources, piece in _bindings(function, analysis, elements_are_new, lines)
        if sources
    ]
    siblings: dict[str, set[Piece]] = {}
    for _, _, piece in bindings:
        if piece is not None:
            siblings.setdefault(piece[0], set()).add(piece)
    # Each name reached, with the pieces it must not lead to (the siblings of the piece it was reached from).
    reached: dict[str, frozenset[Piece]] = {name: frozenset() for name in names}
    changed = True
    while changed:
        changed = False
        for bound, sources, piece in bindings:
            if piece is not None:
                others = frozenset(siblings[piece[0]] - {piece})
                for name in bound & reached.keys():  # up, from the piece to what was split
                    for source in sources:
                        changed |= _reach(reached, source, reached[name] | others)
                for source in sources & reached.keys():  # down, from the whole to a piece
                    if piece not in reached[source]:
                        for name in bound:
                            changed |= _reach(reached, name, reached[source])
                continue
            linked = (bound | sources) & reached.keys()
            if linked:
                avoided = frozenset.intersection(*(reached[name] for name in linked))
                for name in bound | sources:
                    changed |= _reach(reached, name, avoided)
    return set(reached)


def _reach(reached: dict[str, frozenset[Piece]], name: str, avoided: frozenset[Piece]) -> bool:
    """Add `name` to the group, avoiding `avoided` (what it avoids already and this, where both
    paths reach it): whether anything changed."""
    known = reached.get(name)
    kept = avoided if known is None else known & avoided
    if kept == known:
        return False
    reached[name] = kept
    return True


def _is_torch_function(func: ast.expr, analysis: FunctionAnalysis) -> bool:
    qualname = analysis.qualified_name(func)
    return qualname is not None and qualname.startswith("torch.")


def _written(node: ast.AST, group: set[str], analysis: FunctionAnalysis) -> str | None:
    """The name of `group` that `node` writes in place, if it does."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            if _is_torch_function(func, analysis):  # `torch.clamp_(x)`, `nn.init.zeros_(w)`
                written = memory_sources(node.args[0], analysis) & group if node.args else set()
            else:
                written = memory_sources(func.value, analysis) & group
            if written:
                return sorted(written)[0]
        for keyword in node.keywords:
            if keyword.arg == "out":
                written = memory_sources(keyword.value, analysis) & group
                if written:
                    return sorted(written)[0]
        layer = _layer_writes(node, analysis)
        if layer is not None:
            writes_input, buffers = layer
            written = (memory_sources(node.args[0], analysis) if writes_input and node.args else set()) & group
            written |= buffers & group
            if written:
                return sorted(written)[0]
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (ast.Subscript, ast.Attribute)) or isinstance(node, ast.AugAssign):
                # `x[i] = v`, `x.data = v`, `x += v` (in place for a tensor)
                base = target.value if isinstance(target, ast.Subscript) else target
                if isinstance(target, ast.Attribute) and target.attr not in ("data", "real", "imag"):
                    continue
                written = memory_sources(base, analysis) & group
                if written:
                    return sorted(written)[0]
    return None


# Layers whose call in training updates buffers of their own in place (running statistics).
_STATISTICS_LAYERS = frozenset(
    "BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d".split()
)
_STATISTICS = ("running_mean", "running_var", "num_batches_tracked")


def _layer_writes(call: ast.Call, analysis: FunctionAnalysis) -> tuple[bool, set[str]] | None:
    """What a call writes in place without a `_` in its name: its first argument for an operation
    called or a layer built with `inplace=True` (`F.relu(x, inplace=True)`, `self.act = nn.ReLU(
    inplace=True)`), and a batch norm's running statistics (`self.bn(x)` in training updates
    `self.bn.running_mean`); None where it writes nothing of the kind."""
    if in_place(call, analysis):
        return True, set()
    func = call.func
    owner = analysis.owner
    if not (isinstance(func, ast.Attribute) and analysis.is_self(func.value) and owner):
        return None
    built = built_in_place(func.attr, analysis)
    constructors = analysis.module.constructors(owner).get(func.attr, frozenset())
    statistics = any(c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in _STATISTICS_LAYERS for c in constructors)
    if not built and not statistics:
        return None
    layer = dotted(func) or ""
    return built, ({layer, *(f"{layer}.{b}" for b in _STATISTICS)} if statistics else set())


def loop_nodes(function: ast.AST, node: ast.AST) -> set[int]:
    """The ids of the nodes of every loop around `node`: they run again after it."""
    again: set[int] = set()
    for loop in ancestors(node, function):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            again |= node_ids(loop)
    return again


def written_after(
    function: ast.AST, node: ast.expr | ast.stmt, names: set[str], analysis: FunctionAnalysis
) -> str | None:
    """A name that may share memory with `names` and is written in place after `node` — or
    anywhere in a loop around it, which runs again after it — else None."""
    group = alias_group(function, names, analysis)
    end_line = node.end_lineno or node.lineno
    again = loop_nodes(function, node)
    for candidate in walk(function):
        if getattr(candidate, "lineno", 0) > end_line or id(candidate) in again:
            written = _written(candidate, group, analysis)
            if written is not None:
                return written
    return None
