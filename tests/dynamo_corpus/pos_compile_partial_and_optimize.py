"""More spellings of options first: `functools.partial(torch.compile, backend=...)`, called at once
or bound and applied later, and `torch._dynamo.optimize("eager")(f)`."""
import functools

import torch


def _first(x):
    print("first", x.sum())  # dynamo: break
    return x + 1


def _second(x):
    total = x.sum().item()  # dynamo: break
    return x - total


def _third(x):
    print("third")  # dynamo: break
    return x * 2


first = functools.partial(torch.compile, backend="eager")(_first)
my_compile = functools.partial(torch.compile, backend="eager", dynamic=False)
second = my_compile(_second)
third = torch._dynamo.optimize("eager")(_third)


def run(x):
    return first(x) + second(x) + third(x)


ENTRY = run
INPUTS = [(torch.arange(1.0, 4.0),)]
