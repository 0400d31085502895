"""Autograd state changed inside compiled code, each in its own helper (a break there sends the rest
of the frame to eager): transformers 4.49.0 models/speech_to_text/modeling_speech_to_text.py:100-110
regrows its sinusoidal table as `nn.Parameter(...)` inside `forward`; a factory with
`requires_grad=True`; `requires_grad_()` on an argument and on a tensor computed here; a training
step's `loss.backward()` and `torch.autograd.grad(...)`; `retain_grad()`."""
import torch


def regrow(weights):
    return torch.nn.Parameter(weights * 2)  # dynamo: break


def leaf(n: int):
    return torch.zeros(n, requires_grad=True)  # dynamo: break


def mark_input(x):
    return x.requires_grad_()  # dynamo: break


def mark_computed(x):
    return (x * 2).requires_grad_()  # dynamo: break


def step(layer, x):
    layer(x).sum().backward()  # dynamo: break
    return x


def gradient(layer, x):
    return torch.autograd.grad(layer(x).sum(), layer.weight)[0]  # dynamo: break


def keep_grad(layer, x):
    hidden = layer(x)
    hidden.retain_grad()  # dynamo: break
    return hidden


class Trainer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 3)

    def forward(self, x, y):
        table = regrow(x)
        return (table.sum() + leaf(3).sum() + mark_input(y).sum() + mark_computed(x).sum()
                + step(self.layer, x).sum() + gradient(self.layer, x).sum() + keep_grad(self.layer, x).sum())


ENTRY = torch.compile(Trainer(), backend="eager")
INPUTS = [(torch.ones(3), torch.ones(3))]
