"""A function compiled through a name bound by tuple unpacking (`opt_name, fn = None, f_info`, then
`torch.compile(backend="eager")(fn)`), written after Dynamo's own tests: its print breaks (issue 56)."""
import torch


def f_info(x):
    y = torch.relu(x)
    print("info", y.shape)  # dynamo: break
    return y + 1


opt_name, fn = None, f_info
ENTRY = torch.compile(backend="eager")(fn)
INPUTS = [(torch.arange(3.0),)]
