"""Graph classification with top-k pooling and a global readout (torch_geometric.nn)."""

import torch
from torch import nn
from torch_geometric.nn import GraphConv, TopKPooling, global_mean_pool


class GraphClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GraphConv(8, 16)
        self.pool = TopKPooling(16, ratio=0.5)
        self.head = nn.Linear(16, 2)

    def forward(self, x, edge_index, batch):
        h = self.conv(x, edge_index).relu()
        h, edge_index, _, batch, _, _ = self.pool(h, edge_index, batch=batch)
        return self.head(global_mean_pool(h, batch))


model = torch.compile(GraphClassifier())


def inputs():
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 5, 4]])
    return [(torch.randn(6, 8), edge_index, torch.tensor([0, 0, 0, 1, 1, 1]))]
