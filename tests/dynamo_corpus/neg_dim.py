"""A rank check `x.dim() == 3` is static: no break."""
import torch


def flatten_tokens(x):
    if x.dim() == 3:
        return x.reshape(-1, x.shape[-1])
    return x


@torch.compile(backend="eager")
def f(batch, flat):
    return torch.cat([flatten_tokens(batch), flatten_tokens(flat)]).relu()


ENTRY = f
INPUTS = [
    (torch.ones(2, 2, 3), torch.ones(4, 3)),
]
