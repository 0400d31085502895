import torch

from .model import Config, DynamicRotary

ENTRY = torch.compile(DynamicRotary(Config()), backend="eager")
INPUTS = [(torch.ones(2), torch.arange(3)), (torch.ones(2), torch.arange(7)), (torch.ones(2), torch.arange(2))]
