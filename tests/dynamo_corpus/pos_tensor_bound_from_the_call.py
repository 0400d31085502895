"""A parameter the program's call passes a tensor is a tensor in the compiled frame (a compiled
function's, and a compiled module's `forward`): used as a slice bound, Dynamo reads its value
(`Tensor.item()`, gb0124), and an `if` on it branches on data; sizes built from it trace (Dynamo
knows an input's value), and the same function called with an int does not break (issue 56)."""
import torch


@torch.compile(backend="eager")
def head(x, n):
    return x[:n] * 2  # dynamo: break


@torch.compile(backend="eager")
def head_int(x, n):
    return x[:n] * 2


def tail(x, n, scale):
    if scale > 1:  # dynamo: break
        x = x * scale
    return x[-n:] + torch.arange(n)  # dynamo: break


fast_tail = torch.compile(tail, backend="eager")


class Window(torch.nn.Module):
    def forward(self, x, n):
        return x[:n] + 1  # dynamo: break


window = torch.compile(Window(), backend="eager")


def run(x):
    count = torch.tensor(2)
    total = head(x, torch.tensor(3)).sum() + head_int(x, 2).sum()
    return total + fast_tail(x, count, scale=torch.tensor(2.0)).sum() + window(x, torch.tensor(4)).sum()


ENTRY = run
INPUTS = [(torch.arange(5.0),)]
