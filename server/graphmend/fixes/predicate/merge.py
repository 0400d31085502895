"""Merging the branches: each name, store, final call and return value the branches produce is
selected with `torch.where` after all of them have run; what `torch.where` cannot select between
is refused, and what it may change (broadcasting, promotion, a 0-d tensor) makes the fix unsafe."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import libcst as cst

from ...analysis import liveness
from ...analysis.module_state import read_only_without_grad
from ...kinds import Kind
from ...semantics import walk
from ..base import Refused, zero_gradients
from ..exact_where import exact_where, script_hazard
from . import identity
from .arms import Arm, Store, code, is_number
from .gradient_flow import gradient_free
from .gradients import layout_hazard, piece_hazard
from .signatures import old_signature, shape_difference, signature
from .site import Site


def merges(site: Site, arms: list[Arm], conditions_: list[str]) -> list[str]:
    """The lines after the branches that give each name, store and the return its selected value."""
    lines: list[str] = []
    assigned: list[str] = []
    for arm in arms:
        assigned.extend(n for n in [*arm.mapping, *arm.inlined] if n not in assigned)
    for name in assigned:
        store = next((arm.stores[name] for arm in arms if name in arm.stores), None)
        values: list[str] = []
        kinds: list[Kind] = []
        literals: list[ast.expr | None] = []
        missing = False
        for arm in arms:
            if name in arm.mapping or name in arm.inlined:
                values.append(arm.inlined.get(name) or arm.mapping[name])
                kinds.append(arm.kinds.get(name, Kind.UNKNOWN))
                literals.append(arm.values.get(name))
            else:
                missing = True
                values.append(name)
                literals.append(_initial_value(site, store))
                kinds.append(_old_kind(site, name, store))
            if kinds[-1] is Kind.UNKNOWN and store is None and site.analysis.has_tensor_evidence(name):
                kinds[-1] = Kind.TENSOR  # the function uses `name` as a tensor
        if store is None and missing and name not in site.before:
            if liveness.live_after(site.function.node, site.end, name):
                raise Refused(f"`{name}` would be unbound on a path that does not assign it")
            continue  # a temporary of one branch: it stays under its new name
        if store is not None and any(name in arm.stores and arm.stores[name] != store for arm in arms):
            raise Refused(f"the branches store `{name}` in different ways")
        label = f"`{name}`"
        # A store says how the attribute changes (from a number to a 0-d tensor), which says the rest.
        require_mergeable(
            [label] * len(kinds), kinds, literals, site.unsafe_reasons, " on some path", zero_d=store is None
        )
        if store is not None and not all(k.is_tensor for k in kinds):
            site.unsafe(f"{label} may change from a Python number to a 0-d tensor")
        if store is not None:
            _keep_on_module(site, label, store)
        difference = shape_difference(
            site, [arm.signatures[name] if name in arm.signatures else old_signature(site, name) for arm in arms]
        )
        _require_same_gradient_flow(site, [arm.values.get(name) for arm in arms])
        kept = [ast.Name(id=name, ctx=ast.Load())] if missing else []  # a path that leaves `name` as it was
        laid_out = _require_same_layout(site, f"`{name}`", [*(arm.values.get(name) for arm in arms), *kept])
        if store is None and missing:
            held = _held_elsewhere(site, name)
            if held is not None and liveness.live_after(site.function.node, site.end, name):
                site.unsafe(held)
        if store is None and _identity_escapes(site, name):
            _identity_hazards(site, arms, name, missing)
        # a store may hold a number before its first tensor (`max_seq_len_cached`): there the helper would
        # keep the `if`; plain torch.where makes it a tensor, which `require_mergeable` names
        selector = (
            _selector(site, difference, kinds, strides=not laid_out)  # strides named: not compared
            if store is None
            else _number_store_selector(site, difference, kinds)
        )
        selected = _select(site, values, conditions_, selector)
        if store is None:
            lines.append(f"{name} = {selected}")
        elif store.buffer_keywords is None:
            lines.append(f"{name} = {selected}")
        else:
            keywords = f", {store.buffer_keywords}" if store.buffer_keywords else ""
            lines.append(f'{site.self_name}.register_buffer("{store.attribute}", {selected}{keywords})')
    calls = [arm.trailing_call for arm in arms]
    if any(c is not None for c in calls):
        lines.extend(_merged_call(site, arms, conditions_))
    if arms[0].returned is not None:
        lines.append(_merged_return(site, arms, conditions_))
    return lines


def _held_elsewhere(site: Site, name: str) -> str | None:
    """The hazard where the object `name` holds before the `if` is also held by a container, an
    attribute or another name's tuple (`outs = [h]`, `self.last = h`, `pair = (h, x)`): a path that
    leaves `name` as it was now gives a new tensor, which that holder does not see (an in-place
    change of `name` no longer reaches it, `is` tells them apart; issue 67, review 8)."""
    for node in walk(site.function.node):
        if getattr(node, "lineno", site.node.lineno) >= site.node.lineno:
            continue
        holder: ast.AST | None = None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            holder = node if any(isinstance(e, ast.Name) and e.id == name for e in node.elts) else None
        elif isinstance(node, ast.Dict):
            holder = node if any(isinstance(v, ast.Name) and v.id == name for v in node.values) else None
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name:
            holder = node if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets) else None
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "insert", "extend", "add", "setdefault")
            and any(isinstance(a, ast.Name) and a.id == name for a in node.args)
        ):
            holder = node
        if holder is not None:
            return (
                f"`{name}` is also held by `{ast.unparse(holder)}` before the `if`; where a path leaves `{name}` as it "
                f"was, the rewrite makes it a new tensor, which that holder does not see (an in-place change of `{name}` "
                "no longer reaches it, and `is` tells them apart)"
            )
    return None


def _identity_escapes(site: Site, name: str) -> bool:
    """Whether the object `name` holds after the `if` may reach anyone who could tell a new tensor
    from the old one: returned or stored as it is, or changed in place, before it is rebound. Read
    from the statements after the `if`, block by enclosing block; in a loop, whenever it is live."""
    if not liveness.live_after(site.function.node, site.end, name):
        return False
    statement: ast.stmt = site.end
    while True:
        found = liveness.locate(site.function.node, statement)
        if found is None or isinstance(found[0], (ast.For, ast.AsyncFor, ast.While)):
            return True  # in a loop the object comes round again: not read here
        holder, block, index = found
        escapes = _escapes_in(block[index + 1 :], name)
        if escapes is not None:
            return escapes
        if holder is site.function.node or not isinstance(holder, ast.stmt):
            return False
        statement = holder  # the rest of the enclosing block comes next


def _escapes_in(statements: list[ast.stmt], name: str) -> bool | None:
    """True: one of `statements` returns, stores or changes in place the object `name` holds;
    False: one rebinds `name` first; None: neither."""
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                if any(isinstance(v, ast.Name) and v.id == name for v in values):
                    return True
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return True  # in place on a tensor
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name:
                return True  # another name or an attribute holds the same object
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.endswith("_")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
            ):
                return True  # an in-place method
        if any(isinstance(t, ast.Name) and t.id == name for t in getattr(stmt, "targets", [])):
            return False  # rebound: the old object is gone
    return None


def _identity_hazards(site: Site, arms: list[Arm], name: str, missing: bool) -> None:
    """`name`'s object reaches someone after the `if`, and the rewrite makes it `torch.where`'s new
    tensor: named where a path gave it an object somebody else may hold (`identity`: the caller's
    tensor, a buffer, another name's, an input an operation gave back), or an output autograd saved."""
    kept = [ast.Name(id=name, ctx=ast.Load())] if missing else []  # the value from before the `if`
    _saved_output(site, name, [*(arm.values.get(name) for arm in arms), *kept])
    for arm in arms:
        if name in arm.values and arm.values[name] is not None:
            _require_own_value(site, arm, name, arm.values[name])
    if missing:
        _require_own_value(site, None, name, ast.Name(id=name, ctx=ast.Load()))


def _require_own_value(site: Site, arm: Arm | None, name: str, value: ast.expr) -> None:
    """A path gives `name` (or the return) `value`: unsafe unless it is a tensor this call made
    that no other name read after the `if` holds (a name bound in the branch is followed there)."""
    seen: set[str] = set()
    while isinstance(value, ast.Name):
        shared = identity.shared_with(value, name, _live_after(site, value.id))
        if shared is not None:
            site.unsafe(shared)
            return
        bound = arm.values.get(value.id) if arm is not None and value.id not in seen else None
        if bound is None or bound is value:
            break
        seen.add(value.id)
        value = bound
    if isinstance(value, ast.Name):
        other = _bound_together_before(site, value.id)
        if other is not None:
            site.unsafe(identity.shared_with(ast.Name(id=other), name, {other}) or "")
            return
    held = identity.held_elsewhere(value, site.analysis, site.node)
    if held is not None:
        site.unsafe(identity.identity_words(name, held))


def _live_after(site: Site, name: str) -> set[str]:
    return {name} if liveness.live_after(site.function.node, site.end, name) else set()


def _bound_together_before(site: Site, name: str) -> str | None:
    """Another name bound to `name`'s object before the `if` (`g = h`, `h = g`) and read after it."""
    for node in walk(site.function.node):
        if not isinstance(node, ast.Assign) or node.lineno >= site.node.lineno or not isinstance(node.value, ast.Name):
            continue
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        names = {node.value.id, *targets}
        if name not in names:
            continue
        for other in sorted(names - {name}):
            if liveness.live_after(site.function.node, site.end, other):
                return other
    return None


def _saved_output(site: Site, name: str, values: list[ast.expr | None]) -> None:
    """A path gave `name` the output of an operation autograd saved (`x.exp()`), in the branch or
    before the `if`: an in-place change of it after the `if` (`y.mul_(2)`, by the function or the
    caller) raised in backward; after the rewrite `name` is `torch.where`'s result, which nothing
    saved, so it no longer does (reviews 9 and 12)."""
    for value in values:
        saved = identity.saved_output(value, site.analysis, site.node) if value is not None else None
        if saved is not None:
            site.unsafe(identity.saved_words(name, saved))
            return


def require_mergeable(
    labels: list[str],
    kinds: list[Kind],
    values: list[ast.expr | None],
    reasons: list[str],
    where: str = "",
    zero_d: bool = True,
) -> None:
    """`torch.where` can select between tensors and numbers: refuse anything else; an unknown
    value, or numbers only, make the fix unsafe (it fails loudly, or yields a 0-d tensor: named
    unless `zero_d` is False, where the caller names it in its own words)."""
    numbers = [is_number(v) for v in values]
    for label, kind, number in zip(labels, kinds, numbers):
        if kind.is_tensor or number:
            continue
        if kind is Kind.UNKNOWN:
            reason = f"{label} is not known to be a tensor or a number"
            if reason not in reasons:
                reasons.append(reason)
            continue
        what = "None" if kind is Kind.NONE else "a Python value"
        raise Refused(f"{label} is {what}{where}, not a tensor or a number")
    if zero_d and not any(k.is_tensor for k in kinds):
        reason = f"{' and '.join(dict.fromkeys(labels))} may become a 0-d tensor"
        if reason not in reasons:
            reasons.append(reason)


def _require_same_layout(site: Site, label: str, values: list[ast.expr | None]) -> bool:
    """A path whose value a layout operation sets (`gradients.layout_hazard`), or which is a piece
    of a tensor, as written or as the name holding it is assigned (`hidden, gate = h.chunk(2)`):
    the selection's strides may differ from its path's (named; the selection is then plain
    torch.where, which removes the break, where the helper would keep the `if`)."""
    assigned: list[ast.expr | None] = []
    for value in values:
        if isinstance(value, ast.Name):
            assigned.extend(_assignments(site.function.node, value.id))
    pieces = [
        v
        for v in [*values, *assigned]
        if not (isinstance(v, ast.Subscript) and not site.analysis.kind(v.value).is_tensor)  # a tuple's slice
    ]
    hazard = layout_hazard(label, [*values, *assigned]) or piece_hazard(label, pieces)
    if hazard is not None:
        site.unsafe(hazard)
    return hazard is not None


def _assignments(function: ast.AST, name: str) -> list[ast.expr]:
    """The values `name` is assigned in `function` (the whole value of a tuple unpacking)."""
    found = []
    for node in walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            for target in node.targets
            for n in walk(target)
        ):
            found.append(node.value)
    return found


def _require_same_gradient_flow(site: Site, values: list[ast.expr | None]) -> None:
    """A path whose value is a constant (`return torch.tensor(0.0)`, `y = 0`) gives no gradient;
    selected by `torch.where` beside a computed value, it passes a zero one to what that value was
    computed from (a distillation loss on a batch whose labels are all ignored)."""
    constant = [value is not None and gradient_free(value, site.analysis) for value in values]
    if any(constant) and not all(constant):
        site.unsafe(zero_gradients("where a path gives a constant, the tensors the other paths use"))


def _select(site: Site, values: list[str], conditions_: list[str], selector: str | None = None) -> str:
    """where(c1, v1, where(c2, v2, v3)) for an if/elif/else chain, with `selector` in the place of
    `torch.where` when given."""
    select = selector or f"{site.torch}.where"
    result = values[-1]
    for condition, value in reversed(list(zip(conditions_, values[:-1]))):
        result = f"{select}({condition}, {value}, {result})"
    return result


def _selector(site: Site, difference: str | None, kinds: Sequence[Kind], strides: bool = True) -> str | None:
    """For tensor values, the helper that selects with torch.where only where that
    gives what the `if` gave (shape, dtype, device and strides alike: issue 67, review 7 showed that
    a proof of shape and dtype from source misses strides and a complex `abs`), where the file can
    have it (its definition joins the fix); else plain torch.where (values not known to be tensors,
    or a notebook's cells), the fix unsafe for the `difference` in words."""
    tensors = all(k.is_tensor for k in kinds)  # a number on a path: plain torch.where makes it a tensor
    name = (
        exact_where(site.ctx, site.torch, lambda definition: site.add_helpers([definition]), strides)
        if tensors
        else None
    )
    if name is None and difference is not None:
        site.unsafe(difference)
    scripted = None if name is None else script_hazard(site.function.node, site.analysis.qualified_name)
    if scripted is not None:
        site.unsafe(scripted)
    return name


def _number_store_selector(site: Site, difference: str | None, kinds: Sequence[Kind]) -> str | None:
    """A merged store's selection: the helper only where the paths' values may differ in shape or
    dtype and are tensors, else plain torch.where (a number held on the module becomes a tensor)."""
    return _selector(site, difference, kinds) if difference is not None else None


def _keep_on_module(site: Site, label: str, store: Store) -> None:
    """A merged store keeps a tensor the graph computed on the module. Under CUDA graphs that
    tensor lives in the graph's memory pool and the next replay overwrites it, so the next call
    fails ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run":
    Phi-3's longrope `inv_freq`, measured on an H100 with torch 2.11): refused where the code is
    recorded as CUDA graphs, unsafe elsewhere. Assigned on every call, it holds the call's autograd
    graph where the branch did not run (the next backward reaches a freed graph: review 8's g07) and
    an inference tensor after a call under `inference_mode`: named unless nothing can notice (`read_only_without_grad`:
    out of the state dict, read only without grad; a rotary embedding's `inv_freq`)."""
    recorded = site.ctx.cuda_graph_scope(site.analysis.entry)
    if recorded is not None:
        raise Refused(
            f"{label} would keep a tensor computed in the graph on the module, which the next "
            f"CUDA-graph replay overwrites ({recorded})"
        )
    site.unsafe(
        f"{label} keeps a tensor computed in the graph on the module: under CUDA graphs "
        '(`mode="reduce-overhead"`) the next call fails, its memory overwritten by the replay'
    )
    owner = site.owner
    if owner is not None and read_only_without_grad(store.attribute, owner, site.ctx.index):
        return
    site.unsafe(
        f"{label} is assigned on every call, not only when the branch runs: where the values stored "
        "require grad, it holds that call's autograd graph even where the branch did not run, so a later "
        'call\'s backward reaches into a freed graph ("backward through the graph a second time") or '
        "keeps every call's graph alive; after a call under `torch.inference_mode()` it holds an "
        "inference tensor, and the module's state then changes (`load_state_dict` into it raises)"
    )


def _initial_value(site: Site, store: Store | None) -> ast.expr | None:
    """What `__init__` assigns to a stored attribute, when that is its one value there (so a
    number literal there makes the attribute a number)."""
    owner = site.owner
    if store is None or owner is None:
        return None
    values = site.analysis.module.init_values(owner).get(store.attribute, [])
    return values[0][1] if len(values) == 1 else None


def _old_kind(site: Site, name: str, store: Store | None) -> Kind:
    """The kind of what a name or stored attribute holds before the `if`."""
    if store is None:
        return site.before.get(name, Kind.UNKNOWN)
    if store.buffer_keywords is not None:
        return Kind.TENSOR
    owner = site.owner
    return (
        site.analysis.module.class_attributes(owner).get(store.attribute, Kind.UNKNOWN)
        if owner is not None
        else Kind.UNKNOWN
    )


@contextmanager
def _kinds_after(site: Site, arm: Arm) -> Iterator[None]:
    """Kinds read as they are at the end of `arm`."""
    saved = site.analysis.env
    site.analysis.env = dict(arm.kinds)
    try:
        yield
    finally:
        site.analysis.env = saved


def _merged_call(site: Site, arms: list[Arm], conditions_: list[str]) -> list[str]:
    calls = [arm.trailing_call for arm in arms]
    if any(c is None for c in calls):
        raise Refused("a branch calls a function for its side effect that another branch does not")
    first = calls[0]
    assert first is not None
    shape = [(a.keyword.value if a.keyword else None) for a in first.args]
    if any(
        code(c.func) != code(first.func) or [(a.keyword.value if a.keyword else None) for a in c.args] != shape  # type: ignore[union-attr]
        for c in calls
    ):
        raise Refused("the branches end in different calls")
    merged_args: list[str] = []
    for position, arg in enumerate(first.args):
        texts = [code(c.args[position].value) for c in calls]  # type: ignore[union-attr]
        if len(set(texts)) == 1:
            merged_args.append(code(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
            continue
        asts = [
            (arm.trailing_call_ast.args + [k.value for k in arm.trailing_call_ast.keywords])[position]  # type: ignore[union-attr,operator]
            for arm in arms
        ]
        for arm, value in zip(arms, asts):
            with _kinds_after(site, arm):
                if not site.analysis.kind(value).is_tensor:
                    raise Refused("the branches call the same function with arguments that are not tensors")
        selected = _select(site, texts, conditions_)
        merged_args.append(f"{arg.keyword.value}={selected}" if arg.keyword else selected)
    return [f"{code(first.func)}({', '.join(merged_args)})"]


def _merged_return(site: Site, arms: list[Arm], conditions_: list[str]) -> str:
    returned = [arm.returned for arm in arms]
    tuples = [r for r in returned if isinstance(r, ast.Tuple)]
    if tuples:
        raise Refused("a path returns a tuple")
    kinds = []
    for arm in arms:
        with _kinds_after(site, arm):
            kind = site.analysis.kind(arm.returned)  # type: ignore[arg-type]
            if kind is Kind.NONE:
                raise Refused("a path returns None where another returns a tensor")
            kinds.append(Kind.TENSOR if site.analysis.used_as_tensor(arm.returned) else Kind.UNKNOWN)  # type: ignore[arg-type]
    for arm, kind in zip(arms, kinds):
        if not kind.is_tensor:
            raise Refused(f"a path returns `{arm.returned_text}`, which is not known to be a tensor")
    difference = shape_difference(site, [signature(site, arm.returned, arm.signatures) for arm in arms])  # type: ignore[arg-type]
    _require_same_gradient_flow(site, [arm.returned for arm in arms])
    laid_out = _require_same_layout(site, "the returned value", [arm.returned for arm in arms])
    _saved_output(site, "the returned value", [arm.returned for arm in arms])
    for arm in arms:
        if arm.returned is not None:
            _require_own_value(site, arm, "the returned value", arm.returned)
    return f"return {_select(site, [a.returned_text or '' for a in arms], conditions_, _selector(site, difference, kinds, strides=not laid_out))}"
