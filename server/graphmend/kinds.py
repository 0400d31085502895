"""The kinds of values graphmend tells apart, and how they join where paths meet.

A small lattice: `join` of the kinds a name holds on two paths is the kind it holds after them
(a tensor on one path and None on the other is an optional tensor; anything mixed with an unknown
is unknown). `inference` computes kinds; rules and fixes read them.
"""

from __future__ import annotations

import enum


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    PYTHON = "python"  # a Python scalar, string, shape, dtype, device...
    NONE = "none"
    CONTAINER = "container"  # tuple/list/dict of anything: its truthiness is Python's
    TENSOR = "tensor"
    BOOL_TENSOR = "bool-tensor"
    OPTIONAL_TENSOR = "optional-tensor"
    OPTIONAL_BOOL_TENSOR = "optional-bool-tensor"  # `mask: torch.BoolTensor | None`: a mask once tested for None
    LOGGER = "logger"
    SELF = "self"
    NUMPY = "numpy"  # arrays and scalars from numpy calls: Dynamo traces them as tensors (torch._numpy)
    TENSOR_MODULE = "tensor-module"  # a torch.nn layer whose call returns one tensor (Linear, LayerNorm...)
    # A Python value on some paths and a tensor on others (`skip = False`, then in training
    # `skip = torch.rand([]) < p`): a test of it breaks on the paths where it is a tensor.
    TENSOR_ON_SOME_PATHS = "tensor-on-some-paths"

    @property
    def is_tensor(self) -> bool:
        """Definitely a tensor when evaluated (an optional tensor that is used cannot be None)."""
        return self in (Kind.TENSOR, Kind.BOOL_TENSOR, *OPTIONAL_TENSORS)

    @property
    def present(self) -> Kind:
        """The kind once a test has ruled out None: an optional tensor is a tensor of its element kind."""
        return {Kind.OPTIONAL_TENSOR: Kind.TENSOR, Kind.OPTIONAL_BOOL_TENSOR: Kind.BOOL_TENSOR}.get(self, self)


TENSORISH = (Kind.TENSOR, Kind.BOOL_TENSOR)  # a tensor, for sure, of either element kind
OPTIONAL_TENSORS = (Kind.OPTIONAL_TENSOR, Kind.OPTIONAL_BOOL_TENSOR)


def join(a: Kind, b: Kind) -> Kind:
    """The kind of a name that holds `a` on one path and `b` on another."""
    if a is b:
        return a
    pair = {a, b}
    if pair <= {Kind.TENSOR, Kind.BOOL_TENSOR}:
        return Kind.TENSOR
    if pair <= {Kind.NONE, Kind.BOOL_TENSOR, Kind.OPTIONAL_BOOL_TENSOR}:
        return Kind.OPTIONAL_BOOL_TENSOR
    if pair <= {Kind.NONE, Kind.TENSOR, Kind.BOOL_TENSOR, *OPTIONAL_TENSORS}:
        return Kind.OPTIONAL_TENSOR
    if pair <= {Kind.PYTHON, Kind.NONE}:
        return Kind.PYTHON
    if pair <= {Kind.PYTHON, Kind.TENSOR, Kind.BOOL_TENSOR, Kind.TENSOR_ON_SOME_PATHS}:
        return Kind.TENSOR_ON_SOME_PATHS
    return Kind.UNKNOWN


Env = dict[str, Kind]
