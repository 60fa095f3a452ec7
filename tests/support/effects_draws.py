"""The effects model's documented draws, computed independently: a draw's seed and the
inverse CDF that turns uniforms into treatment labels. No test here."""

from __future__ import annotations

import hashlib

import numpy as np


def draw_seed(seed: int, name: str) -> np.random.SeedSequence:
    """The documented seed of a draw: [seed, sha256(name) as little-endian 32-bit words]."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest, dtype="<u4").tolist()])


def draw_codes(u: np.ndarray, favoured: np.ndarray, tw: float, cw: float, k: int) -> np.ndarray:
    """The inverse CDF: a favoured unit is P0 below cw / W (W = cw + k tw), then treatment j
    below (cw + j tw) / W; any other unit draws the k + 1 labels uniformly."""
    w = cw + k * tw
    favoured_edges = np.array([(cw + j * tw) / w for j in range(k + 1)])
    plain_edges = np.arange(1, k + 2) / (k + 1)
    out = np.empty(u.size, dtype=int)
    for i, (x, fav) in enumerate(zip(u, favoured, strict=True)):
        edges = favoured_edges if fav else plain_edges
        out[i] = int(np.argmax(x < edges))
    return out
