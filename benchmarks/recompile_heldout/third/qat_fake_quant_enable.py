"""Quantization-aware fine-tuning: an MLP trained in float for a warmup epoch, then with int8 fake-quantized weights enabled per layer."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QATLinear(nn.Linear):
    def __init__(self, *args, bits=8, **kwargs):
        super().__init__(*args, **kwargs)
        self.bits = bits
        self.fake_quant = False

    def forward(self, x):
        w = self.weight
        if self.fake_quant:
            qmax = 2 ** (self.bits - 1) - 1
            scale = w.detach().abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / qmax
            w_q = torch.clamp(torch.round(w / scale), -qmax - 1, qmax) * scale
            w = w + (w_q - w).detach()  # straight-through estimator
        return F.linear(x, w, self.bias)


model = nn.Sequential(QATLinear(20, 64), nn.ReLU(), QATLinear(64, 64), nn.ReLU(), QATLinear(64, 3))
compiled = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x_all, y_all = torch.randn(256, 20), torch.randint(0, 3, (256,))

for epoch in range(3):
    if epoch == 1:
        for m in model.modules():
            if isinstance(m, QATLinear):
                m.fake_quant = True
    for i in range(0, 256, 32):
        loss = F.cross_entropy(compiled(x_all[i:i + 32]), y_all[i:i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} fake_quant {model[0].fake_quant} loss {loss.item():.3f}")
