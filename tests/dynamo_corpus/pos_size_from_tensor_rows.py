"""transformers 5.x vision mergers (`for t, h, w in grid_thw: ... torch.arange(h)`): a size taken by
iterating a tensor is a row of it, computed in the graph, so using it as a size breaks."""
import torch


class Merger(torch.nn.Module):
    def forward(self, x, grid: torch.Tensor):
        total = x.sum()
        for h, w in grid:
            total = total + torch.arange(h).sum() * w  # dynamo: break
        return total


ENTRY = torch.compile(Merger(), backend="eager")
INPUTS = [(torch.ones(2, 3), torch.tensor([[3, 4], [2, 2]]))]
