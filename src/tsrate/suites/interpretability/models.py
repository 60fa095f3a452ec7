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
  it is stored with source -1 ("all series"). TCDF's alpha is the lag profile of its
  kernel weights (:meth:`TCDF.kernel_profiles`), not an attention.
* TCDF: ``beta`` = softmax of its attention vector; ``picks`` (target x source, 0/1) the
  causes validated by PIVM among the semi-binarised attention scores (:func:`semi_binarise`).

Every model has ``force_uniform`` (a set of "alpha", "beta"): those attention weights are
replaced by uniform ones in the forward pass (tests show attention changes the forecast).

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
#: TCDF levels = the reference's hidden_layers + 1. The reference default (0 hidden layers,
#: kernel 4) sees 4 steps; 1 hidden layer (dilations 1 and 4) sees 16 >= the window of 10.
TCDF_LEVELS = 2


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


def _normal(*shape: int, std: float = 0.02) -> nn.Parameter:
    """A parameter drawn from N(0, std^2) (the IMV-LSTM reference's init_std = 0.02)."""
    return nn.Parameter(torch.randn(*shape) * std)


def _uniform_like(weights: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.full_like(weights, 1.0 / weights.shape[dim])


class IMVLSTM(nn.Module):
    """IMV-LSTM: a hidden-state matrix with one row of size ``hidden`` per input variable.

    Tensor version: gates and memory are per variable too (N parallel LSTMs).
    Full version: the per-variable update j_t = tanh(W_j (x) h_{t-1} + U_j (x) x_t + b_j)
    is kept, but the gates i, f, o come from the whole [x_t, vec(h_{t-1})] like an LSTM.

    Mixture attention with UNBOUNDED scores, as the reference implementation's score
    networks (KurochkinAlexey/IMV_LSTM up to Sep 2019; Guo et al. 2019, Eq. 8, "f_n a
    flexible function"): a_{t,n} = F1_alpha(tanh(F_alpha,n h_{t,n} + b_n)), alpha = softmax
    over time of a; g_n = sum_t alpha_{t,n} h_{t,n}; mu_n = Phi([g_n, h_{T,n}]);
    b_n = F1_beta(tanh(F_beta,n [g_n, h_{T,n}] + b'_n)), beta = softmax over n of b;
    prediction = sum_n beta_n mu_n. F_alpha,n / F_beta,n are per variable, F1_alpha, F1_beta
    and Phi shared by the variables (one of each per target model). A score bounded by
    tanh (the reference's later commit) caps beta at e/(e + e^-1) = 0.881 with 2 series.

    ``force_uniform``: attention kinds ("alpha", "beta") replaced by uniform weights (for
    tests that attention matters).
    """

    def __init__(self, n_series: int, hidden: int, full: bool = False) -> None:
        super().__init__()
        e, n, d = n_series, n_series, hidden
        self.n, self.d, self.full = n, d, full
        self.force_uniform: set[str] = set()
        if full:
            self.u_j = _normal(e, n, d)
            self.w_j = _normal(e, n, d, d)
            self.b_j = _normal(e, n, d)
            self.w_gates = _param(e, n + n * d, 3 * n * d)
            self.b_gates = nn.Parameter(torch.zeros(e, 3 * n * d))
        else:
            self.u = _normal(e, n, 4 * d)
            self.w = _normal(e, n, d, 4 * d)
            self.b = _normal(e, n, 4 * d)
        self.f_alpha = _normal(e, n, d, d)
        self.f_alpha_b = _normal(e, n, d)
        self.f_alpha_1 = _param(e, d, 1)
        # The score networks' output biases (f_alpha_1_b, f_beta_1_b) add one number per
        # target to every score of a softmax, so they change nothing (gradient 0): the
        # reference's shared nn.Linear(., 1) layers carry the same inert biases.
        self.f_alpha_1_b = nn.Parameter(torch.zeros(e, 1))
        self.f_beta = _normal(e, n, 2 * d, 2 * d)
        self.f_beta_b = _normal(e, n, 2 * d)
        self.f_beta_1 = _param(e, 2 * d, 1)
        self.f_beta_1_b = nn.Parameter(torch.zeros(e, 1))
        self.phi = _param(e, 2 * d, 1)
        self.phi_b = nn.Parameter(torch.zeros(e, 1))

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
        hidden = torch.tanh(
            torch.einsum("bewnd,endk->bewnk", hs, self.f_alpha) + self.f_alpha_b[:, None]
        )
        scores = torch.einsum("bewnk,eko->bewno", hidden, self.f_alpha_1).squeeze(-1)
        alpha = torch.softmax(scores + self.f_alpha_1_b[None, :, :, None], dim=2)  # (B, E, W, N)
        if "alpha" in self.force_uniform:
            alpha = _uniform_like(alpha, 2)
        g = (alpha[..., None] * hs).sum(2)  # (B, E, N, d)
        hg = torch.cat([g, h], dim=-1)
        mu = (torch.einsum("benk,eko->beno", hg, self.phi) + self.phi_b[:, None]).squeeze(-1)
        hidden = torch.tanh(torch.einsum("benk,enkm->benm", hg, self.f_beta) + self.f_beta_b)
        scores = torch.einsum("benm,emo->beno", hidden, self.f_beta_1).squeeze(-1)
        beta = torch.softmax(scores + self.f_beta_1_b[None], dim=-1)  # (B, E, N)
        if "beta" in self.force_uniform:
            beta = _uniform_like(beta, -1)
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

    Ties, as the reference: a sorted gap is located by its first occurrence (``list.index``),
    so a gap tied with an earlier non-qualifying one is never the cut; a cut may fall inside
    a run of tied scores (a gap of 0), and then the tied series with the lower index are the
    causes -- the reference's unstable ``np.argsort`` orders them as numpy's version and CPU
    happen to, ours is the stable order.

    More than 5 series all scoring below 1: the reference lists no gap and fails (its cut
    index is never assigned: ``UnboundLocalError``); here nothing is picked, as its rule
    for at most 5 series and its threshold >= 1 imply.
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


def _causal_depthwise(conv: nn.Conv1d, z: torch.Tensor) -> torch.Tensor:
    """``conv`` (depthwise: one kernel per channel) applied causally to ``z`` (B, C, W), as
    a sum of shifted copies: out_t = sum_j w_j z_{t - (k - 1 - j) d} + b (zero before the
    window). Same result as the padded grouped convolution, many times faster on a CPU."""
    kernel, dilation = conv.kernel_size[0], conv.dilation[0]
    width = z.shape[-1]
    padded = nn.functional.pad(z, ((kernel - 1) * dilation, 0))
    weight = conv.weight[:, 0, :]  # (C, kernel)
    out = conv.bias[None, :, None].expand_as(z)
    for j in range(kernel):
        start = j * dilation
        out = out + weight[None, :, j, None] * padded[:, :, start : start + width]
    return out


class TCDF(nn.Module):
    """TCDF (Nauta et al. 2019), one attention-based depthwise-separable CNN per target, in
    the reference implementation's layout (M-Nauta/TCDF, ``ADDSTCN``/``DepthwiseNet``):

    * the N inputs are scaled by softmax(a), a trainable attention vector initialised at 1;
    * ``levels`` depthwise causal convolutions (one kernel per channel, ``kernel`` = 4,
      dilation ``dilation_c ** level`` with ``dilation_c`` = 4): the first level is
      conv + PReLU, middle levels conv + residual + PReLU, the last level (when there are
      two or more) conv + residual followed by a linear map across the channels;
    * a 1 x 1 pointwise convolution to the forecast (the last position of the window).

    After training, :meth:`validate` runs the permutation importance validation (PIVM): a
    potential cause (semi-binarised attention, :func:`semi_binarise`) is kept only if
    shuffling its values in time raises the loss by more than ``1 - significance`` of the
    loss decrease that training achieved. :meth:`delays` discovers each cause's delay from
    the kernel weights like the reference (per level the position of the largest |weight|,
    or 0 when two are tied, times the dilation; lag = delay + 1 because every input is
    one step behind the forecast step). Attention: ``beta`` = softmax(a), ``picks`` = the
    validated causes, ``alpha`` (target x source x lag) = the kernel weights' lag profile
    (per level |w| normalised, composed over levels; its mode is the discovered delay).
    """

    def __init__(
        self, n_series: int, window: int, levels: int = 2, kernel: int = 4, dilation_c: int = 4
    ) -> None:
        super().__init__()
        e, n = n_series, n_series
        self.n, self.window, self.kernel, self.dilation_c = n, window, kernel, dilation_c
        self.levels = levels
        self.force_uniform: set[str] = set()
        self.attention = nn.Parameter(torch.ones(e, n))
        self.convs = nn.ModuleList()
        self.acts = nn.ModuleList()
        for level in range(levels):
            conv = nn.Conv1d(e * n, e * n, kernel, dilation=dilation_c**level, groups=e * n)
            if level < levels - 1 or levels == 1:
                nn.init.normal_(conv.weight, 0.0, 0.1)  # the reference's First/TemporalBlock
            self.convs.append(conv)
            self.acts.append(nn.PReLU(e * n))
        self.last_linear = None
        if levels > 1:
            self.last_linear = _normal(e, n, n, std=0.01)  # reference: Linear(N, N) ~ N(0, .01)
            self.last_linear_b = _param(e, n)
        self.pointwise = nn.Conv1d(e * n, e, 1, groups=e)
        self.register_buffer("validated", torch.full((e, n), -1, dtype=torch.int64))

    def _weights(self) -> torch.Tensor:
        weights = torch.softmax(self.attention, dim=-1)  # (E, N)
        if "beta" in self.force_uniform:
            weights = _uniform_like(weights, -1)
        return weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, window, n = x.shape
        weights = self._weights()
        z = (x.transpose(1, 2)[:, None, :, :] * weights[None, :, :, None]).reshape(
            batch, n * n, window
        )
        for level, (conv, act) in enumerate(zip(self.convs, self.acts, strict=True)):
            out = _causal_depthwise(conv, z)
            if level == 0:
                z = act(out)
            elif level < self.levels - 1:
                z = act(out + z)
            else:
                mixed = (out + z).reshape(batch, n, n, window)  # (B, E, N channels, W)
                mixed = torch.einsum("beiw,eji->bejw", mixed, self.last_linear)
                z = (mixed + self.last_linear_b[None, :, :, None]).reshape(batch, n * n, window)
        return self.pointwise(z)[:, :, -1]

    @torch.no_grad()
    def per_target_loss(self, x: torch.Tensor, y: torch.Tensor, batch: int = 2048) -> np.ndarray:
        total = torch.zeros(self.n, device=x.device)
        for i in range(0, len(x), batch):
            total += ((self(x[i : i + batch]) - y[i : i + batch]) ** 2).sum(0)
        return (total / len(x)).cpu().numpy()

    @torch.no_grad()
    def validate(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        first_loss: np.ndarray,
        significance: float = 0.8,
        seed: int = 0,
    ) -> np.ndarray:
        """PIVM: validated causes (target x source, 0/1) from the potential causes."""
        real_loss = self.per_target_loss(x, y)
        potential = np.stack([semi_binarise(row) for row in self.attention.cpu().numpy()])
        validated = potential.copy()
        generator = torch.Generator().manual_seed(int(seed))
        for source in np.flatnonzero(potential.any(axis=0)):
            shuffled = x.clone()
            column = shuffled[:, :, source].reshape(-1)
            order = torch.randperm(column.numel(), generator=generator).to(x.device)
            shuffled[:, :, source] = column[order].reshape(x.shape[0], x.shape[1])
            test_loss = self.per_target_loss(shuffled, y)
            for target in np.flatnonzero(potential[:, source]):
                diff = first_loss[target] - real_loss[target]
                test_diff = first_loss[target] - test_loss[target]
                if test_diff > diff * significance:  # permuting it barely hurts: not a cause
                    validated[target, source] = 0
        self.validated.copy_(torch.from_numpy(validated))
        return validated

    @torch.no_grad()
    def kernel_profiles(self) -> np.ndarray:
        """(target x source x lag 1..window): per level |kernel| normalised over taps (tap j
        looks (kernel - 1 - j) * dilation steps back), composed over the levels."""
        e, n, w = self.n, self.n, self.window
        profile = np.zeros((e * n, 1))
        profile[:, 0] = 1.0
        for conv in self.convs:
            taps = conv.weight.detach().abs().cpu().numpy()[:, 0, :]  # (E*N, kernel)
            # cosmetic: a level's scale multiplies every composed lag alike, so the final
            # normalisation below alone fixes the profile (it only keeps the values near 1)
            taps = taps / np.maximum(taps.sum(1, keepdims=True), 1e-12)
            step = conv.dilation[0]
            reach = profile.shape[1] + (self.kernel - 1) * step
            nxt = np.zeros((e * n, reach))
            for j in range(self.kernel):
                offset = (self.kernel - 1 - j) * step
                nxt[:, offset : offset + profile.shape[1]] += taps[:, j : j + 1] * profile
            profile = nxt
        out = np.zeros((e * n, w))
        width = min(w, profile.shape[1])
        out[:, :width] = profile[:, :width]
        total = out.sum(1, keepdims=True)  # 0 only where every tap weight is 0
        out /= np.where(total > 0, total, 1.0)
        return out.reshape(e, n, w)

    @torch.no_grad()
    def delays(self) -> np.ndarray:
        """(target x source) the reference's discovered lag: sum over levels of the position
        (from the most recent tap) of the largest |weight| times the dilation, plus 1."""
        total = np.zeros(self.n * self.n, dtype=int)
        for conv in self.convs:
            taps = conv.weight.detach().abs().cpu().numpy()[:, 0, :]
            ordered = np.sort(taps, axis=1)
            position = self.kernel - 1 - np.argmax(taps, axis=1)
            position = np.where(ordered[:, -1] > ordered[:, -2], position, 0)
            total += position * conv.dilation[0]
        return total.reshape(self.n, self.n) + 1

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> Attention:
        raw = self.attention.detach().cpu().numpy()
        if int(self.validated.min()) >= 0:
            picks = self.validated.cpu().numpy().astype(int)
        else:  # not validated (yet): the semi-binarised potential causes
            picks = np.stack([semi_binarise(row) for row in raw])
        beta = self._weights().cpu().numpy()
        return Attention(beta, self.kernel_profiles(), picks=picks)


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
        self.force_uniform: set[str] = set()

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
            if "beta" in self.force_uniform:
                weight = (~self.mask[None]).float().expand_as(weight) / (n - 1)
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
            if "alpha" in self.force_uniform:
                temporal = _uniform_like(temporal, -1)
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
    """seq2graph (Dang et al. 2018; the benchmark paper's own implementation, Sec. 2.1):

    * encoder: a bidirectional GRU over time of each series (shared across series);
    * dual-purpose RNN: alpha = softmax over time of a score of [encoder output, input];
      the alpha-weighted features run through a GRU over time, tanh at the end, giving one
      summary per series;
    * decoder: per target, beta = softmax over the series of a score of each summary; the
      beta-weighted summaries are fed to a GRU that runs OVER THE SERIES (series index as
      its time axis, the mechanism the paper blames for the first-series bias), tanh at the
      end, then a linear output.

    The GRUs are shared by the targets; the attention scores and outputs are per target.
    Alpha depends on the source series only, so every target sees the same alpha rows.
    """

    def __init__(self, n_series: int, hidden: int) -> None:
        super().__init__()
        e, h = n_series, hidden
        self.n, self.h = n_series, hidden
        self.force_uniform: set[str] = set()
        self.encoder = nn.GRU(1, h, batch_first=True, bidirectional=True)
        self.alpha_w = nn.Linear(2 * h + 1, h)
        self.alpha_v = nn.Linear(h, 1, bias=False)
        self.summary = nn.GRU(2 * h + 1, h, batch_first=True)
        self.beta_w = _param(e, h, h)
        self.beta_v = _param(e, h, 1)
        self.decoder = nn.GRU(h, h, batch_first=True)
        self.out_w = _param(e, h, 1)
        self.out_b = nn.Parameter(torch.zeros(e))

    def _forward(self, x: torch.Tensor):
        batch, window, n = x.shape
        series = x.permute(0, 2, 1).reshape(batch * n, window, 1)
        encoded, _ = self.encoder(series)
        features = torch.cat([encoded, series], -1)  # (B*N, W, 2h+1)
        alpha = torch.softmax(self.alpha_v(torch.tanh(self.alpha_w(features))).squeeze(-1), -1)
        if "alpha" in self.force_uniform:
            alpha = _uniform_like(alpha, -1)
        _, last = self.summary(alpha[..., None] * features)
        summary = torch.tanh(last[-1]).reshape(batch, n, self.h)  # (B, N, h)
        score = torch.einsum("bnk,ekm->benm", summary, self.beta_w).tanh()
        score = torch.einsum("benm,emo->beno", score, self.beta_v).squeeze(-1)
        beta = torch.softmax(score, -1)  # (B, E, N)
        if "beta" in self.force_uniform:
            beta = _uniform_like(beta, -1)
        weighted = beta[..., None] * summary[:, None]  # (B, E, N, h): the series as a sequence
        _, last = self.decoder(weighted.reshape(batch * n, n, self.h))
        decoded = torch.tanh(last[-1]).reshape(batch, n, self.h)  # (B, E, h)
        y = torch.einsum("bek,eko->beo", decoded, self.out_w).squeeze(-1) + self.out_b
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
        return TCDF(n_series, window, levels=TCDF_LEVELS, kernel=4, dilation_c=4)
    if model_id == "darnn":
        return DARNN(n_series, hidden, window)
    if model_id == "seq2graph":
        return Seq2Graph(n_series, hidden)
    raise ValueError(f"unknown model {model_id!r}: choose from {', '.join(MODEL_IDS)}")
