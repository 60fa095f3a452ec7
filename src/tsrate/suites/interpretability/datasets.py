"""Datasets 1-10 of the interpretability benchmark (Barić et al. 2021), with ground truth.

Every generator returns a :class:`Dataset`: ``values`` (length x N, float64) and ``edges``,
the true causal structure as ``(target, source, lag, weight)`` tuples ("series ``source`` at
lag ``lag`` drives series ``target``"; lag 1 = the previous step). ``weight`` is the absolute
coefficient normalised so that each target's weights sum to 1; the interaction matrix
(:meth:`Dataset.interaction_matrix`) sums it over lags.

Conventions shared by datasets 1-8 (the paper's Section 3.1 and its published generator):

* the first ``INIT_STEPS`` = 10 values of every series are drawn from N(0, 1);
* noise: at every step and for every series, independently, with probability ``f`` a
  value from N(mu, sigma) is added (defaults f = 0.3, mu = 0, sigma = 0.1). In datasets 2-6
  the noise is added *inside* the weighted sum and so divided by the coefficient sum, like
  the lags (dataset 2: X_t = (X_{t-3} + X_{t-7} + eps)/2, so eps/2 has std sigma/2);
  datasets 1, 7, 8 and 10 add it outside;
* ``burn_in`` steps (default 1000, as the paper) are generated first and discarded, then
  ``length`` (default 20,000) steps are returned;
* one ``numpy.random.Generator`` seeded with ``seed`` draws everything, in a fixed order,
  so a (dataset, parameters, seed) triple always gives the same series.

Choices the paper leaves open (ours): the noise is drawn per (series, step) in every
dataset (the published code shares one draw per step in datasets 7 and 8); dataset 7
follows the published generator where its LaTeX and code disagree (X3 uses X2 and X4);
datasets 5 and 6 with N > 5 series give series 5.. random lag sets (1-3 lags from 2..9,
integer coefficients 1..10, drawn from ``seed``); dataset 9 updates the lattice with a
checkerboard Metropolis sweep so each step depends only on the previous one (see
:func:`dataset9`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

INIT_STEPS = 10
#: Critical temperature of the 2-D square-lattice Ising model, 2 / ln(1 + sqrt 2).
ISING_CRITICAL_TEMPERATURE = 2.0 / math.log(1.0 + math.sqrt(2.0))

Edge = tuple[int, int, int, float]


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A generated multivariate series and its true causal structure.

    ``values``: (length, n_series). ``edges``: (target, source, lag, weight) with weights of
    one target summing to 1 (no edges for dataset 1). ``params``: what generated it.
    """

    dataset_id: int
    values: np.ndarray
    edges: tuple[Edge, ...]
    params: dict

    @property
    def n_series(self) -> int:
        return int(self.values.shape[1])

    def interaction_matrix(self) -> np.ndarray:
        """(target x source) true influence: edge weights summed over lags (rows sum to 1 or 0)."""
        matrix = np.zeros((self.n_series, self.n_series))
        for target, source, _lag, weight in self.edges:
            matrix[target, source] += weight
        return matrix

    def lag_tensor(self, window: int) -> np.ndarray:
        """(target x source x lag 1..window) true influence; lags beyond ``window`` dropped."""
        tensor = np.zeros((self.n_series, self.n_series, window))
        for target, source, lag, weight in self.edges:
            if 1 <= lag <= window:
                tensor[target, source, lag - 1] += weight
        return tensor


def _normalised_edges(target: int, terms: Sequence[tuple[int, int, float]]) -> list[Edge]:
    """(source, lag, coefficient) terms of one target -> edges with |coef| weights summing to 1."""
    total = sum(abs(c) for _, _, c in terms)
    return [(target, s, lag, abs(c) / total) for s, lag, c in terms]


def _check(length: int, burn_in: int, f: float, sigma: float, n_series: int | None = None) -> None:
    if length < 1:
        raise ValueError(f"length must be at least 1 (got {length})")
    if burn_in < 0:
        raise ValueError(f"burn_in must be >= 0 (got {burn_in})")
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"noise frequency f must lie in [0, 1] (got {f})")
    if sigma < 0:
        raise ValueError(f"noise scale sigma must be >= 0 (got {sigma})")
    if n_series is not None and n_series < 1:
        raise ValueError(f"n_series must be at least 1 (got {n_series})")


def _noise(rng: np.random.Generator, shape: tuple[int, ...], f: float, mu: float, sigma: float):
    """Noise matrix: N(mu, sigma) where a Bernoulli(f) fires, else exactly 0."""
    fires = rng.random(shape) < f
    return np.where(fires, rng.normal(mu, sigma, shape), 0.0)


def _lagged_system(
    dataset_id: int,
    terms: Sequence[Sequence[tuple[int, int, float]]],
    length: int,
    burn_in: int,
    f: float,
    mu: float,
    sigma: float,
    seed: int,
    activation: Callable[[np.ndarray], np.ndarray] | None,
    params: dict,
) -> Dataset:
    """X_{i,t} = act((sum_k c_k X_{s_k, t-l_k} + eps_{i,t}) / sum_k |c_k|) for each target i.

    ``terms[i]`` lists (source, lag, coefficient) of target i; noise is inside the sum.
    """
    n = len(terms)
    total = length + burn_in
    rng = np.random.default_rng(seed)
    x = np.zeros((max(total, INIT_STEPS), n))
    x[:INIT_STEPS] = rng.normal(0.0, 1.0, (INIT_STEPS, n))
    eps = _noise(rng, x.shape, f, mu, sigma)
    sums = [sum(abs(c) for _, _, c in row) for row in terms]
    for t in range(INIT_STEPS, x.shape[0]):
        for i, row in enumerate(terms):
            value = sum(c * x[t - lag, s] for s, lag, c in row)
            value = (value + eps[t, i]) / sums[i]
            x[t, i] = activation(value) if activation is not None else value
    edges = [e for i, row in enumerate(terms) for e in _normalised_edges(i, row)]
    return Dataset(dataset_id, x[x.shape[0] - length :].copy(), tuple(edges), params)


def _params(**kwargs) -> dict:
    return {k: v for k, v in kwargs.items() if v is not None}


def dataset1(
    length: int = 20_000,
    n_series: int = 5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 1, constant series: X_{n,t} = C_n + eps_{n,t}, C_n ~ N(0, 1). No edges."""
    _check(length, burn_in, f, sigma, n_series)
    rng = np.random.default_rng(seed)
    level = rng.normal(0.0, 1.0, n_series)
    values = level[None, :] + _noise(rng, (length + burn_in, n_series), f, mu, sigma)
    params = _params(length=length, n_series=n_series, f=f, mu=mu, sigma=sigma, seed=seed)
    return Dataset(1, values[burn_in:].copy(), (), params)


#: The benchmark's reference code, sensitivity studies of f and sigma: dataset 2 with these
#: per-series (lag, coefficient) sets instead of lags 3 and 7.
REFERENCE_SENSITIVITY_LAGS = (
    ((6, 1.0), (9, 1.0)),
    ((7, 1.0),),
    ((6, 1.0), (7, 2.0), (8, 1.0)),
    ((8, 8.0), (9, 1.0)),
    ((6, 3.0), (9, 2.0), (8, 1.0)),
)

LagSets = Sequence[Sequence[tuple[int, float]]]


def random_lag_sets(n_series: int, seed: int) -> tuple[tuple[tuple[int, float], ...], ...]:
    """The reference code's N study: per series 1-3 distinct lags drawn from 5..9, each with
    an integer coefficient 1..10 (drawn from ``seed``; the reference draws them with Python's
    ``random`` seeded 2293, so the exact sets differ)."""
    rng = np.random.default_rng([seed, 9])
    out = []
    for _ in range(n_series):
        lags = rng.choice(np.arange(5, 10), size=int(rng.integers(1, 4)), replace=False)
        out.append(tuple((int(lag), float(rng.integers(1, 11))) for lag in lags))
    return tuple(out)


def _check_lag_sets(lag_sets: LagSets, n_series: int) -> None:
    if len(lag_sets) != n_series:
        raise ValueError(f"lag_sets has {len(lag_sets)} rows for {n_series} series")
    for row in lag_sets:
        if not row or any(int(lag) < 1 or float(c) == 0 for lag, c in row):
            raise ValueError("every lag set needs (lag >= 1, coefficient != 0) terms")


def dataset2(
    length: int = 20_000,
    n_series: int = 5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
    lag_sets: LagSets | None = None,
) -> Dataset:
    """Dataset 2, N independent linear AR series: X_{n,t} = (X_{n,t-3} + X_{n,t-7} + eps)/2.

    Edges n <- n at lags 3 and 7, weight 1/2 each. The residual X_t - X_{t-3}/2 - X_{t-7}/2
    is exactly 0 where no noise fired (probability 1 - f) and eps/2 elsewhere.
    ``lag_sets`` (one row of (lag, coefficient) per series): X_{n,t} = (sum c X_{n,t-lag} +
    eps) / sum |c| instead (the reference's sensitivity studies).
    """
    _check(length, burn_in, f, sigma, n_series)
    if lag_sets is None:
        terms = [[(i, 3, 1.0), (i, 7, 1.0)] for i in range(n_series)]
    else:
        _check_lag_sets(lag_sets, n_series)
        terms = [[(i, int(lag), float(c)) for lag, c in row] for i, row in enumerate(lag_sets)]
    params = _params(
        length=length,
        n_series=n_series,
        f=f,
        mu=mu,
        sigma=sigma,
        seed=seed,
        lag_sets=None if lag_sets is None else [[list(t) for t in row] for row in lag_sets],
    )
    return _lagged_system(2, terms, length, burn_in, f, mu, sigma, seed, None, params)


def dataset3(
    length: int = 20_000,
    n_series: int = 5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 3, N independent nonlinear AR series:
    X_{n,t} = tanh((5 X_{n,t-3} + X_{n,t-7} + X_{n,t-9} + eps) / 7). Edges weights 5/7, 1/7, 1/7.
    """
    _check(length, burn_in, f, sigma, n_series)
    terms = [[(i, 3, 5.0), (i, 7, 1.0), (i, 9, 1.0)] for i in range(n_series)]
    params = _params(length=length, n_series=n_series, f=f, mu=mu, sigma=sigma, seed=seed)
    return _lagged_system(3, terms, length, burn_in, f, mu, sigma, seed, np.tanh, params)


def dataset4(
    length: int = 20_000,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 4, two interdependent series without autoregression:
    X_{1-n,t} = (2 X_{n,t-2} + X_{n,t-5} + 2 X_{n,t-9} + eps) / 5 for n = 0, 1.
    Edges 0 <- 1 and 1 <- 0 at lags 2, 5, 9 with weights 2/5, 1/5, 2/5; none on the diagonal.
    """
    _check(length, burn_in, f, sigma)
    terms = [[(1 - i, 2, 2.0), (1 - i, 5, 1.0), (1 - i, 9, 2.0)] for i in range(2)]
    params = _params(length=length, n_series=2, f=f, mu=mu, sigma=sigma, seed=seed)
    return _lagged_system(4, terms, length, burn_in, f, mu, sigma, seed, None, params)


#: (lag, coefficient) of series 0..4 of datasets 5 and 6; every term reads series 0.
DRIVEN_TERMS_5 = (
    ((3, 1.0), (4, 1.0)),
    ((9, 1.0),),
    ((2, 1.0), (7, 1.0)),
    ((8, 8.0), (3, 1.0), (4, 1.0)),
    ((2, 3.0), (5, 2.0), (8, 4.0)),
)


def _driven_terms(n_series: int, seed: int, first: Sequence[tuple[int, float]]):
    rng = np.random.default_rng([seed, 5])
    rows = [list(first), *[list(r) for r in DRIVEN_TERMS_5[1:n_series]]]
    for _ in range(len(rows), n_series):
        lags = rng.choice(np.arange(2, 10), size=int(rng.integers(1, 4)), replace=False)
        rows.append([(int(lag), float(rng.integers(1, 11))) for lag in sorted(lags)])
    return [[(0, lag, c) for lag, c in row] for row in rows[:n_series]]


def dataset5(
    length: int = 20_000,
    n_series: int = 5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
    lag_sets: LagSets | None = None,
) -> Dataset:
    """Dataset 5, one linear AR driver and series computed from it (all terms read series 0):
    X0 = (X0_{t-3} + X0_{t-4} + eps)/2;  X1 = X0_{t-9} + eps;  X2 = (X0_{t-2} + X0_{t-7} + eps)/2;
    X3 = (8 X0_{t-8} + X0_{t-3} + X0_{t-4} + eps)/10;  X4 = (3 X0_{t-2} + 2 X0_{t-5} + 4 X0_{t-8} + eps)/9.
    With ``n_series`` < 5 the first rows are used; > 5 adds seeded random rows (module doc).
    ``lag_sets`` (one row of (lag, coefficient) per series, all reading series 0; row 0 is
    the driver's own) replaces these rows (the reference's N study).
    """
    _check(length, burn_in, f, sigma, n_series)
    if lag_sets is None:
        terms = _driven_terms(n_series, seed, DRIVEN_TERMS_5[0])
    else:
        _check_lag_sets(lag_sets, n_series)
        terms = [[(0, int(lag), float(c)) for lag, c in row] for row in lag_sets]
    params = _params(
        length=length,
        n_series=n_series,
        f=f,
        mu=mu,
        sigma=sigma,
        seed=seed,
        lag_sets=None if lag_sets is None else [[list(t) for t in row] for row in lag_sets],
    )
    return _lagged_system(5, terms, length, burn_in, f, mu, sigma, seed, None, params)


def dataset6(
    length: int = 20_000,
    n_series: int = 5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 6, dataset 5 made nonlinear: every series is tanh of its weighted sum, and the
    driver is X0 = tanh(X0_{t-3} + eps) (the published generator's single lag)."""
    _check(length, burn_in, f, sigma, n_series)
    terms = _driven_terms(n_series, seed, ((3, 1.0),))
    params = _params(length=length, n_series=n_series, f=f, mu=mu, sigma=sigma, seed=seed)
    return _lagged_system(6, terms, length, burn_in, f, mu, sigma, seed, np.tanh, params)


def dataset7(
    length: int = 20_000,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 7, a custom five-series VAR (noise eps added outside the sums):
    X0 = (X0_{t-1} + 3 X0_{t-5})/4;  X1 = 1 - X0_{t-2};  X2 = X3_{t-4} + X1_{t-1};
    X3 = 1 - (2 X2_{t-4} + 5 X4_{t-1})/7;  X4 = (1.2 X4_{t-4} + X1_{t-1})/2.2.
    Edge weights are the normalised |coefficients| of each row.
    """
    _check(length, burn_in, f, sigma)
    rng = np.random.default_rng(seed)
    total = max(length + burn_in, INIT_STEPS)
    x = np.zeros((total, 5))
    x[:INIT_STEPS] = rng.normal(0.0, 1.0, (INIT_STEPS, 5))
    eps = _noise(rng, x.shape, f, mu, sigma)
    for t in range(INIT_STEPS, total):
        x[t, 0] = (x[t - 1, 0] + 3 * x[t - 5, 0]) / 4 + eps[t, 0]
        x[t, 1] = 1 - x[t - 2, 0] + eps[t, 1]
        x[t, 2] = x[t - 4, 3] + x[t - 1, 1] + eps[t, 2]
        x[t, 3] = 1 - (2 * x[t - 4, 2] + 5 * x[t - 1, 4]) / 7 + eps[t, 3]
        x[t, 4] = (1.2 * x[t - 4, 4] + x[t - 1, 1]) / 2.2 + eps[t, 4]
    rows = [
        [(0, 1, 1.0), (0, 5, 3.0)],
        [(0, 2, -1.0)],
        [(3, 4, 1.0), (1, 1, 1.0)],
        [(2, 4, -2.0), (4, 1, -5.0)],
        [(4, 4, 1.2), (1, 1, 1.0)],
    ]
    edges = [e for i, row in enumerate(rows) for e in _normalised_edges(i, row)]
    params = _params(length=length, n_series=5, f=f, mu=mu, sigma=sigma, seed=seed)
    return Dataset(7, x[total - length :].copy(), tuple(edges), params)


def dataset8(
    length: int = 20_000,
    threshold: float = 0.5,
    f: float = 0.3,
    mu: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 8, switching series; the rule is chosen by X0_{t-5} > ``threshold`` (0.5):
    always X0 = (X0_{t-1} + X0_{t-3})/2 and X3 = (X3_{t-1} + X3_{t-4})/2;
    if X0_{t-5} > 0.5: X1 = X0_{t-5}, X2 = X0_{t-4}; else X1 = X3_{t-2}, X2 = X3_{t-4};
    plus eps outside. Ground truth: X1 and X2 list both regimes' edges, each weighted by the
    share of returned steps in that regime, and X0 at lag 5 (the switch) for X2 with the
    regime-A weight folded in (X1's regime-A edge is X0 at lag 5 already).
    """
    _check(length, burn_in, f, sigma)
    rng = np.random.default_rng(seed)
    total = max(length + burn_in, INIT_STEPS)
    x = np.zeros((total, 4))
    x[:INIT_STEPS] = rng.normal(0.0, 1.0, (INIT_STEPS, 4))
    eps = _noise(rng, x.shape, f, mu, sigma)
    regime_a = np.zeros(total, dtype=bool)
    for t in range(INIT_STEPS, total):
        x[t, 0] = (x[t - 1, 0] + x[t - 3, 0]) / 2 + eps[t, 0]
        x[t, 3] = (x[t - 1, 3] + x[t - 4, 3]) / 2 + eps[t, 3]
        if x[t - 5, 0] > threshold:
            regime_a[t] = True
            x[t, 1] = x[t - 5, 0] + eps[t, 1]
            x[t, 2] = x[t - 4, 0] + eps[t, 2]
        else:
            x[t, 1] = x[t - 2, 3] + eps[t, 1]
            x[t, 2] = x[t - 4, 3] + eps[t, 2]
    # Share over ALL returned rows: with burn_in < INIT_STEPS the returned initial N(0, 1)
    # rows follow neither rule and count against regime A (so toward B's weight 1 - share).
    share_a = float(regime_a[total - length :].mean())
    edges: list[Edge] = [(0, 0, 1, 0.5), (0, 0, 3, 0.5), (3, 3, 1, 0.5), (3, 3, 4, 0.5)]
    edges += _normalised_edges(
        1, [(0, 5, share_a), (3, 2, 1 - share_a)] if share_a < 1 else [(0, 5, 1.0)]
    )
    x2 = [(0, 4, share_a / 2), (0, 5, share_a / 2), (3, 4, 1 - share_a)]
    edges += _normalised_edges(2, [term for term in x2 if term[2] > 0])
    edges = [e for e in edges if e[3] > 0]
    params = _params(
        length=length, n_series=4, threshold=threshold, f=f, mu=mu, sigma=sigma, seed=seed
    )
    params["share_regime_a"] = share_a
    return Dataset(8, x[total - length :].copy(), tuple(edges), params)


# exp(-dE / T) overflows to inf for a large energy drop at a tiny T: accepted, as it should be
@np.errstate(over="ignore")
def dataset9(
    length: int = 20_000,
    temperature: float = ISING_CRITICAL_TEMPERATURE,
    side: int = 10,
    burn_in: int = 1000,
    seed: int = 0,
    update: str = "checkerboard",
) -> Dataset:
    """Dataset 9, the 2-D Ising model (J = 1, no field) on a ``side`` x ``side`` periodic
    lattice, sampled by Metropolis at ``temperature`` (paper: 2, T_c = 2.269, 2.75).

    Spins start up or down with probability 1/2. One time step is one checkerboard half-sweep:
    at even steps every "black" site (i + j even), at odd steps every "white" site, proposes a
    flip accepted with probability min(1, exp(-dE / T)), dE = 2 s_i sum(neighbours). The two
    sublattices do not touch, so step t depends only on step t-1 (our choice; the paper does
    not say how sweeps map to steps). Series = sites in row-major order, values 0 (down) and
    1 (up) as in the paper. Ground truth: each site is driven at lag 1 by itself and its four
    neighbours, weight 1/5 each. No extra noise (f = 0).

    ``update="random_site"``: the benchmark's reference time step instead -- one step is
    side^2 single-site Metropolis updates at uniformly drawn sites (a site may be updated
    several times or not at all; later updates see earlier ones within the step), so a step
    can carry influence beyond the four neighbours; the declared truth stays the same.
    """
    _check(length, burn_in, 0.0, 0.0)
    if side < 3:
        raise ValueError(f"the lattice side must be at least 3 (got {side})")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive (got {temperature})")
    if update not in ("checkerboard", "random_site"):
        raise ValueError(f"update must be checkerboard or random_site (got {update!r})")
    rng = np.random.default_rng(seed)
    spins = np.where(rng.random((side, side)) < 0.5, 1, -1).astype(np.int8)
    rows, cols = np.indices((side, side))
    black = (rows + cols) % 2 == 0
    out = np.empty((length, side * side), dtype=np.float64)
    total = length + burn_in
    if update == "random_site":
        _random_site_steps(spins, temperature, total, burn_in, rng, out)
    for t in range(total if update == "checkerboard" else 0):
        neighbours = (
            np.roll(spins, 1, 0)
            + np.roll(spins, -1, 0)
            + np.roll(spins, 1, 1)
            + np.roll(spins, -1, 1)
        )
        delta = 2.0 * spins * neighbours
        accept = rng.random((side, side)) < np.exp(-delta / temperature)
        sublattice = black if t % 2 == 0 else ~black
        spins = np.where(sublattice & accept, -spins, spins).astype(np.int8)
        if t >= burn_in:
            out[t - burn_in] = (spins.ravel() + 1) / 2
    edges: list[Edge] = []
    for r in range(side):
        for c in range(side):
            target = r * side + c
            sources = [
                target,
                ((r - 1) % side) * side + c,
                ((r + 1) % side) * side + c,
                r * side + (c - 1) % side,
                r * side + (c + 1) % side,
            ]
            edges += [(target, s, 1, 1.0 / len(sources)) for s in sources]
    params = _params(
        length=length, n_series=side * side, temperature=temperature, side=side, seed=seed
    )
    if update != "checkerboard":
        params["update"] = update
    return Dataset(9, out, tuple(edges), params)


def _random_site_steps(spins, temperature, total, burn_in, rng, out) -> None:
    """The reference's Metropolis step: side^2 updates at random sites per time step."""
    side = spins.shape[0]
    grid = spins.astype(int).tolist()
    per_step = side * side
    for t in range(total):
        sites = rng.integers(0, side, size=(per_step, 2)).tolist()
        draws = rng.random(per_step).tolist()
        for (a, b), draw in zip(sites, draws, strict=True):
            s = grid[a][b]
            neighbours = (
                grid[(a + 1) % side][b]
                + grid[(a - 1) % side][b]
                + grid[a][(b + 1) % side]
                + grid[a][(b - 1) % side]
            )
            cost = 2 * s * neighbours
            if cost <= 0 or draw < math.exp(-cost / temperature):
                grid[a][b] = -s
        if t >= burn_in:
            out[t - burn_in] = (np.asarray(grid).ravel() + 1) / 2


def dataset10(
    length: int = 20_000,
    r: float = 3.56996,
    f: float = 0.0,
    sigma: float = 0.1,
    burn_in: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Dataset 10, logistic-map inspired series (r = 3.56996, the onset of chaos, by default):
    X0 = r X0_{t-3} (1 - X0_{t-3});  X1 = r X1_{t-5} (1 - X1_{t-5});  X2 = (X0_{t-3} + X1_{t-5})/2.
    The first 10 values are uniform on (0.0001, 0.9999). No noise by default (the paper);
    with f > 0, N(0, sigma) is added outside. Edges: 0 <- 0 lag 3, 1 <- 1 lag 5,
    2 <- 0 lag 3 and 2 <- 1 lag 5 (1/2 each).
    """
    _check(length, burn_in, f, sigma)
    if not 0 < r <= 4:
        raise ValueError(f"r must lie in (0, 4] (got {r})")
    rng = np.random.default_rng(seed)
    total = max(length + burn_in, INIT_STEPS)
    x = np.zeros((total, 3))
    x[:INIT_STEPS] = rng.uniform(0.0001, 0.9999, (INIT_STEPS, 3))
    eps = _noise(rng, x.shape, f, 0.0, sigma)
    for t in range(INIT_STEPS, total):
        x[t, 0] = r * x[t - 3, 0] * (1 - x[t - 3, 0]) + eps[t, 0]
        x[t, 1] = r * x[t - 5, 1] * (1 - x[t - 5, 1]) + eps[t, 1]
        x[t, 2] = (x[t - 3, 0] + x[t - 5, 1]) / 2 + eps[t, 2]
    edges: tuple[Edge, ...] = ((0, 0, 3, 1.0), (1, 1, 5, 1.0), (2, 0, 3, 0.5), (2, 1, 5, 0.5))
    params = _params(length=length, n_series=3, r=r, f=f, sigma=sigma, seed=seed)
    return Dataset(10, x[total - length :].copy(), edges, params)


GENERATORS: dict[int, Callable[..., Dataset]] = {
    1: dataset1,
    2: dataset2,
    3: dataset3,
    4: dataset4,
    5: dataset5,
    6: dataset6,
    7: dataset7,
    8: dataset8,
    9: dataset9,
    10: dataset10,
}


def generate(dataset_id: int, **params) -> Dataset:
    """Generate dataset ``dataset_id`` (1-10) with keyword parameters of its generator."""
    if dataset_id not in GENERATORS:
        raise ValueError(f"unknown dataset {dataset_id!r}: the benchmark has datasets 1-10")
    return GENERATORS[dataset_id](**params)
