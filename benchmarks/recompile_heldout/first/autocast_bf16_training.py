"""CPU bfloat16 autocast training of a small transformer encoder layer with a compiled model."""
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
model = nn.Sequential(layer, nn.Flatten(), nn.Linear(32 * 10, 2))
cmodel = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(10):
    x = torch.randn(8, 10, 32)
    y = torch.randint(0, 2, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = cmodel(x)
        loss = nn.functional.cross_entropy(logits.float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
