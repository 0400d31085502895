"""Keyword-spotting CNN on random spectrogram clips of varying length, padded to a fixed frame budget with a length mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
MAX_FRAMES, N_MELS, N_KEYWORDS = 128, 40, 12


class KWSNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.fc = nn.Linear(32, N_KEYWORDS)

    def forward(self, spec, mask):  # spec (B, 1, mels, T), mask (B, T)
        h = self.conv(spec).mean(dim=2)  # (B, C, T)
        m = mask.unsqueeze(1).to(h.dtype)
        pooled = (h * m).sum(-1) / m.sum(-1).clamp(min=1)
        return self.fc(pooled)


def collate(clips):
    batch = torch.zeros(len(clips), 1, N_MELS, MAX_FRAMES)
    mask = torch.zeros(len(clips), MAX_FRAMES, dtype=torch.bool)
    for i, c in enumerate(clips):
        n = min(c.shape[-1], MAX_FRAMES)
        batch[i, 0, :, :n] = c[:, :n]
        mask[i, :n] = True
    return batch, mask


model = KWSNet()
compiled = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(15):
    clips = [torch.randn(N_MELS, int(torch.randint(60, 160, ()))) for _ in range(16)]
    spec, mask = collate(clips)
    labels = torch.randint(0, N_KEYWORDS, (16,))
    loss = F.cross_entropy(compiled(spec, mask), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} mean_len {mask.sum(1).float().mean():.1f} loss {loss.item():.3f}")
