"""`.item()` whose value is only used in arithmetic: with `capture_scalar_outputs` scoped to the
compiled function (the GM301 fix), Dynamo traces it symbolically."""
import torch


@torch.compile(backend="eager")
def normalise(x):
    total = x.abs().sum().item()  # dynamo: break
    return x / (total + 1.0)


ENTRY = normalise
INPUTS = [(torch.tensor([1.0, -2.0, 3.0]),), (torch.ones(4),)]
