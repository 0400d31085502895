"""An `if (` whose condition spans lines and tests a call (`.any()`), as torchmetrics' pearson does:
Dynamo names the `if` line, not the operand's."""
import torch


@torch.compile(backend="eager")
def clamp_small(var_x, var_y, bound):
    if (  # dynamo: break
        (var_x < bound).any()
        or (var_y < bound).any()
    ):
        return var_x.clamp(min=bound), var_y.clamp(min=bound)
    return var_x, var_y


ENTRY = clamp_small
INPUTS = [
    (torch.ones(3), torch.ones(3), 0.5),
    (torch.zeros(3), torch.ones(3), 0.5),
]
