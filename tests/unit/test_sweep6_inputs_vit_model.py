"""The ViT-num-spec network (tsrate.systems.vit_model) against its documented architecture
computed here with plain tensor algebra from the module's own weights: 16 × 16 patches
embedded by a matrix product on the unfolded image, a class token first, position
embeddings added, pre-norm encoder layers (x + attention(LN(x)), then x + MLP(LN(x)), GELU),
a final LayerNorm, and the MLP head on the class token. Plus the sizes (ViT-Base's
768 / 12 / 12 / 3072 for ``base``), the position embeddings' 0.02 initial scale, the image
scaling to [−1, 1], and the batch's independence (attention over tokens, not windows).

Written for the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep6_inputs_vit.json). Networks are built tiny, on the CPU.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from tsrate.systems import vit_model as vm  # noqa: E402


def layer_norm(x, norm):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def attention(x, module, heads):
    batch, tokens, dim = x.shape
    q, k, v = (x @ module.in_proj_weight.T + module.in_proj_bias).split(dim, dim=-1)
    per_head = dim // heads

    def split(t):
        return t.reshape(batch, tokens, heads, per_head).transpose(1, 2)

    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(per_head)
    mixed = (scores.softmax(dim=-1) @ split(v)).transpose(1, 2).reshape(batch, tokens, dim)
    return mixed @ module.out_proj.weight.T + module.out_proj.bias


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def forward_by_hand(network, images, size: vm.VitSize) -> torch.Tensor:
    batch = images.shape[0]
    patches = images.unfold(2, 16, 16).unfold(3, 16, 16)  # (B, 3, 8, 8, 16, 16)
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(batch, 64, 3 * 16 * 16)
    embedding = network.patch_embedding
    x = patches @ embedding.weight.reshape(size.dim, -1).T + embedding.bias
    x = torch.cat([network.class_token.expand(batch, 1, size.dim), x], dim=1)
    x = x + network.position_embedding
    for layer in network.encoder.layers:
        x = x + attention(layer_norm(x, layer.norm1), layer.self_attn, size.heads)
        hidden = gelu(layer.linear1(layer_norm(x, layer.norm2)))
        x = x + layer.linear2(hidden)
    x = layer_norm(x, network.encoder.norm)
    first, _, last = network.head
    return last(gelu(first(x[:, 0])))


def test_sizes_are_the_documented_ones():
    assert vm.PATCH_SIZE == 16
    assert vm.SIZES["base"] == vm.VitSize(dim=768, depth=12, heads=12, mlp_dim=3072)  # ViT-Base
    assert vm.SIZES["small"] == vm.VitSize(dim=64, depth=2, heads=4, mlp_dim=128)
    assert vm.SIZES["tiny"] == vm.VitSize(dim=32, depth=1, heads=2, mlp_dim=64)


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_network_is_the_documented_pre_norm_vit(name):
    size = vm.SIZES[name]
    torch.manual_seed(0)
    network = vm.build_network(size, horizon=3).eval()
    with torch.no_grad():  # a non-zero class token, so its place in the sequence matters
        network.class_token.normal_()
    assert len(network.encoder.layers) == size.depth
    assert tuple(network.position_embedding.shape) == (1, 65, size.dim)
    images = torch.randn(3, 3, 128, 128)
    with torch.no_grad():
        out = network(images)
        expected = forward_by_hand(network, images, size)
        assert out.shape == (3, 3)
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=2e-5)
        alone = network(images[1:2])  # attention mixes tokens, never windows
        np.testing.assert_allclose(alone.numpy(), out[1:2].numpy(), atol=2e-5)


def test_position_embeddings_start_small_and_the_class_token_at_zero():
    torch.manual_seed(1)
    network = vm.build_network(vm.SIZES["small"], horizon=2)
    spread = float(network.position_embedding.detach().std())
    assert 0.018 < spread < 0.022  # 4,160 draws of N(0, 0.02²)
    assert float(network.class_token.detach().abs().max()) == 0.0


def test_image_tensor_scales_bytes_to_minus_one_to_one_channels_first():
    images = np.random.default_rng(0).integers(0, 256, size=(2, 4, 5, 3)).astype(np.uint8)
    images[0, 0, 0] = [0, 255, 128]
    tensor = vm.image_tensor(images)
    assert tensor.dtype == torch.float32 and tuple(tensor.shape) == (2, 3, 4, 5)
    expected = images.transpose(0, 3, 1, 2).astype(np.float64) / 127.5 - 1.0
    np.testing.assert_allclose(tensor.numpy(), expected, atol=1e-6)
    assert tensor[0, :, 0, 0].tolist() == pytest.approx([-1.0, 1.0, 128 / 127.5 - 1], abs=1e-6)
