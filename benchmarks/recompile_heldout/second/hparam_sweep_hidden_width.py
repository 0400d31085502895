"""Grid search over hidden width and learning rate, compiling a fresh model for every configuration."""
import itertools
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X, y = torch.randn(64, 16), torch.randn(64, 1)

class MLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(16, hidden)
        self.fc2 = nn.Linear(hidden, 1)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

def run_trial(hidden, lr, epochs=10):
    model = torch.compile(MLP(hidden), backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(epochs):
        loss = F.mse_loss(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()

results = {}
for hidden, lr in itertools.product([16, 32, 64], [1e-2, 1e-1]):
    results[(hidden, lr)] = run_trial(hidden, lr)
    print(f"hidden={hidden} lr={lr}: {results[(hidden, lr)]:.4f}")
print("best", min(results, key=results.get))
