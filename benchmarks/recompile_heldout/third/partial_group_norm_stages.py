"""U-Net-like conv stages whose normalization is a functools.partial of a compiled group-norm function, with num_groups chosen per stage."""
import functools
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile(backend="eager")
def group_norm_act(x, weight, bias, num_groups=8, eps=1e-5):
    return F.silu(F.group_norm(x, num_groups, weight, bias, eps))


class Stage(nn.Module):
    def __init__(self, c_in, c_out, groups):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.weight = nn.Parameter(torch.ones(c_out))
        self.bias = nn.Parameter(torch.zeros(c_out))
        self.norm = functools.partial(group_norm_act, num_groups=groups)

    def forward(self, x):
        return self.norm(self.conv(x), self.weight, self.bias)


# every stage keeps 32 channels so only the grouping differs
stages = nn.Sequential(Stage(3, 32, groups=8), Stage(32, 32, groups=4), Stage(32, 32, groups=2))
head = nn.Conv2d(32, 1, 1)
opt = torch.optim.Adam(list(stages.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(6):
    x = torch.randn(4, 3, 32, 32)
    target = (x.mean(1, keepdim=True) > 0).float()
    loss = F.binary_cross_entropy_with_logits(head(stages(x)), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
