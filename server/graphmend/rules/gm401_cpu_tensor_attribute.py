from __future__ import annotations

import ast

from ..analysis.module_state import init_value, stores_besides
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import register_buffer
from ..inference import FunctionAnalysis
from ..semantics import ClassInfo, FunctionInfo, self_stores, walk
from ..torch_api import FACTORY_FUNCTIONS
from .base import Rule, RuleDocs


class CpuTensorAttribute(Rule):
    """A CPU tensor kept as a plain module attribute, read in code compiled for CUDA graphs."""

    docs = RuleDocs(
        what=(
            "flags the first read, in code compiled for CUDA graphs, of a tensor that "
            "`__init__` stores as a plain attribute (`self.scale = torch.tensor(0.5)`), made by a torch "
            "factory without a `device=` (nor `**kwargs` that may hold one): a CPU tensor that is neither a "
            "parameter nor a buffer."
        ),
        why=(
            "`model.cuda()`/`model.to(device)` move parameters "
            "and buffers only, so the attribute stays on the CPU and enters the compiled graph as a CPU "
            'input. Up to torch 2.8 inductor then records no CUDA graph at all ("skipping cudagraphs due to '
            'cpu device", `check_multiple_devices_or_any_cpu_nodes` in `torch/_inductor/cudagraph_utils.py`). '
            "From torch 2.9 inductor splits the graph instead (`graph_partition`, on by default): the CPU "
            "work runs outside CUDA graphs, as a partition of its own between replays (measured on an H100, "
            "torch 2.11: 2 partitions, one not recorded; with the buffer, 1). A 0-d CPU tensor even mixes "
            "silently with CUDA tensors in eager mode, so nothing else tells you."
        ),
        why_title="Why it keeps work out of CUDA graphs",
        example=(
            "def __init__(self):\n"
            "    super().__init__()\n"
            "    self.scale = torch.tensor(0.5)      # stays on the CPU after model.cuda()\n"
            "\n"
            "def forward(self, x):\n"
            "    return x * self.scale"
        ),
        action='Register the tensor as a buffer: `self.register_buffer("name", tensor, persistent=False)`.',
        fix=(
            '`self.register_buffer("scale", torch.tensor(0.5), persistent=False)`: '
            "`.to()`/`.cuda()` move it and inductor receives it as a static input; `persistent=False` "
            "keeps the state dict as it was. Unsafe: `.half()`/`.to(dtype)` now convert a floating "
            "buffer too, and `buffers()`/`named_buffers()` list it. Refused where `self.scale` is set "
            "anywhere else in the class (a buffer takes only tensors) or before `super().__init__()`."
        ),
    )

    code = "GM401"
    name = "cpu-tensor-attribute"
    message = (
        "Register this tensor as a buffer: a plain tensor attribute stays on the CPU after `.to()`, outside CUDA graphs"
    )
    reason = "skipping cudagraphs due to cpu device"
    reason_id = None
    cuda_graphs = True
    node_types = (ast.Attribute,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Attribute)
        if not isinstance(node.ctx, ast.Load) or not analysis.is_self(node.value):
            return None
        found = _plain_cpu_tensor(node.attr, analysis)
        if found is None or _first_read(node.attr, analysis) is not node:
            return None
        return node

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Attribute)
        found = _plain_cpu_tensor(node.attr, analysis)
        assert found is not None
        cls, init, value = found
        others = stores_besides(cls, init, value, node.attr)
        if others:
            return Refusal(
                f"`self.{node.attr}` is set again at line {others[0].lineno}, and a buffer takes only tensors"
            )
        if init.owner is not cls:
            return Refusal(f"`self.{node.attr}` is set in `{init.qualname}`, another class's `__init__`")
        return register_buffer(
            init,
            value,
            node.attr,
            ctx,
            f"Register `{node.attr}` as a non-persistent buffer, so that `.to()`/`.cuda()` move it",
            ("`.half()`/`.to(dtype)` now convert it too, and `buffers()` lists it; the state dict stays as it was",),
        )


def _plain_cpu_tensor(attribute: str, analysis: FunctionAnalysis) -> tuple[ClassInfo, FunctionInfo, ast.expr] | None:
    """The class, `__init__` and value when `self.<attribute>` is set once in `__init__` to a tensor
    made on the CPU by a torch factory (no `device=`), and never registered as a buffer or parameter."""
    found = init_value(attribute, analysis)
    if found is None:
        return None
    cls, init, value = found
    if not isinstance(value, ast.Call) or any(k.arg in ("device", None) for k in value.keywords):
        return None
    probe = FunctionAnalysis(analysis.module, init, with_parameters=False)
    qualname = probe.qualified_name(value.func)
    if (
        qualname is None
        or not qualname.startswith("torch.")
        or qualname.removeprefix("torch.") not in FACTORY_FUNCTIONS
    ):
        return None
    if any(isinstance(n, ast.Call) for _, n in self_stores(cls, attribute)):
        return None  # also registered by name somewhere: a buffer or parameter
    return cls, init, value


def _first_read(attribute: str, analysis: FunctionAnalysis) -> ast.Attribute | None:
    """The function's first `self.<attribute>` read, in source order: one finding per function."""
    function = analysis.function
    if function is None:
        return None
    reads = [
        n
        for n in walk(function.node)
        if isinstance(n, ast.Attribute)
        and n.attr == attribute
        and isinstance(n.ctx, ast.Load)
        and analysis.is_self(n.value)
    ]
    return min(reads, key=lambda n: (n.lineno, n.col_offset), default=None)
