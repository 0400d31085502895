"""An `if (` whose whole condition is one comparison on the next line: Dynamo names the
comparison's line, not the `if`'s (a call there would be named at the `if`)."""
import torch


@torch.compile(backend="eager")
def halve_if_large(x):
    if (
        x.abs().sum() > 10  # dynamo: break
    ):
        return x / 2
    return x


ENTRY = halve_if_large
INPUTS = [
    (torch.ones(3),),
    (torch.full((3,), 10.0),),
]
