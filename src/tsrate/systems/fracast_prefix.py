"""fracast's encoder with its padded prefix computed once, not once per window.

fracast 0.1.0 left-pads every context to ``W = 2048`` steps and runs its encoder (ten
dilated causal convolution stages, dilations 1 … 512) over all of them. At a padded
position the encoder's input does not depend on the window's values: the value is 0, the
coverage flag 0, and the other features are functions of the position (the recency
channels) and of the periods detected in the window (the phase channels). The stages are
causal, so the encoder's states over the padding are the same for every window whose
periodogram finds the same periods. This module computes those states once per
(prefix length, periods), keeps them, and runs the stages only over the observed tail
(80 of 2048 positions in the default study), reading the prefix states each tap needs from
the cache. The head then receives the same full ``[B, W, D]`` states as before.

The arithmetic is the same as fracast's own; what changes is the shape of the tensors the
matrix products and convolutions run on, so results agree to float32 rounding, not bit
for bit (measured on the default study: see ``benchmarks/bench_fracast.py``).

Built on fracast's internals (``FracastCore``'s submodules and the ``_core.periodic``
helpers), so it runs only on the fracast versions in
``tsrate.systems.fracast_model.PREFIX_ENCODER_VERSIONS`` (on another version the
``auto`` setting uses fracast's own full-length encoder) and only on a model whose structure
matches (checked by :func:`check_supported`; a mismatch is a one-line error naming
``TSRATE_FRACAST_ENCODER=full``).
"""

from __future__ import annotations

from collections import OrderedDict

import torch
import torch.nn.functional as F
from fracast._core.periodic.encoder import _fill_nan_row
from fracast._core.periodic.official_encoding import (
    _norm_fp32,
    _phase_encoding,
    _recency_encoding,
)
from fracast._core.periodic.official_periodogram import significant_periods

#: prefix states kept per process (about 1 MB each at W = 2048, d_model = 64)
MAX_CACHED_PREFIXES = 256


class UnsupportedModel(Exception):
    """The loaded fracast model is not the structure this module reproduces."""


def check_supported(core: torch.nn.Module) -> None:
    """Raise :class:`UnsupportedModel` unless ``core`` is fracast 0.1.0's encoder layout:
    one full-resolution level, recency and phase features, one shared separable causal
    block without dynamic activation quantization."""
    problems = []
    if type(core).__name__ != "FracastCore":
        problems.append(f"core is {type(core).__name__}")
    else:
        block = core.block
        if not core.share_stages or block is None:
            problems.append("stages are not shared")
        elif not (block.separable and block.causal) or block.int8_dynamic_act:
            problems.append("block is not separable, causal and weight-only quantized")
        if not core.use_recency or core.periodic is None:
            problems.append("recency or phase features are off")
        elif core.periodic.L != 1 or core.level_widths != [core.W]:
            problems.append("more than one resolution level")
    if problems:
        raise UnsupportedModel("; ".join(problems))


class PrefixCachedCore:
    """A drop-in for ``FracastModel.core``: ``core(values, mask, cov)`` → ``[B, W, D]``."""

    def __init__(self, core: torch.nn.Module, max_entries: int = MAX_CACHED_PREFIXES):
        check_supported(core)
        self.core = core
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple, tuple[list[torch.Tensor], torch.Tensor]] = OrderedDict()
        self.computed = 0  # prefixes computed (cache misses)
        self.reused = 0  # (batch, periods) lookups served from the cache

    # -- features, as FracastCore.forward and PeriodicPhaseEncoder.forward build them ------

    def _features(
        self, v: torch.Tensor, c: torch.Tensor, positions: torch.Tensor, periods: torch.Tensor
    ) -> torch.Tensor:
        core, periodic = self.core, self.core.periodic
        batch = v.shape[0]
        pos = positions.unsqueeze(0).expand(batch, -1)
        feats = [v.unsqueeze(-1), c.unsqueeze(-1), _recency_encoding(pos, core.W).to(v.dtype)]
        x = core.in_proj(torch.cat(feats, dim=-1))
        phase = _phase_encoding(pos, periods, n_harmonics=periodic.n_harm).to(v.dtype)
        return x + periodic.proj(phase)

    def _periods(self, v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        periodic = self.core.periodic
        periods, _scores, _n_valid = significant_periods(
            _fill_nan_row(v.float(), m),
            min_period=periodic.min_period,
            max_period=max(2, self.core.W // 2),
            top_k=periodic.top_k,
            significance_alpha=periodic.alpha,
        )
        if periods.shape[1] != periodic.K:
            raise UnsupportedModel(f"detector returned K={periods.shape[1]}")
        return periods

    def _taps(self, dilation: int) -> int:
        return (self.core.block.kernel - 1) * dilation

    # -- the prefix --------------------------------------------------------------------------

    def _prefixes(
        self, start: int, periods: torch.Tensor, device: torch.device, dtype: torch.dtype
    ) -> list[tuple[list[torch.Tensor], torch.Tensor]]:
        """The cached states of the padding ``[0, start)`` for each row of ``periods``
        (unique rows): per stage the block's input over the positions its taps reach
        before ``start``, and the encoder's output over the whole prefix."""
        keys = [(start, tuple(row)) for row in periods.tolist()]
        missing = [i for i, key in enumerate(keys) if key not in self._cache]
        if missing:
            core = self.core
            n = len(missing)
            zeros = torch.zeros((n, start), device=device, dtype=dtype)
            x = self._features(zeros, zeros, torch.arange(start, device=device), periods[missing])
            inputs = []
            for dilation in core.dilations():
                xi = x if core.scale is None else core.scale(x, dilation)
                inputs.append(xi[:, max(0, start - self._taps(dilation)) :])
                x = core.block(xi, dilation)
            final = core.norm(x)
            for j, i in enumerate(missing):
                self._cache[keys[i]] = ([s[j].clone() for s in inputs], final[j].clone())
            self.computed += n
        self.reused += len(keys) - len(missing)
        entries = []
        for key in keys:
            self._cache.move_to_end(key)
            entries.append(self._cache[key])
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
        return entries

    # -- forward -----------------------------------------------------------------------------

    def __call__(self, values: torch.Tensor, mask: torch.Tensor, cov: torch.Tensor):
        core = self.core
        if values.dim() != 3 or values.shape[1] != 1 or values.shape[2] != core.W:
            return core(values, mask, cov)  # let fracast raise its own error
        v = torch.nan_to_num(values[:, 0], nan=0.0, posinf=0.0, neginf=0.0)
        m = mask[:, 0].bool()
        c = cov[:, 0].to(v.dtype)
        v = torch.where(m, v, torch.zeros_like(v))
        # the prefix: leading positions unobserved and uncovered in every row
        touched = (m | (c != 0)).any(dim=0)
        if not bool(touched.any()):
            return core(values, mask, cov)
        start = int(torch.argmax(touched.to(torch.int8)))
        if start == 0:
            return core(values, mask, cov)

        periods = self._periods(v, m)
        unique, row_of = torch.unique(periods, dim=0, return_inverse=True)
        prefixes = self._prefixes(start, unique, v.device, v.dtype)

        x = self._features(
            v[:, start:], c[:, start:], torch.arange(start, core.W, device=v.device), periods
        )
        block = core.block
        for stage, dilation in enumerate(core.dilations()):
            xi = x if core.scale is None else core.scale(x, dilation)
            left = torch.stack([p[0][stage] for p in prefixes])[row_of]
            taps = self._taps(dilation)
            if left.shape[1] < taps:  # fracast's own left zero padding
                left = F.pad(left, (0, 0, taps - left.shape[1], 0))
            window = torch.cat([left, xi], dim=1).transpose(1, 2)
            dw = F.conv1d(window, block.dw_weight, block.dw_bias, dilation=dilation, groups=block.d)
            x = _norm_fp32(block.norm1, xi + block.pw(dw.transpose(1, 2)))
            x = _norm_fp32(block.norm2, x + block.ffn(x))
        tail = core.norm(x)
        head = torch.stack([p[1] for p in prefixes])[row_of]
        return torch.cat([head, tail], dim=1)
