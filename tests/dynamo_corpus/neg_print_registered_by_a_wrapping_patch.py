"""`torch.compiler.config.patch(...)` wrapping the compiled function: the patch holds while it runs,
so the print it registers is replayed, no break (issue 56)."""
import torch


def shown(x):
    y = torch.relu(x)
    print("shown", y)
    return y * 3


def run(x):
    compiled = torch.compiler.config.patch(reorderable_logging_functions={print})(torch.compile(shown, backend="eager"))
    return compiled(x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
