"""Classes of this file whose dunder methods break, used by compiled code only through objects of
other classes, and outside the compiled code: no implicit call the compiled code makes runs them,
and Dynamo does not break (issue 56)."""
import torch


class Noisy:
    def __init__(self):
        torch._dynamo.graph_break()
        object.__setattr__(self, "parts", (1, 2))

    def __setattr__(self, name, value):
        torch._dynamo.graph_break()
        object.__setattr__(self, name, value)

    def __iter__(self):
        torch._dynamo.graph_break()
        return iter(self.parts)

    def __getitem__(self, i):
        torch._dynamo.graph_break()
        return i


class Calm:
    def __init__(self):
        self.parts = (1, 2)

    def __iter__(self):
        return iter(self.parts)

    def __getitem__(self, i):
        return self.parts[i]

    def __len__(self):
        return len(self.parts)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        self.last = y
        return y


NOISY = Noisy()
NOISY.extra = 1
CALM = Calm()
LAYER = Layer()


@torch.compile(backend="eager")
def step(x):
    y = LAYER(x)
    CALM.value = y
    for part in CALM:
        y = y + part
    y = y + CALM[0] + len(CALM)
    return y


def run(x):
    total = sum(NOISY)
    return step(x) + total + NOISY[1]


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
