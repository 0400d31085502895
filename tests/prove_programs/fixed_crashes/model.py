import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def forward(self, logits, labels, labelled):
        if labelled.any():
            loss = F.cross_entropy(logits, labels)
        else:
            loss = logits.sum() * 0
        return loss
