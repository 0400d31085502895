"""`with` on an object calls its class's `__enter__`: Dynamo runs the method of a context manager
made inside the compiled code and breaks inside it; it cannot enter one made outside (a module
global, a module's attribute) and breaks at the `with` (gb0142), whatever the method does (issue
56)."""
import torch


class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Loud:
    def __enter__(self):
        torch._dynamo.graph_break()  # dynamo: break
        return self

    def __exit__(self, *exc):
        return False


QUIET = Quiet()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scope = Quiet()

    def forward(self, x):
        with self.scope:  # dynamo: break
            return x + 1


BLOCK = Block()


@torch.compile(backend="eager")
def made_inside(x):
    y = x * 2
    with Quiet():
        y = y + 1
    with Loud():
        y = y - 1
    return y


@torch.compile(backend="eager")
def made_outside(x):
    y = x * 2
    with QUIET:  # dynamo: break
        y = y + 1
    return y


@torch.compile(backend="eager")
def module_attribute(x):
    return BLOCK(x) * 2


def run(x):
    return made_inside(x) + made_outside(x) + module_attribute(x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
