"""Attention-based forecasters of the interpretability benchmark, in torch.

Every model forecasts the next value of each of the N series from a window of the last W
values of all N series (the paper: window 10, single-output models). Each target series has
its OWN parameters (an "ensemble" dimension E = N of independent models, trained together
on the same mini-batches for speed: the summed loss gives every target the gradient it would
get alone), so attention for target i is the attention of the model forecasting series i.

Inputs ``x``: (batch, W, N), oldest step first; outputs (batch, N). ``explain(x)`` returns
:class:`Attention` averaged over the batch:

* ``beta`` (target x source): attention over variables, each row sums to 1 (DA-RNN: the
  target's own column is 0 -- its input attention covers the other series only).
* ``alpha`` (target x source x lag): attention over time, lag 1 = the most recent step;
  sums to 1 over lags. DA-RNN's temporal attention is over encoder states, not series:
  it is stored with source -1 ("all series"). TCDF has none (None).
* TCDF: ``beta`` = softmax of its attention vector; ``picks`` (target x source, 0/1) the
  semi-binarised causal picks of the raw attention scores (:func:`semi_binarise`).

Models (our compact re-implementations of the published architectures):
``imv_full`` / ``imv_tensor`` (Guo et al. 2019), ``tcdf`` (Nauta et al. 2019),
``darnn`` (Qin et al. 2017), ``seq2graph`` (Dang et al. 2018; the paper's own version).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
from torch import nn

MODEL_IDS = ("imv_full", "imv_tensor", "tcdf", "darnn", "seq2graph")


@dataclasses.dataclass
class Attention:
    """Batch-mean attention of one model (see the module doc for shapes and conventions)."""

    beta: np.ndarray
    alpha: np.ndarray | None
    alpha_sources: str = "series"  # "series" or "encoder" (DA-RNN: source -1)
    picks: np.ndarray | None = None


def _param(*shape: int, scale: float | None = None) -> nn.Parameter:
    fan_in = shape[-2] if len(shape) >= 2 else shape[-1]
    bound = scale if scale is not None else 1.0 / math.sqrt(max(fan_in, 1))
    return nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))


def _lstm_step(gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Standard LSTM update from pre-activations (..., 4h) split as i, f, g, o."""
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class IMVLSTM(nn.Module):
    """IMV-LSTM: a hidden-state matrix with one row of size ``hidden`` per input variable.

    Tensor version: gates and memory are per variable too (N parallel LSTMs).
    Full version: the per-variable update j_t = tanh(W_j (x) h_{t-1} + U_j (x) x_t + b_j)
    is kept, but the gates i, f, o come from the whole [x_t, vec(h_{t-1})] like an LSTM.
    Mixture attention: alpha_n = softmax over time of tanh(F_alpha h_{t,n}); g_n =
    sum_t alpha_{t,n} h_{t,n}; mu_n = Phi([g_n, h_{T,n}]); beta = softmax over n of
    tanh(F_beta [g_n, h_{T,n}]); prediction = sum_n beta_n mu_n.
    """

    def __init__(self, n_series: int, hidden: int, full: bool = False) -> None:
        super().__init__()
        e, n, d = n_series, n_series, hidden
        self.n, self.d, self.full = n, d, full
        if full:
            self.u_j = _param(e, n, d, scale=1.0)
            self.w_j = _param(e, n, d, d)
            self.b_j = nn.Parameter(torch.zeros(e, n, d))
            self.w_gates = _param(e, n + n * d, 3 * n * d)
            self.b_gates = nn.Parameter(torch.zeros(e, 3 * n * d))
        else:
            self.u = _param(e, n, 4 * d, scale=1.0)
            self.w = _param(e, n, d, 4 * d)
            self.b = nn.Parameter(torch.zeros(e, n, 4 * d))
        self.f_alpha = _param(e, n, d, 1)
        self.f_alpha_b = nn.Parameter(torch.zeros(e, n, 1))
        self.f_beta = _param(e, n, 2 * d, 1)
        self.f_beta_b = nn.Parameter(torch.zeros(e, n, 1))
        self.phi = _param(e, n, 2 * d, 1)
        self.phi_b = nn.Parameter(torch.zeros(e, n, 1))

    def _forward(self, x: torch.Tensor):
        batch, window, n = x.shape
        e, d = n, self.d
        h = x.new_zeros(batch, e, n, d)
        c = x.new_zeros(batch, e, n, d)
        states = []
        for t in range(window):
            xt = x[:, t, :]  # (B, N)
            if self.full:
                j = torch.tanh(
                    torch.einsum("bend,endk->benk", h, self.w_j)
                    + xt[:, None, :, None] * self.u_j
                    + self.b_j
                )
                flat = torch.cat(
                    [xt[:, None, :].expand(batch, e, n), h.reshape(batch, e, n * d)], -1
                )
                gates = torch.einsum("bei,eio->beo", flat, self.w_gates) + self.b_gates
                i, f, o = torch.sigmoid(gates).reshape(batch, e, 3, n, d).unbind(2)
                c = f * c + i * j
                h = o * torch.tanh(c)
            else:
                gates = (
                    torch.einsum("bend,endk->benk", h, self.w)
                    + xt[:, None, :, None] * self.u
                    + self.b
                )
                h, c = _lstm_step(gates, c)
            states.append(h)
        hs = torch.stack(states, dim=2)  # (B, E, W, N, d)
        scores = torch.tanh(
            torch.einsum("bewnd,endk->bewnk", hs, self.f_alpha) + self.f_alpha_b[:, None]
        )
        alpha = torch.softmax(scores.squeeze(-1), dim=2)  # (B, E, W, N)
        g = (alpha[..., None] * hs).sum(2)  # (B, E, N, d)
        hg = torch.cat([g, h], dim=-1)
        mu = (torch.einsum("benk,enko->beno", hg, self.phi) + self.phi_b).squeeze(-1)
        beta = torch.softmax(
            torch.tanh(torch.einsum("benk,enko->beno", hg, self.f_beta) + self.f_beta_b).squeeze(
                -1
            ),
            dim=-1,
        )  # (B, E, N)
        return (beta * mu).sum(-1), alpha, beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._forward(x)[0]

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> Attention:
        _, alpha, beta = self._forward(x)
        # alpha (B, E, W, N) -> (E, N, lag) with lag 1 = last window position
        alpha_lag = alpha.mean(0).permute(0, 2, 1).flip(-1)
        return Attention(beta.mean(0).cpu().numpy(), alpha_lag.cpu().numpy())


def semi_binarise(scores: np.ndarray) -> np.ndarray:
    """TCDF's attention interpretation: which series are potential causes of one target.

    Scores sorted descending; with at most 5 series every score > 1 is a cause. Otherwise the
    cut is the largest gap between consecutive scores among those >= 1 that lies in the first
    half of the list and is not the first gap (unless no other qualifies); the scores above
    the cut are causes (TCDF initialises scores at 1, so causes are those that grew).
    Returns a 0/1 vector.
    """
    scores = np.asarray(scores, dtype=float)
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    picks = np.zeros(scores.size, dtype=int)
    if scores.size <= 5:
        picks[scores > 1.0] = 1
        return picks
    gaps = []
    for k in range(scores.size - 1):
        if ordered[k] < 1.0:
            break
        gaps.append(ordered[k] - ordered[k + 1])
    cut = -1
    for gap in sorted(gaps, reverse=True):
        k = gaps.index(gap)
        if k < (scores.size - 1) / 2 and k > 0:
            cut = k
            break
    cut = max(cut, 0)
    if ordered[0] >= 1.0:
        picks[order[: cut + 1]] = 1
    return picks


class TCDF(nn.Module):
    """TCDF: per target, an attention vector a (init 1) scales the N inputs by softmax(a);
    then depthwise-separable causal convolutions (kernel ``kernel``, dilations 1, 2, 4, ...,
    PReLU, residual connections) and a 1 x 1 pointwise convolution give the forecast."""

    def __init__(self, n_series: int, levels: int = 3, kernel: int = 3) -> None:
        super().__init__()
        e, n = n_series, n_series
        self.n, self.kernel = n, kernel
        self.attention = nn.Parameter(torch.ones(e, n))
        self.convs = nn.ModuleList()
        self.acts = nn.ModuleList()
        for level in range(levels):
            dilation = 2**level
            self.convs.append(nn.Conv1d(e * n, e * n, kernel, dilation=dilation, groups=e * n))
            self.acts.append(nn.PReLU(e * n))
        self.pointwise = nn.Conv1d(e * n, e, 1, groups=e)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, window, n = x.shape
        weights = torch.softmax(self.attention, dim=-1)  # (E, N)
        z = (x.transpose(1, 2)[:, None, :, :] * weights[None, :, :, None]).reshape(
            batch, n * n, window
        )
        for conv, act in zip(self.convs, self.acts, strict=True):
            pad = (self.kernel - 1) * conv.dilation[0]
            out = act(conv(nn.functional.pad(z, (pad, 0))))
            z = out + z
        return self.pointwise(z)[:, :, -1]

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> Attention:
        raw = self.attention.detach().cpu().numpy()
        picks = np.stack([semi_binarise(row) for row in raw])
        beta = torch.softmax(self.attention, dim=-1).cpu().numpy()
        return Attention(beta, None, picks=picks)


class DARNN(nn.Module):
    """DA-RNN: input attention over the driving series (all but the target) feeds an LSTM
    encoder; temporal attention over the encoder states, queried by an LSTM decoder reading the
    target's history, gives the context for the forecast."""

    def __init__(self, n_series: int, hidden: int, window: int) -> None:
        super().__init__()
        if n_series < 2:
            raise ValueError("DA-RNN needs at least 2 series: its input attention skips the target")
        e, n, m = n_series, n_series, hidden
        self.n, self.m = n, m
        self.in_u = _param(e, window, m)  # U of e_t^k = v' tanh(W [h; c] + U x^k), x^k a window
        self.enc_w = _param(e, n + m, 4 * m)
        self.enc_b = nn.Parameter(torch.zeros(e, 4 * m))
        self.in_w = _param(e, 2 * m, m)
        self.in_v = _param(e, m, 1)
        self.dec_w = _param(e, 1 + m, 4 * m)
        self.dec_b = nn.Parameter(torch.zeros(e, 4 * m))
        self.tmp_w = _param(e, 2 * m, m)
        self.tmp_u = _param(e, m, m)
        self.tmp_v = _param(e, m, 1)
        self.ytilde = _param(e, 1 + m, 1)
        self.out_w = _param(e, 2 * m, m)
        self.out_v = _param(e, m, 1)
        self.out_b = nn.Parameter(torch.zeros(e))
        self.register_buffer("mask", torch.eye(n, dtype=torch.bool))

    def _forward(self, x: torch.Tensor):
        batch, window, n = x.shape
        e, m = n, self.m
        # input attention scores need each series' whole window: (B, E, N, m)
        series_term = torch.einsum("bwn,ewm->benm", x, self.in_u)
        h = x.new_zeros(batch, e, m)
        c = x.new_zeros(batch, e, m)
        encoded, input_weights = [], []
        for t in range(window):
            query = torch.einsum("bek,ekm->bem", torch.cat([h, c], -1), self.in_w)
            score = torch.einsum(
                "benm,emo->beno", torch.tanh(query[:, :, None, :] + series_term), self.in_v
            ).squeeze(-1)
            score = score.masked_fill(self.mask[None], float("-inf"))
            weight = torch.softmax(score, dim=-1)  # (B, E, N), 0 on the target itself
            xt = weight * x[:, t, None, :]
            gates = torch.einsum("bek,eko->beo", torch.cat([xt, h], -1), self.enc_w) + self.enc_b
            h, c = _lstm_step(gates, c)
            encoded.append(h)
            input_weights.append(weight)
        enc = torch.stack(encoded, dim=2)  # (B, E, W, m)
        enc_term = torch.einsum("bewm,emk->bewk", enc, self.tmp_u)
        d = x.new_zeros(batch, e, m)
        s = x.new_zeros(batch, e, m)
        target_history = x.permute(0, 2, 1)  # (B, E=N, W): target e's own series
        context = x.new_zeros(batch, e, m)
        temporal = None
        for t in range(window):
            query = torch.einsum("bek,ekm->bem", torch.cat([d, s], -1), self.tmp_w)
            score = torch.einsum(
                "bewm,emo->bewo", torch.tanh(query[:, :, None, :] + enc_term), self.tmp_v
            ).squeeze(-1)
            temporal = torch.softmax(score, dim=-1)  # (B, E, W)
            context = (temporal[..., None] * enc).sum(2)
            y_in = torch.einsum(
                "bek,eko->beo", torch.cat([target_history[:, :, t, None], context], -1), self.ytilde
            )
            gates = torch.einsum("bek,eko->beo", torch.cat([y_in, d], -1), self.dec_w) + self.dec_b
            d, s = _lstm_step(gates, s)
        hidden = torch.einsum("bek,ekm->bem", torch.cat([d, context], -1), self.out_w)
        y = torch.einsum("bem,emo->beo", hidden, self.out_v).squeeze(-1) + self.out_b
        beta = torch.stack(input_weights, 2).mean(2)  # (B, E, N)
        return y, temporal, beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._forward(x)[0]

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> Attention:
        _, temporal, beta = self._forward(x)
        alpha = temporal.mean(0).flip(-1)[:, None, :]  # (E, 1, lag): over encoder states
        return Attention(beta.mean(0).cpu().numpy(), alpha.cpu().numpy(), alpha_sources="encoder")


class Seq2Graph(nn.Module):
    """seq2graph: a bidirectional GRU encodes each series (weights shared across series);
    the dual-purpose layer attends over time (alpha, per series) and summarises each series;
    the decoder of each target attends over the series summaries (beta) and forecasts.
    Alpha depends on the source series only, so every target sees the same alpha rows."""

    def __init__(self, n_series: int, hidden: int) -> None:
        super().__init__()
        e, h = n_series, hidden
        self.n, self.h = n_series, hidden
        self.encoder = nn.GRU(1, h, batch_first=True, bidirectional=True)
        self.alpha_w = nn.Linear(2 * h + 1, h)
        self.alpha_v = nn.Linear(h, 1, bias=False)
        self.summary = nn.GRU(2 * h + 1, h, batch_first=True)
        self.beta_w = _param(e, h, h)
        self.beta_v = _param(e, h, 1)
        self.out_w = _param(e, h, 1)
        self.out_b = nn.Parameter(torch.zeros(e))

    def _forward(self, x: torch.Tensor):
        batch, window, n = x.shape
        series = x.permute(0, 2, 1).reshape(batch * n, window, 1)
        encoded, _ = self.encoder(series)
        features = torch.cat([encoded, series], -1)  # (B*N, W, 2h+1)
        alpha = torch.softmax(self.alpha_v(torch.tanh(self.alpha_w(features))).squeeze(-1), -1)
        _, last = self.summary(alpha[..., None] * features)
        summary = torch.tanh(last[-1]).reshape(batch, n, self.h)  # (B, N, h)
        score = torch.einsum("bnk,ekm->benm", summary, self.beta_w).tanh()
        score = torch.einsum("benm,emo->beno", score, self.beta_v).squeeze(-1)
        beta = torch.softmax(score, -1)  # (B, E, N)
        mixed = torch.einsum("ben,bnk->bek", beta, summary).tanh()
        y = torch.einsum("bek,eko->beo", mixed, self.out_w).squeeze(-1) + self.out_b
        return y, alpha.reshape(batch, n, window), beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._forward(x)[0]

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> Attention:
        _, alpha, beta = self._forward(x)
        per_source = alpha.mean(0).flip(-1)  # (N, lag)
        alpha_full = per_source[None].expand(self.n, -1, -1)
        return Attention(beta.mean(0).cpu().numpy(), alpha_full.cpu().numpy().copy())


def build_model(model_id: str, n_series: int, hidden: int, window: int) -> nn.Module:
    """A fresh model of ``model_id`` for ``n_series`` series (its seed is the caller's)."""
    if model_id == "imv_full":
        return IMVLSTM(n_series, hidden, full=True)
    if model_id == "imv_tensor":
        return IMVLSTM(n_series, hidden, full=False)
    if model_id == "tcdf":
        levels = max(1, math.ceil(math.log2(max(window, 2))) - 1)
        return TCDF(n_series, levels=levels, kernel=3)
    if model_id == "darnn":
        return DARNN(n_series, hidden, window)
    if model_id == "seq2graph":
        return Seq2Graph(n_series, hidden)
    raise ValueError(f"unknown model {model_id!r}: choose from {', '.join(MODEL_IDS)}")
