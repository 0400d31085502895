"""A keyword spotter that computes its MFCC and constant-Q features on the fly (nnAudio)."""

import torch
from nnAudio import features
from torch import nn


class KeywordSpotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.mfcc = features.MFCC(sr=16000, n_mfcc=13, n_fft=256, hop_length=128, n_mels=16, verbose=False)
        self.cqt = features.CQT2010v2(sr=16000, hop_length=256, n_bins=24, verbose=False)
        self.conv = nn.Conv1d(13 + 24, 16, 3, padding=1)
        self.head = nn.Linear(16, 5)

    def forward(self, audio):
        mfcc = self.mfcc(audio)
        cqt = self.cqt(audio)
        frames = min(mfcc.shape[-1], cqt.shape[-1])
        feats = torch.cat([mfcc[..., :frames], cqt[..., :frames].log1p()], dim=1)
        return self.head(self.conv(feats).relu().mean(-1))


model = torch.compile(KeywordSpotter())


def inputs():
    return [(torch.randn(2, 32000),)]
