"""CLIP-style contrastive training with a learnable logit_scale parameter clamped after each step."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class TinyCLIP(nn.Module):
    def __init__(self, img_dim=32, txt_vocab=100, embed=16):
        super().__init__()
        self.visual = nn.Sequential(nn.Linear(img_dim, 64), nn.GELU(), nn.Linear(64, embed))
        self.token_embedding = nn.EmbeddingBag(txt_vocab, embed)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, images, texts):
        img = F.normalize(self.visual(images), dim=-1)
        txt = F.normalize(self.token_embedding(texts), dim=-1)
        logits = self.logit_scale.exp() * img @ txt.t()
        labels = torch.arange(images.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2

model = TinyCLIP()
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)
compiled = torch.compile(model, backend="eager")

for step in range(12):
    images = torch.randn(16, 32)
    texts = torch.randint(0, 100, (16, 7))
    loss = compiled(images, texts)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.logit_scale.clamp_(0, math.log(100))
    if step % 4 == 0:
        print(step, round(loss.item(), 4), round(model.logit_scale.exp().item(), 3))
