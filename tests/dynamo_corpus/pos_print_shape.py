"""A print of an f-string holding a shape inside `forward` (deferred as a lazy `str.format`)."""
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print(f"input shape {x.shape}, rows {x.size(0)}")  # dynamo: break
        return x.relu()


ENTRY = torch.compile(Net(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.ones(4, 3),)]
