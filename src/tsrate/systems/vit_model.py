"""The ViT-num-spec network (see :mod:`tsrate.systems.vit_num_spec` for the model): 16 × 16
patches of the 128 × 128 image, a class token, a pre-norm transformer encoder and an MLP head,
in three sizes (var ``vit_size``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tsrate.inputs.images import IMAGE_SIZE

PATCH_SIZE = 16
#: Bumped when training or model code changes what a cached checkpoint means.
MODEL_VERSION = 2


@dataclasses.dataclass(frozen=True)
class VitSize:
    dim: int
    depth: int
    heads: int
    mlp_dim: int


SIZES: dict[str, VitSize] = {
    "tiny": VitSize(dim=32, depth=1, heads=2, mlp_dim=64),
    "small": VitSize(dim=64, depth=2, heads=4, mlp_dim=128),
    "base": VitSize(dim=768, depth=12, heads=12, mlp_dim=3072),
}


def build_network(size: VitSize, horizon: int):
    """The ViT-num-spec network (torch ``nn.Module``) mapping (B, 3, 128, 128) → (B, horizon)."""
    import torch
    from torch import nn

    class VitNumSpecNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            tokens = (IMAGE_SIZE // PATCH_SIZE) ** 2
            self.patch_embedding = nn.Conv2d(3, size.dim, PATCH_SIZE, stride=PATCH_SIZE)
            self.class_token = nn.Parameter(torch.zeros(1, 1, size.dim))
            self.position_embedding = nn.Parameter(torch.randn(1, tokens + 1, size.dim) * 0.02)
            layer = nn.TransformerEncoderLayer(
                size.dim,
                size.heads,
                size.mlp_dim,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            self.encoder = nn.TransformerEncoder(
                layer, size.depth, norm=nn.LayerNorm(size.dim), enable_nested_tensor=False
            )
            self.head = nn.Sequential(
                nn.Linear(size.dim, size.mlp_dim), nn.GELU(), nn.Linear(size.mlp_dim, horizon)
            )

        def forward(self, images: torch.Tensor) -> torch.Tensor:
            patches = self.patch_embedding(images).flatten(2).transpose(1, 2)
            tokens = torch.cat([self.class_token.expand(len(patches), -1, -1), patches], dim=1)
            encoded = self.encoder(tokens + self.position_embedding)
            return self.head(encoded[:, 0])

    return VitNumSpecNetwork()


def image_tensor(images: np.ndarray, device: Any = "cpu"):
    """uint8 (B, H, W, 3) → float32 (B, 3, H, W) in [−1, 1] on ``device``."""
    import torch

    tensor = torch.from_numpy(np.ascontiguousarray(images)).to(device)
    return tensor.permute(0, 3, 1, 2).float().div_(127.5).sub_(1.0)
