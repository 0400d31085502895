"""Training with a compiled model where the dropout rate is lowered every epoch."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


model = Net()
model.compile(backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(4):
    model.drop.p = 0.5 - 0.1 * epoch
    for _ in range(3):
        x, y = torch.randn(16, 32), torch.randint(0, 8, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
