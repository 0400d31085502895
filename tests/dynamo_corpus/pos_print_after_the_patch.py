"""A config patch that ends before the compile registers nothing for it: the print breaks (issue 56)."""
import torch


def later(x):
    print("later", x)  # dynamo: break
    return torch.relu(x) - 2


with torch._dynamo.config.patch(reorderable_logging_functions={print}):
    scale = 2.0
ENTRY = torch.compile(later, backend="eager")
INPUTS = [(torch.arange(3.0),)]
