"""Calls from compiled code to functions kept out of compilation: `@torch.compiler.disable` and
`@torch._dynamo.disable` functions (gb0098), a disabled method and a `recursive=False` one ("Skip
inlining", gb0099; the latter's callee still compiles, and breaks on its print), a function wrapped
once at module level (`c = torch.compiler.disable(c_impl)`), and `torch._dynamo.disable(f)(x)`
made inside compiled code (gb0007)."""
import torch


@torch.compiler.disable
def log_stats(x):
    print("mean", x.mean())  # not traced: no break of its own
    return x.mean()


@torch._dynamo.disable
def clip(x):
    return x.clamp(-1, 1)


def helper(x):
    return x * 3


def announce(x):
    print("shallow")  # dynamo: break
    return x + 1


@torch.compiler.disable(recursive=False)
def shallow(x):
    return announce(x) * 2


def c_impl(x):
    return x + 3


c = torch.compiler.disable(c_impl)


class Scaler(torch.nn.Module):
    @torch.compiler.disable
    def side(self, x):
        return x.sum()

    def forward(self, x):
        return x * self.side(x)  # dynamo: break


scaler = Scaler()


@torch.compile(backend="eager")
def forward(x):
    y = x * 2
    stats = log_stats(y)  # dynamo: break
    y = clip(y)  # dynamo: break
    z = torch._dynamo.disable(helper)(y)  # dynamo: break
    y = shallow(y)  # dynamo: break
    y = c(y)  # dynamo: break
    return scaler(y) + z + stats


ENTRY = forward
INPUTS = [(torch.arange(1.0, 4.0),)]
