"""A base class's `forward` calls a hook that the compiled subclass overrides: Dynamo runs the
subclass's (an instance's method), and breaks there."""
import torch


class Base(torch.nn.Module):
    def forward(self, x):
        return self.mine(x)

    def mine(self, x):
        return x


class Sub(Base):
    def mine(self, x):
        if x.sum() > 0:  # dynamo: break
            x = x * 2
        return x


ENTRY = torch.compile(Sub(), backend="eager")
INPUTS = [(torch.ones(3),), (-torch.ones(3),)]
