"""What a user can do about a graph break a recorded run met inside a library (issue 53).

Dynamo's words say what it met (`logging.Logger method not supported`), not what the user can do at
their call. Two things can be said from the library's source, read where it is installed (a regular
file, never imported):

- **the library's own switch**: the conditions around the line it broke at, read back to a keyword
  argument of the function the user's call enters (`use_cache=False`) or a config flag
  (`config.output_attentions = False`) that keeps the library off that line;
- otherwise **the escape hatch at the call**: `torch.compiler.disable` on the callee, an unsafe fix
  whose cost is named (the call runs in eager Python, its breaks become one at the call).

Either way, recording again shows the result.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from .diagnostics import Applicability, Fix, TextEdit
from .record.log import SOURCES_ANYWHERE
from .record.runs import RecordedFrame
from .source import SourceText

MODULE_CALLS = frozenset({"forward", "__call__"})  # what a call of an `nn.Module` enters in the library
_MODULE_CALL_FRAMES = ("_wrapped_call_impl", "_call_impl")  # torch's frames of one `nn.Module.__call__`


def is_torch(path: str) -> bool:
    """A file of torch itself (its frames stand between the user's call and the library's code)."""
    return "torch" in path.replace("\\", "/").split("/")


def entered(beyond: tuple[RecordedFrame, ...]) -> RecordedFrame | None:
    """The library function the user's call enters: the first frame past the user's that is not torch's."""
    return next((f for f in beyond if not is_torch(f["path"])), None)


def called_directly(beyond: tuple[RecordedFrame, ...]) -> bool:
    """Whether the user's line calls the library itself (a function, or one module's `__call__`), not
    a compiled function or module that runs it: torch's frames of a single `nn.Module` call at most
    before the library's. A compiled module's call passes through two (the wrapper's and the
    module's), and the escape hatch would then take the whole compiled call out of the graph."""
    torch_frames = tuple(f["func"] for f in beyond[: beyond.index(first)]) if (first := entered(beyond)) else None
    return torch_frames in ((), _MODULE_CALL_FRAMES)


@dataclass(frozen=True)
class Switch:
    """Keyword arguments (name → the value that avoids the line; None: leave it unset) of the
    function the user's call enters, or config flags, that keep the library off its break line."""

    keywords: tuple[tuple[str, object], ...] = ()
    config: tuple[str, ...] = ()

    def words(self) -> str:
        """The switch as an imperative clause: "pass `use_cache=False` (and leave `past_key_values` unset)"."""
        passed = [f"`{name}={value!r}`" for name, value in self.keywords if value is not None]
        unset = [f"`{name}`" for name, value in self.keywords if value is None]
        flags = [f"`config.{name} = False`" for name in self.config]
        parts = []
        if passed:
            parts.append("pass " + " and ".join(passed) + " in this call")
        if flags:
            parts.append("set " + " and ".join(flags) + " on the model's config")
        clause = ", or ".join(parts)
        return f"{clause} (and leave {' and '.join(unset)} unset)" if unset and clause else clause


@lru_cache(maxsize=64)
def _tree(path: str, stamp: float) -> ast.Module | None:
    lines = SOURCES_ANYWHERE.lines(path)
    if lines is None:
        return None
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return None


def _module(path: str) -> ast.Module | None:
    try:
        return _tree(path, os.stat(path).st_mtime)
    except OSError:
        return None


def _function_at(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _conditions(function: ast.AST, line: int) -> list[tuple[ast.expr, bool]]:
    """The `if` tests on the way from the function's body to `line`, outermost first, each with the
    value it must have for the line to run (True: the line is in its body; False: in its `else`)."""
    found: list[tuple[ast.expr, bool]] = []
    body: list[ast.stmt] = list(getattr(function, "body", []))
    while body:
        statement = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if statement is None:
            break
        if isinstance(statement, ast.If):
            if line <= (statement.test.end_lineno or statement.lineno):
                break  # the line is the test itself: it runs whatever the test gives
            inside = any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in statement.body)
            found.append((statement.test, inside))
            body = statement.body if inside else statement.orelse
        elif isinstance(statement, (ast.With, ast.For, ast.While, ast.Try)):
            body = [*statement.body, *getattr(statement, "orelse", []), *getattr(statement, "finalbody", [])]
            body += [s for handler in getattr(statement, "handlers", []) for s in handler.body]
        else:
            break
    return found


def _config_flag(node: ast.expr) -> str | None:
    """`self.config.X` or `config.X`: the flag `X`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "config":
        return node.attr
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "config":
        return node.attr
    return None


def _made(test: ast.expr, value: bool, parameters: set[str]) -> Switch | None:
    """A switch that gives `test` the truth value `value` (None: none can be read from it)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _made(test.operand, not value, parameters)
    if isinstance(test, ast.Name) and test.id in parameters:
        return Switch(keywords=((test.id, value),))
    if (flag := _config_flag(test)) is not None and not value:
        return Switch(config=(flag,))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
        name, op, right = test.left.id, test.ops[0], test.comparators[0]
        if name in parameters and isinstance(right, ast.Constant) and right.value in (None, True, False):
            equal = isinstance(op, (ast.Is, ast.Eq))
            if equal or isinstance(op, (ast.IsNot, ast.NotEq)):
                wanted = value == equal  # whether the parameter must be the constant
                if right.value is None and wanted:
                    return Switch(keywords=((name, None),))
                if isinstance(right.value, bool):
                    return Switch(keywords=((name, right.value if wanted else not right.value),))
        return None
    if isinstance(test, ast.BoolOp):
        every = isinstance(test.op, ast.And) == value  # an `and` made true, an `or` made false: every term
        parts = [_made(term, value, parameters) for term in test.values]
        if every:
            if any(p is None for p in parts):
                return None
            return Switch(
                tuple(k for p in parts if p for k in p.keywords), tuple(c for p in parts if p for c in p.config)
            )
        return next((p for p in parts if p is not None), None)
    return None


def library_switch(beyond: tuple[RecordedFrame, ...], where: RecordedFrame) -> Switch | None:
    """The library's own switch for a break at `where`, reached from the user's call through
    `beyond` (the library frames, outermost first): the outermost condition around the line that a
    keyword of the called function (also taken by the function the user's call enters) or a config
    flag can turn off. None when the source says no such thing."""
    tree = _module(where["path"])
    function = _function_at(tree, int(where["line"])) if tree is not None else None
    if function is None:
        return None
    first = entered(beyond)
    taken = _parameters_at(first) if first is not None else None
    line = int(where["line"])
    for test, value in _conditions(function, line):
        switch = _made(test, not value, _parameters(function))
        if switch is None:
            continue
        if not all(_still_holds(function, name, passed, test.lineno) for name, passed in switch.keywords):
            continue  # the function overwrites what the caller would pass before the test reads it
        if taken is not None and all(name in taken for name, _ in switch.keywords):
            return switch
        if not switch.keywords:
            return switch
    return None


def _still_holds(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, passed: object, line: int) -> bool:
    """Whether the parameter `name`, passed as `passed`, still holds it when `line` runs: nothing
    before the line assigns it, except to fill in a value not passed (`use_cache = use_cache if
    use_cache is not None else self.config.use_cache`, or under `if use_cache is None:`) or to set
    the value passed itself (`use_cache = False`)."""
    guarded: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.If) and _is_none_test(node.test, name, is_none=True):
            guarded |= {id(n) for statement in node.body for n in ast.walk(statement)}
    for node in ast.walk(function):
        if getattr(node, "lineno", line) >= line or id(node) in guarded:
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if isinstance(node, ast.With):
                targets = [item.optional_vars for item in node.items]
            named = any(
                isinstance(t, ast.Name) and t.id == name for target in targets if target for t in ast.walk(target)
            )
            harmless = isinstance(node, ast.Assign) and (
                _fills_in(node.value, name) or (isinstance(node.value, ast.Constant) and node.value.value is passed)
            )
            if named and not harmless:
                return False
    return True


def _fills_in(value: ast.expr, name: str) -> bool:
    """`name if name is not None else default` (or `default if name is None else name`)."""
    if not isinstance(value, ast.IfExp):
        return False
    kept = value.body if _is_none_test(value.test, name, is_none=False) else value.orelse
    same = isinstance(kept, ast.Name) and kept.id == name
    return same and (_is_none_test(value.test, name, is_none=False) or _is_none_test(value.test, name, is_none=True))


def _is_none_test(test: ast.expr, name: str, is_none: bool) -> bool:
    """`name is None` (`is_none`) or `name is not None`."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is if is_none else ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _parameters_at(frame: RecordedFrame) -> set[str] | None:
    """The parameters of the library function a frame is in (None: not found)."""
    tree = _module(frame["path"])
    function = _function_at(tree, int(frame["line"])) if tree is not None else None
    return _parameters(function) if function is not None and function.name == frame["func"] else None


def escape_hatch(
    source: SourceText, tree: ast.Module, line: int, beyond: tuple[RecordedFrame, ...], breaks: int
) -> Fix | None:
    """`torch.compiler.disable` on the callee of the user's call at `line` (0-based) of `source`
    (parsed as `tree`), when the line
    calls the library directly (`called_directly`), holds exactly one call that is it, and the file
    imports torch: an unsafe fix with its cost."""
    first = entered(beyond)
    if first is None or not called_directly(beyond):
        return None
    callee = first["func"]
    if not any(
        isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names) for n in tree.body
    ):
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line + 1 and n.end_lineno == line + 1]
    named = [c for c in calls if _last_name(c.func) == callee] or (
        calls if callee in MODULE_CALLS and len(calls) == 1 else []
    )
    if len(named) != 1 or _last_name(named[0].func) == "disable":
        return None
    func = named[0].func
    at = source.node_range(func)
    called = ast.get_source_segment(source.code, func) or ""
    edit = TextEdit(at, f"torch.compiler.disable({called})")
    inside = (
        f"its graph breaks at {breaks} lines become one at this call"
        if breaks > 1
        else "its graph break moves to this call"
    )
    return Fix(
        title=f"Run `{called}` outside the graph (`torch.compiler.disable`); record again to see the result",
        applicability=Applicability.UNSAFE,
        edits=(edit,),
        hazards=(
            f"the call runs in eager Python on every call: {inside}, and nothing fuses across it",
            "under `fullgraph=True` the disabled call fails the compile",
        ),
    )


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def in_callers_names(guard: str, beyond: tuple[RecordedFrame, ...], call_text: str) -> str:
    """A guard on a parameter of a library function the user's call compiled (a compiled library
    module's `forward(self, x)`), with the parameter named as the user's call passes it
    (`tensor 'x' ...` → `tensor 'batch' ...` for `model(batch)`); the guard as it is otherwise."""
    compiled = next((f for f in beyond if str(f.get("text", "")).startswith(("def ", "async def "))), None)
    if compiled is None:
        return guard
    try:
        definition = ast.parse(f"{compiled['text'].strip()}\n    pass").body[0]
        call = ast.parse(call_text.strip()).body[0]
    except (SyntaxError, ValueError, IndexError):
        return guard
    value = call.value if isinstance(call, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) else None
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(value, ast.Call):
        return guard
    names = {}
    positional = [a.arg for a in (*definition.args.posonlyargs, *definition.args.args)]
    if positional[:1] == ["self"] and compiled["func"] in MODULE_CALLS:
        positional = positional[1:]  # a module's call passes `self` itself
    for parameter, argument in zip(positional, value.args):
        names[parameter] = argument
    names.update({k.arg: k.value for k in value.keywords if k.arg is not None})
    for parameter, argument in names.items():
        said = ast.unparse(argument)
        if isinstance(argument, (ast.Name, ast.Attribute, ast.Subscript)) and parameter != said:
            guard = re.sub(rf"(?<![\w.'\"]){re.escape(parameter)}(?![\w'\"])", said, guard)
            guard = guard.replace(f"'{parameter}'", f"'{said}'")
    return guard
