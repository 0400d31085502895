"""Which tensors a program passes to compiled code with a new shape on some call: built in the loop
from a size that changes, grown by `torch.cat`, the short last batch of a `DataLoader` or the
padded batches of its `collate_fn` (GM605)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from .kinds import Change
from .program import Program, Scope
from .syntax import target_names

_TENSOR_FACTORIES = frozenset(
    {
        "torch.randn",
        "torch.rand",
        "torch.randint",
        "torch.zeros",
        "torch.ones",
        "torch.empty",
        "torch.full",
        "torch.arange",
    }
)


class Shapes:
    """Answers "does this tensor change shape between calls" for one program."""

    def __init__(
        self,
        program: Program,
        name_changes: Callable[[str, ast.AST, Scope, set[str]], Change | None],
        single_values: Callable[[str, Scope], list[ast.expr]],
    ) -> None:
        self.program = program
        self.name_changes = name_changes  # `Values.name_changes`: how a name changes in a loop
        self.single_values = single_values  # `NumberKinds.single_values`

    def changing(self, expr: ast.expr, node: ast.AST) -> str | None:
        """Why the tensor `expr` passed at `node` has a new shape on some call: built in the loop from a
        size that changes, a tensor that grows by `torch.cat`, or the last batch of a DataLoader
        whose dataset does not divide into its batches."""
        scope = self.program.scope_of(node)
        for loop in reversed([a for a in self.program.ancestors(node) if isinstance(a, (ast.For, ast.While))]):
            if isinstance(expr, ast.Call) and self.program.qualified(expr.func) in _TENSOR_FACTORIES:
                for argument in _size_arguments(expr, self.program.qualified(expr.func) or ""):
                    for size in ast.walk(argument):
                        if isinstance(size, ast.Name):
                            change = self.name_changes(size.id, loop, scope, set())
                            if change is not None and change.kind in ("int", "number"):
                                return f"its size `{ast.unparse(argument)}` changes: {change.why}"
            for cut in (n for n in ast.walk(expr) if isinstance(n, ast.Slice)):
                lower = {n.id for n in ast.walk(cut.lower) if isinstance(n, ast.Name)} if cut.lower else set()
                upper = [n for n in ast.walk(cut.upper) if isinstance(n, ast.Name)] if cut.upper else []
                for size in (n for n in upper if n.id not in lower):
                    change = self.name_changes(size.id, loop, scope, set())
                    if change is not None and change.kind in ("int", "number"):  # `data[i : i + block_size]`
                        return f"its slice `{ast.unparse(cut)}` changes length: {change.why}"
            if isinstance(expr, ast.Name):
                made = [
                    n.value
                    for n in ast.walk(loop)
                    if isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name)
                    and n.targets[0].id == expr.id
                ]
                if len(made) == 1 and made[0] is not expr:
                    inner = self.changing(made[0], node)
                    if inner is not None:
                        return f"`{expr.id}` is built in the loop: {inner}"
                grown = _grown_by_cat(expr.id, loop, self.program)
                if grown is not None:
                    return f"`{expr.id}` grows at line {grown.lineno} (`{ast.unparse(grown.value)}`)"
                if isinstance(loop, ast.For) and expr.id in target_names(loop.target):
                    remainder = self._last_batch(loop.iter, scope)
                    if remainder is not None:
                        return remainder
        return None

    def _last_batch(self, iterable: ast.expr, scope: Scope) -> str | None:
        """`DataLoader(dataset, batch_size=B)` without `drop_last=True` over a dataset of a known
        length that B does not divide: the last batch is smaller."""
        loader = iterable
        if isinstance(loader, ast.Name):
            values = self.single_values(loader.id, scope)
            if len(values) != 1:
                return None
            loader = values[0]
        if not isinstance(loader, ast.Call) or self.program.qualified(loader.func) != "torch.utils.data.DataLoader":
            return None
        keywords = {k.arg: k.value for k in loader.keywords}
        padded = self._pads(keywords.get("collate_fn"))
        if padded is not None:
            return f"`{ast.unparse(iterable)}` pads each batch to its own longest sequence ({padded})"
        drop_last = keywords.get("drop_last")
        if drop_last is not None and not (isinstance(drop_last, ast.Constant) and drop_last.value is False):
            return None
        batch = keywords.get("batch_size", loader.args[1] if len(loader.args) > 1 else None)
        if not isinstance(batch, ast.Constant) or not isinstance(batch.value, int) or batch.value < 2:
            return None
        dataset = loader.args[0] if loader.args else keywords.get("dataset")
        length = self._length(dataset, scope) if dataset is not None else None
        if length is None or length % batch.value == 0:
            return None
        return (
            f"`{ast.unparse(iterable)}` gives batches of {batch.value} and a last one of {length % batch.value} "
            f"({length} samples, no `drop_last=True`)"
        )

    def _pads(self, collate: ast.expr | None) -> str | None:
        """How a same-file `collate_fn` pads a batch to its longest sample (`pad_sequence(...)`), or None."""
        function = self.program.index.functions.get(collate.id) if isinstance(collate, ast.Name) else None
        if function is None:
            return None
        for node in ast.walk(function.node):
            if isinstance(node, ast.Call) and self.program.qualified(node.func) == "torch.nn.utils.rnn.pad_sequence":
                return f"`{collate.id}` calls `pad_sequence` at line {node.lineno}"  # type: ignore[union-attr]
        return None

    def _length(self, dataset: ast.expr, scope: Scope) -> int | None:
        """The number of samples of `TensorDataset(torch.randn(N, ...))` or a literal list."""
        if isinstance(dataset, ast.Name):
            values = self.single_values(dataset.id, scope)
            return self._length(values[0], scope) if len(values) == 1 else None
        if isinstance(dataset, (ast.List, ast.Tuple)):
            return len(dataset.elts)
        if isinstance(dataset, ast.Call):
            qualified = self.program.qualified(dataset.func)
            if qualified == "torch.utils.data.TensorDataset" and dataset.args:
                return self._length(dataset.args[0], scope)
            if qualified in _TENSOR_FACTORIES and dataset.args:
                first = dataset.args[0]
                if isinstance(first, (ast.Tuple, ast.List)) and first.elts:
                    first = first.elts[0]
                if qualified == "torch.randint" and len(dataset.args) >= 3:
                    size = dataset.args[2]
                    first = size.elts[0] if isinstance(size, (ast.Tuple, ast.List)) and size.elts else size
                if isinstance(first, ast.Constant) and isinstance(first.value, int):
                    return first.value
        return None


def _size_arguments(call: ast.Call, factory: str) -> list[ast.expr]:
    """The arguments of a tensor factory that decide its shape: `torch.full`'s first, the size of
    `torch.randint(low, high, size)`, every positional one of `randn`/`zeros`/`arange`..."""
    if factory == "torch.full":
        return call.args[:1]
    if factory == "torch.randint":
        sized = [k.value for k in call.keywords if k.arg == "size"]
        return sized or (call.args[-1:] if len(call.args) >= 2 else [])
    return list(call.args)


def _grown_by_cat(name: str, loop: ast.AST, program: Program) -> ast.Assign | None:
    """`name = torch.cat([name, ...], ...)` in the loop: the tensor grows at every iteration."""
    for node in ast.walk(loop):
        if (
            isinstance(node, ast.Assign)
            and any(name in target_names(t) for t in node.targets)
            and isinstance(node.value, ast.Call)
            and program.qualified(node.value.func) in ("torch.cat", "torch.concat", "torch.concatenate")
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value))
        ):
            return node
    return None
