"""A value as a proof run records it (`probe.py`): JSON that two runs' records compare by
(`prove/compare.py`), tensors by their bytes, and, when a run is not bitwise eager (inductor), their
floating values kept for a compare within tolerance. Acts on the torch module it is given."""

from __future__ import annotations

import array
import hashlib
import types
from collections.abc import Callable
from typing import Any

KeepValues = Callable[[array.array], "tuple[str, int] | None"]


class Digester:
    """Makes a run's values comparable; `exact` while every compile so far is on an exact backend."""

    def __init__(self, keep_values: KeepValues, room_for: Callable[[int], bool]) -> None:
        self.keep_values = keep_values
        self.room_for = room_for  # whether that many values may still be kept (asked before converting)
        self.exact = True

    def digest(self, value: Any, torch: types.ModuleType, inputs: set[int] | None = None, depth: int = 0) -> Any:
        """A value as JSON that compares equal exactly when the values do (tensors by their bytes)."""
        if isinstance(value, torch.Tensor):
            return self._tensor(value, torch, inputs)
        if depth > 8:
            return {"type": type(value).__qualname__}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value if not isinstance(value, float) else repr(value)
        if isinstance(value, (list, tuple)):
            return {
                "type": type(value).__qualname__,
                "items": [self.digest(v, torch, inputs, depth + 1) for v in value],
            }
        if isinstance(value, dict):
            items = {str(k): self.digest(v, torch, inputs, depth + 1) for k, v in value.items()}
            return {"type": type(value).__qualname__, "keys": items}
        fields = getattr(value, "__dataclass_fields__", None)
        if fields is not None:
            items = {k: self.digest(getattr(value, k, None), torch, inputs, depth + 1) for k in fields}
            return {"type": type(value).__qualname__, "keys": items}
        return self._other(value, torch, inputs, depth)

    def _other(self, value: Any, torch: types.ModuleType, inputs: set[int] | None, depth: int) -> Any:
        """A NumPy array by its bytes, a plain object by its public attributes, anything else by repr."""
        kind = type(value).__qualname__
        tobytes = getattr(value, "tobytes", None)
        if callable(tobytes) and hasattr(value, "dtype"):
            shape = getattr(value, "shape", ())
            return {"type": kind, "repr": f"{value.dtype} {shape}", "sha": hashlib.sha256(tobytes()).hexdigest()[:20]}
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict) and not isinstance(value, type):
            public = {str(k): v for k, v in attributes.items() if not str(k).startswith("_")}
            return {"type": kind, "keys": {k: self.digest(v, torch, inputs, depth + 1) for k, v in public.items()}}
        try:
            shown = repr(value)
        except Exception:  # noqa: BLE001
            shown = "?"
        return {"type": kind, "repr": shown if len(shown) <= 200 else hashlib.sha256(shown.encode()).hexdigest()}

    def _tensor(self, tensor: Any, torch: types.ModuleType, inputs: set[int] | None) -> dict[str, Any]:
        described: dict[str, Any] = {
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "shape": list(tensor.shape),
            "requires_grad": bool(tensor.requires_grad),
        }
        if inputs and id(tensor) in inputs:
            described["is_input"] = True
        try:
            plain = tensor.detach().to("cpu").clone(memory_format=torch.contiguous_format)
            described["sha"] = hashlib.sha256(bytes(plain.untyped_storage())).hexdigest()[:20]
            if not self.exact and plain.is_floating_point() and self.room_for(plain.numel()):
                kept = self.keep_values(array.array("d", plain.double().flatten().tolist()))
                if kept is not None:
                    described["values"] = kept
        except Exception as error:  # noqa: BLE001  (a tensor subclass, a sparse tensor)
            described["sha"] = None
            described["unreadable"] = type(error).__name__
        return described
