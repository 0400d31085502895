"""A failed guard as the user's code names things, and as a baseline keeps it.

Dynamo names what it guards by where it found it: `L['x']` (a local), `G['lr']` (a global),
`__import___main__.EXPLORE` (a global of the script, reached through its module), `___stack0` (a
value Dynamo carried on its stack across a graph break into the function that resumes after it,
`torch_dynamo_resume_in_forward_at_18`). `spoken` says each the way the user's source does (the
value carried across a break is the name the break's line assigns it to, when it assigns one).
`identity` is what stays of a guard when the program runs again with other values: what it checks,
not the values it saw (`lr == 0.1` and `lr == 0.2` are one guard, `expected 4, actual 6` goes).
"""

from __future__ import annotations

import ast
import re

_SOURCE = re.compile(r"\b[LG]\['([^']+)'\]")
_MODULE = re.compile(r"\b__import_(?P<module>\w+?)\.")
_STACK = re.compile(r"\b___stack(?P<index>\d+)\b")
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<func>\w+?)_at_(?P<line>\d+)$")
_NUMBER = r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)"
_COMPARED = re.compile(rf"(?P<op>==|!=|<=|>=|<|>)\s*{_NUMBER}\b")
_COMPARED_LEFT = re.compile(rf"(?<![\w\]\)]){_NUMBER}\s*(?P<op>==|!=|<=|>=|<|>)")
_SEEN = re.compile(r"\.?\s*expected [^,]+, actual .+$")
# What a failed guard checks, by Dynamo's words (`kind_of`; GM502's advice reads the parts).
SIZE = re.compile(r"tensor '(?P<name>.+?)' size mismatch at index (?P<dim>\d+)")
TENSOR = re.compile(r"tensor '(?P<name>.+?)' (?P<what>stride|dtype|device|requires_grad|dispatch key set) mismatch")
VALUE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == (?P<value>[-\w.'\"]+)$")
LENGTH = re.compile(r"^len\((?P<name>[\w.]+)\) == \d+$")
SPECIALIZED = re.compile(r"^\d+ <= (?P<name>[\w.\[\]'\"]+)\.size\(\)\[(?P<dim>\d+)\]$")
_OBJECT_ID = re.compile(r"(___check_(?:obj|type)_id\([^,]+),\s*\d+\)")


def kind_of(guard: str) -> str:
    """What a failed guard checks: "size" (a dimension), "specialized" (a size kept at 0 or 1),
    "tensor" (dtype, device, stride, requires_grad), "global" (grad mode, autocast), "object" (an
    object's identity or type), "length", or "value" (a Python value compared)."""
    if SIZE.search(guard) or "rank mismatch" in guard:
        return "size"
    if SPECIALIZED.match(guard):
        return "specialized"
    if TENSOR.search(guard):
        return "tensor"
    if "GLOBAL_STATE" in guard or "grad_mode" in guard:
        return "global"
    if "___check_obj_id" in guard or "___check_type_id" in guard or "ID_MATCH" in guard or "TYPE_MATCH" in guard:
        return "object"
    return "length" if LENGTH.match(guard) else "value"


def resume_break_line(func: str) -> int | None:
    """The line of the graph break a Dynamo resume function continues after (its name says it)."""
    found = _RESUME.match(func)
    return int(found["line"]) if found else None


def resumed_function(func: str) -> str:
    """The user's function a resume function continues (`torch_dynamo_resume_in_forward_at_18` →
    `forward`); any other name as it is."""
    found = _RESUME.match(func)
    return found["func"] if found else func


def carried_name(break_line_text: str) -> str | None:
    """The name a graph break's line assigns its call's result to (`out = self.encoder(x)` →
    `out`): what Dynamo's `___stack0` is in the function that resumes after it; None otherwise."""
    try:
        tree = ast.parse(break_line_text.strip())
    except SyntaxError:
        return None
    statement = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(statement.value, ast.Call):
            return targets[0].id
    return None


def spoken(guard: str, carried: str | None = None) -> str:
    """The guard as the user's code names things: `L['self'].n` → `self.n`, `G['lr']` → `lr`,
    `__import___main__.EXPLORE` → `EXPLORE`, `__import_torch_dot_nn.X` → `torch.nn.X`, and
    `___stack0` → `carried` (the name the break's line gave it) when given."""
    guard = _SOURCE.sub(r"\1", guard)
    guard = _MODULE.sub(lambda m: "" if m["module"] == "__main__" else m["module"].replace("_dot_", ".") + ".", guard)
    if carried is not None:
        guard = _STACK.sub(lambda m: carried if m["index"] == "0" else m[0], guard)
    return guard.strip()


def identity(guard: str) -> str:
    """What stays of a guard across runs with other values: the values it compared and saw, the
    ids of objects, and Dynamo's stack slots' numbers are left out."""
    guard = _SEEN.sub("", spoken(guard))
    guard = _OBJECT_ID.sub(r"\1, …)", guard)
    guard = _COMPARED.sub(lambda m: f"{m['op']} …", guard)
    guard = _COMPARED_LEFT.sub(lambda m: f"… {m['op']}", guard)
    return _STACK.sub("___stack", guard).strip()


def names_carried(guard: str) -> bool:
    """Whether the guard names a value only Dynamo's stack held (no name of the user's)."""
    return _STACK.search(guard) is not None
