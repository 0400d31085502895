"""Iterating over an object calls its class's `__iter__`: a `for` loop, a comprehension and
`enumerate` over an object of a class of this file that defines one make Dynamo run the method and
break inside it; iterating over a list calls nothing of this file (issue 56)."""
import torch


class Parts:
    def __init__(self, parts):
        self.parts = parts

    def __iter__(self):
        torch._dynamo.graph_break()  # dynamo: break
        return iter(self.parts)


class Scales:
    def __iter__(self):
        print("scales")  # dynamo: break
        return iter((1.0, 2.0))


class Steps:
    def __iter__(self):
        torch._dynamo.graph_break()  # dynamo: break
        return iter((3, 4))


PARTS = Parts((1, 2))
SCALES = Scales()
STEPS = Steps()


@torch.compile(backend="eager")
def over_parts(x):
    y = x * 2
    for part in PARTS:
        y = y + part
    for k in [5, 6]:
        y = y - k
    return y


@torch.compile(backend="eager")
def over_scales(x):
    return sum([x * s for s in SCALES])


@torch.compile(backend="eager")
def over_steps(x):
    y = x * 2
    for i, s in enumerate(STEPS):
        y = y + i * s
    return y


def run(x):
    return over_parts(x) + over_scales(x) + over_steps(x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
