"""Storing an attribute calls the class's `__setattr__`: on an object of a class of this file that
defines one, and on `self` in a module whose class overrides it, Dynamo runs the method and breaks
inside it; a store on an object whose class does not define one calls nothing of this file
(issue 56)."""
import torch


class Box:
    def __setattr__(self, name, value):
        torch._dynamo.graph_break()  # dynamo: break
        object.__setattr__(self, name, value)


class Tracker(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def __setattr__(self, name, value):
        if name == "last":
            print("storing", name)  # dynamo: break
        super().__setattr__(name, value)

    def forward(self, x):
        y = self.lin(x)
        self.last = y
        return y


class Plain:
    pass


BOX = Box()
PLAIN = Plain()
TRACKER = Tracker()


def step(x):
    y = TRACKER(x)
    BOX.value = y
    PLAIN.value = y
    return y * 2


ENTRY = torch.compile(step, backend="eager")
INPUTS = [(torch.arange(3.0),)]
