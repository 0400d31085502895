"""Where a statement sits, and whether a name's value is still needed after it (liveness).

A rewrite that runs a branch unconditionally must merge every name the branch binds that is read
afterwards; a temporary of one branch (`clamp_value` in transformers' fp16 clamp, rebound before
each use) needs no merge. "Read afterwards" is decided on the function's structure: the rest of
the block, the blocks around it, the next iteration of an enclosing loop, and closures — with every
path that may skip a rebinding counted as reading (conservative).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial

from ..semantics import argument_names, parent_of, walk

Block = list[ast.stmt]
_FIELDS = ("body", "orelse", "finalbody")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def locate(function: ast.AST, stmt: ast.stmt) -> tuple[ast.AST, Block, int] | None:
    """The statement holding `stmt` (or the function, or an `except` handler), the block it is in,
    and its index there."""
    holder = parent_of(stmt, function)
    if holder is None:
        return None
    for field in _FIELDS:
        block = getattr(holder, field, None)
        if isinstance(block, list):
            for index, candidate in enumerate(block):
                if candidate is stmt:
                    return holder, block, index
    return None


def enclosing_loops(function: ast.AST, stmt: ast.stmt) -> list[ast.For | ast.AsyncFor | ast.While]:
    """Loops around `stmt` inside `function`, innermost first."""
    loops = []
    current: ast.AST = stmt
    while current is not function:
        found = locate(function, current)  # type: ignore[arg-type]
        if found is None:
            break
        holder, block, _ = found
        if isinstance(holder, (ast.For, ast.AsyncFor, ast.While)) and block is holder.body:
            loops.append(holder)
        current = holder
    return loops


def target_names(target: ast.expr) -> list[str]:
    """The names an assignment target binds, in order (`a, (b, c)` → a, b, c; attributes bind none)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in target_names(e)]
    return []


def live_after(function: ast.AST, stmt: ast.stmt, name: str, ignoring: frozenset[int] = frozenset()) -> bool:
    """Whether the value `name` holds right after `stmt` may be read later; statements whose id is
    in `ignoring` count as reading nothing (a rewrite accounts for them itself)."""
    return _Liveness(name, ignoring).after(function, stmt)


class _Liveness:
    def __init__(self, name: str, ignoring: frozenset[int]) -> None:
        self.name = name
        self.ignoring = ignoring

    def after(self, function: ast.AST, stmt: ast.stmt) -> bool:
        name = self.name
        current: ast.AST = stmt
        while current is not function:
            found = locate(function, current)  # type: ignore[arg-type]
            if found is None:
                return True
            holder, block, index = found
            read, killed = self.scan(block[index + 1 :])
            if read:
                return True
            if killed:
                return False
            if isinstance(holder, (ast.For, ast.AsyncFor, ast.While)) and block is holder.body:
                # The next iteration: the loop header, then the body from its start.
                if isinstance(holder, ast.While) and _reads(holder.test, name):
                    return True
                rebound = isinstance(holder, (ast.For, ast.AsyncFor)) and name in _bound_names(holder.target)
                if not rebound and self.scan(holder.body)[0]:
                    return True
                if self.scan(holder.orelse)[0]:
                    return True
            elif isinstance(holder, ast.Try) or type(holder).__name__ == "TryStar":
                handlers = [h.body for h in holder.handlers]  # type: ignore[attr-defined]
                if any(self.scan(body)[0] for body in handlers) or self.scan(holder.finalbody)[0]:  # type: ignore[attr-defined]
                    return True
            elif isinstance(holder, ast.ExceptHandler):
                current = _handler_owner(function, holder)
                continue
            current = holder
        return False

    def scan(self, block: Block) -> tuple[bool, bool]:
        """(may read the name before rebinding it, rebinds it on every path through the block)."""
        for stmt in block:
            read, killed = self.statement(stmt)
            if read:
                return True, False
            if killed:
                return False, True
        return False, False

    def statement(self, stmt: ast.stmt) -> tuple[bool, bool]:
        name = self.name
        if id(stmt) in self.ignoring:
            return False, False
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return _reads(stmt, name), False  # a closure may read it whenever it is called
        if isinstance(stmt, ast.Assign):
            if _reads(stmt.value, name) or any(_reads_in_target(t, name) for t in stmt.targets):
                return True, False
            return False, any(name in _bound_names(t) for t in stmt.targets)
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None and _reads(stmt.value, name):
                return True, False
            return False, stmt.value is not None and name in _bound_names(stmt.target)
        if isinstance(stmt, ast.AugAssign):
            return _reads(stmt, name) or (isinstance(stmt.target, ast.Name) and stmt.target.id == name), False
        if isinstance(stmt, ast.If):
            if _reads(stmt.test, name):
                return True, False
            body, orelse = self.scan(stmt.body), self.scan(stmt.orelse)
            return body[0] or orelse[0], body[1] and orelse[1]
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            header = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.test
            if _reads(header, name):
                return True, False
            return self.scan(stmt.body)[0] or self.scan(stmt.orelse)[0], False
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(_reads(item.context_expr, name) for item in stmt.items):
                return True, False
            return self.scan(stmt.body)
        if isinstance(stmt, ast.Return):
            return _reads(stmt, name), True  # nothing after it runs
        # `raise`, `break`, `continue` jump elsewhere; scanning on past them over-approximates reads.
        return _reads(stmt, name), False


def _handler_owner(function: ast.AST, handler: ast.ExceptHandler) -> ast.AST:
    for node in walk(function):
        if handler in getattr(node, "handlers", ()):
            return node
    return function


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Store) for n in walk(node))


def _reads_in_target(target: ast.expr, name: str) -> bool:
    """`a[name] = ...` or `name.attr = ...` read `name`."""
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        return _reads(target, name)
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_reads_in_target(e, name) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _reads_in_target(target.value, name)
    return False


def _bound_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound_names(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    return set()


Reaching = list[tuple[ast.stmt | None, ast.expr]]


def reaching_values(function: ast.AST, stmt: ast.stmt, name: str) -> Reaching | None:
    """Every value `name` may hold just before `stmt`, each with the assignment that gives it
    (`None` with the name itself: its value on entry to the function); None when one comes from
    something else (a loop's previous iteration, a `for` target, a `try`, a tuple unpacking, `+=`).
    Walks out of `if` and `with` bodies; an `if` before `stmt` gives the values of both its paths."""
    found = locate(function, stmt)
    if found is None:
        return None
    holder, block, index = found
    if holder is function:
        return _values_after(block[:index], name, lambda: [(None, ast.Name(id=name))])
    if isinstance(holder, (ast.If, ast.With)) and (block is holder.body or block is getattr(holder, "orelse", None)):
        return _values_after(block[:index], name, partial(reaching_values, function, holder, name))
    return None


def _values_after(block: list[ast.stmt], name: str, before: Callable[[], Reaching | None]) -> Reaching | None:
    """The values `name` may hold after `block` runs, `before` giving those it may hold on entry."""
    for index in range(len(block) - 1, -1, -1):
        stmt = block[index]
        if not _stores(stmt, name):
            continue
        rest = partial(_values_after, block[:index], name, before)
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
            and not _stores(stmt.value, name)
        ):
            return [(stmt, stmt.value)]
        if isinstance(stmt, ast.If) and not _stores(stmt.test, name):  # `if (h := ...)`: not followed
            return _union(_values_after(stmt.body, name, rest), _values_after(stmt.orelse, name, rest))
        if isinstance(stmt, ast.With) and not any(_stores(item.optional_vars, name) for item in stmt.items):
            # a context manager may swallow an exception raised before the body's assignment
            return _union(_values_after(stmt.body, name, rest), rest())
        return None
    return before()


def _union(first: Reaching | None, second: Reaching | None) -> Reaching | None:
    return None if first is None or second is None else first + second


def _stores(node: ast.AST | None, name: str) -> bool:
    return node is not None and any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in walk(node)
    )


def unbound_reads(function: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt, read: ast.Module) -> list[str]:
    """The names `read` loads that are locals of `function` and not bound on every path to `stmt`
    (`z` assigned only under a Python `if`, in a loop's body, or deleted): a rewrite that evaluates
    `read` on every call raises UnboundLocalError where the original did not read them (review 9)."""
    parameters = set(argument_names(function.args))
    stored = {n.id for n in walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    wanted = sorted(exposed_reads(read) & stored - parameters)
    return [name for name in wanted if not _bound_before(function, stmt, name)]


def exposed_reads(read: ast.Module) -> set[str]:
    """The names `read`'s statements load before they bind them themselves (`clamp_value` bound,
    then read, in transformers' fp16 clamp, is none)."""
    exposed: set[str] = set()
    bound: set[str] = set()
    for stmt in read.body:
        exposed |= {n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
        stored = {n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound |= {name for name in stored if _binds_surely(stmt, name)}
    return exposed


def _bound_before(function: ast.AST, stmt: ast.stmt, name: str) -> bool:
    """`name` is bound on every path from the function's start to `stmt`, and not deleted."""
    current: ast.AST = stmt
    while current is not function:
        found = locate(function, current)  # type: ignore[arg-type]
        if found is None:
            return False
        holder, block, index = found
        deleted = any(isinstance(n, ast.Delete) and _deletes(n, name) for s in block[:index] for n in walk(s))
        if deleted:
            return False
        if any(_binds_surely(s, name) for s in block[:index]):
            return True
        if isinstance(holder, (ast.For, ast.AsyncFor)) and block is holder.body and name in _bound_names(holder.target):
            return True
        current = holder
    return False


def _deletes(node: ast.Delete, name: str) -> bool:
    return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)


def _binds_surely(stmt: ast.stmt, name: str) -> bool:
    """Running `stmt` (to its end) binds `name` whatever path it takes inside."""
    if isinstance(stmt, ast.Assign):
        return any(name in _bound_names(t) for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is not None and name in _bound_names(stmt.target)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".", 1)[0]) == name for a in stmt.names)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return any(i.optional_vars is not None and name in _bound_names(i.optional_vars) for i in stmt.items) or any(
            _binds_surely(s, name) for s in stmt.body
        )
    if isinstance(stmt, ast.If):
        return any(_binds_surely(s, name) for s in stmt.body) and any(_binds_surely(s, name) for s in stmt.orelse)
    return False


def unbound_words(name: str) -> str:
    """The hazard of reading, on every call, a local some path to the `if` leaves unbound."""
    return (
        f"`{name}` is not bound on every path to the `if` (assigned under a condition, in a loop, or deleted): "
        "the rewrite reads it on every call, raising UnboundLocalError where the original did not run the branch"
    )
