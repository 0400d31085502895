"""`torch.exp` guarded by a bound on its input: past the bound it overflows to inf, and the rewrite
runs it on every call (its derivative is inf there too: NaN gradients unless shielded)."""
import torch


@torch.compile(backend="eager")
def soft_cap(x: torch.Tensor):
    if x.max() < 80.0:  # dynamo: break
        y = torch.exp(x).sum().log()
    else:
        y = x.max()
    return y


ENTRY = soft_cap
INPUTS = [
    (torch.tensor([1.0, 2.0, 3.0]),),
    (torch.tensor([1.0, 200.0, 3.0]),),
]
