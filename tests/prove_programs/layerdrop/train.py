import torch

from model import Encoder

encoder = Encoder()
model = torch.compile(encoder, backend="eager")
optimizer = torch.optim.AdamW(encoder.parameters(), lr=0.01)
for step in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
