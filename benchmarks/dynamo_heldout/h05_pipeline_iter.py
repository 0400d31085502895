"""A Pipeline of preprocessing stages supports len(), iteration and being called directly;
a compiled function runs a shared module-level pipeline over a batch."""
import torch


def center(x):
    return x - x.mean()


def squash(x):
    return torch.sigmoid(x)


def rescale(x):
    return x * 4.0


class Pipeline:
    def __init__(self, *stages):
        self.stages = list(stages)

    def __len__(self):
        return len(self.stages)

    def __iter__(self):
        torch._dynamo.graph_break()  # predicted: break
        return iter(self.stages)

    def __call__(self, x):
        for stage in self:
            x = stage(x)
        return x


PIPE = Pipeline(center, squash, rescale)


@torch.compile(backend="eager")
def preprocess(x):
    out = PIPE(x)
    return out / len(PIPE)


ENTRY = preprocess
INPUTS = [
    (torch.arange(4.0),),
    (-torch.ones(3),),
]
