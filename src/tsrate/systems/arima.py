"""ARIMA (the paper's S_a): one statsmodels state-space ARIMA fit per window.

The state-space (Kalman filter) form handles missing inputs (P3) natively. The order is a
study setting (``arima_order`` var, default (1, 1, 1)); the innovation variance is
concentrated out of the likelihood, which fits faster and gives the same optimum.
A window whose optimiser fails falls back to the last observed value and is counted.

Unit: the forecasts do not depend on the currency unit of the prices. Each window is fitted
on a unit-free copy of its context (:func:`unit_free`): divided by its scale, the mean
absolute observed value (:func:`unit_scale`), and rounded to multiples of
2**-:data:`UNIT_FREE_BITS`; the forecasts and the quantiles' standard errors are multiplied
back by the scale. The scale is the mean, not the last value, because P1 can zero the last
value and P3 remove it; a context with no non-zero observed value has scale 1. The model is
equivariant to the unit (its log-likelihood moves by n log c at prices x c, to the last
digit), its optimiser is not: the likelihood's size sets L-BFGS's stopping tolerance, and
rounding in the start values and finite differences differs, so on the likelihood's flat
ridge (below) it stopped elsewhere in another unit (prices x100 moved a window's forecast by up to 2e-4 relative and
changed 3 of 368 ratings). Dividing alone is not enough: ``x * c / (scale * c)`` differs from
``x / scale`` in the last bits, which moved forecasts up to 3e-4; the rounding gives the
same copy, bit for bit, in every unit (the chance that a value lies within rounding of a
grid boundary is a few in a million per value). A forecast step within floating noise of the previous
one (a converged forecast) is set equal to it before scaling back (:func:`settle`), so the
sign of every step's change, which sign accuracy reads, is the same in every unit. Forecasts
at prices x100 and x0.01 are the x1 ones times the factor to 1e-14
(``tests/unit/test_s45_arima_unit_free.py``). The AR and MA
estimates are unit-free, so warm starts carry over between windows of any scale.

Warm starts: consecutive windows of a batch share all but one value (stride 1), so each fit
starts from the previous window's estimates (``start_params``) instead of statsmodels' own
start; the first window, and one after a failed or non-finite fit, starts cold. Measured on
the default study (``benchmarks/bench_arima.py``, BENCHMARKS.md): fewer optimiser steps per
fit, forecasts within the tolerance below of the cold fits' on the tested windows (not on
every window: see the tolerance). ARIMA(1,1,1)'s likelihood has a flat ridge where the AR and MA roots nearly cancel, so L-BFGS stops at slightly different
points from different starts. On the whole default study (3672 windows, 2026-12-07) warm
fits end below the best optimum found (log-likelihood lower by over 0.01) in 280 windows,
cold fits in 134 (243 and 131 when fitted on the raw prices): a warm chain can stay on the
poorer of two optima for a run of windows.

Tolerance (tested on real prices, ``tests/unit/test_arima_warm.py``): per window, the
relative difference max_h |warm_h - cold_h| / |cold_h| has a median below
:data:`WARM_MEDIAN_TOLERANCE` and a maximum below :data:`WARM_MAX_TOLERANCE`.
``ArimaSystem(warm_start=False)`` fits cold (its forecasts are stored apart: the fingerprint
says which).

Quantiles: the fitted model's Gaussian predictive distribution, mean + z_q * standard error
of each step's forecast (statsmodels' ``get_forecast``); a fallback window has none.

Fallbacks (counted in ``fallbacks``): a window whose fit fails (a non-finite forecast, a
singular matrix, a series too short for statsmodels' start values) forecasts its last
observed value; a window with no observed value at all is missing (NaN), as naive's is.
Each last-value window is returned with its reason (``QuantileForecasts.fallbacks``) and
stored in ``raw.forecast_fallbacks``: it is scored as ARIMA's forecast, and the marts say so.
"""

from __future__ import annotations

import warnings

import numpy as np

from tsrate.methods.noise import NOISE
from tsrate.systems.base import (
    QUANTILE_LEVELS,
    Availability,
    ForecastBatch,
    QuantileForecasts,
    WindowFallback,
)

#: warm vs cold fits: the median over windows of the relative forecast difference is below
#: this (measured on the whole default study, 3672 windows: 4e-7; 5e-6 on AAPL P3 alone)
WARM_MEDIAN_TOLERANCE = 0.01
#: ... and every window's below this on the tested windows. Measured on the whole default
#: study: up to 6.9 % in every P0 and P3 cell (another point of the likelihood's flat ridge);
#: in 8 P1 and P2 cells one or two windows differed by 13 % up to 17x, where a zeroed or
#: halved newest value leaves two optima far apart (AAPL P1, its last value zeroed: the
#: cold fit, MA -0.997, forecast 145, the warm one -5, with a log-likelihood lower by 1.4);
#: such windows are now also fitted cold and the better kept (:func:`newest_is_jump`), and
#: no window of the default study is then both over this from the cold fit and worse
#: than it
WARM_MAX_TOLERANCE = 0.10


#: an AR or MA root of modulus below this counts as at the unit circle (|coefficient| > 0.98
#: for ARIMA(1,1,1)): a warm fit there is checked against a cold one and never passed on
BOUNDARY_ROOT = 1.02

#: a window's newest step is a jump (:func:`newest_is_jump`) when its absolute change
#: exceeds this many times the mean absolute change of the window's other steps: a P1 zero
#: (a change of the whole price) or a P2 half (half of it) always, a daily move of a stock
#: (about 1-2 %) only in a crash or a rally of 5-10 %; the cost is one more fit there
JUMP_FACTOR = 5.0

#: the unit-free copy of a context is rounded to multiples of 2**-32 of its mean absolute
#: value (about 2e-10 of it: far below a price's recorded digits)
UNIT_FREE_BITS = 32


def on_boundary(fitted) -> bool:  # noqa: ANN001 - a statsmodels results object
    """Whether a fit's AR or MA polynomial has a root at (or inside) :data:`BOUNDARY_ROOT`."""
    roots = [np.atleast_1d(np.asarray(r, dtype=complex)) for r in (fitted.arroots, fitted.maroots)]
    moduli = np.abs(np.concatenate(roots)) if roots else np.array([])
    moduli = moduli[np.isfinite(moduli)]
    return bool(moduli.size and moduli.min() < BOUNDARY_ROOT)


class ArimaSystem:
    system_id = "arima"

    def __init__(self, order: tuple[int, int, int] = (1, 1, 1), warm_start: bool = True):
        self.order = tuple(int(x) for x in order)
        self.warm_start = warm_start
        self.fallbacks = 0

    def fingerprint(self) -> str:
        import statsmodels

        start = ";start=warm" if self.warm_start else ""
        jumps = f";jumps={JUMP_FACTOR:g}" if self.warm_start else ""
        return f"order={self.order};statsmodels={statsmodels.__version__}{start}{jumps};unit=free"

    def fit_window(self, context: np.ndarray, start: np.ndarray | None):  # noqa: ANN201
        """Fit one window from ``start`` (None: statsmodels' own start); returns the fit and
        the start for the next window. A warm fit whose window's newest value jumps
        (:func:`newest_is_jump`: a P1 zero or a P2 half just entered, or a market jump) is
        refitted cold and the better likelihood kept: such a window's likelihood has two
        optima far apart (the jump read as a level shift, or cancelled by the MA term), and
        the previous window's estimates lead to whichever is nearer, not the better
        (measured on the default study: the window whose last value P1 or P2 changed, in 10
        of 12 ticker x perturbation cells, warm and cold forecasts 8 % to 17x apart, either
        one the better fit). A warm fit that ends at the unit circle (an AR or MA
        root within :data:`BOUNDARY_ROOT`) is refitted cold and the better likelihood kept,
        and no fit at the unit circle is passed on as a start: there the optimiser sticks,
        window after window (measured on MSFT P1, where a zeroed value drives the MA root to
        the boundary: warm fits stayed at MA -0.999 with a log-likelihood 1-6 below the cold
        fits' for every later window)."""
        from statsmodels.tsa.statespace.sarimax import SARIMAX

        model = SARIMAX(context, order=self.order, concentrate_scale=True)
        fitted = model.fit(disp=False, start_params=start)
        if start is not None and (
            on_boundary(fitted) or not np.isfinite(fitted.llf) or newest_is_jump(context)
        ):
            cold = model.fit(disp=False)
            if not np.isfinite(fitted.llf) or cold.llf > fitted.llf:
                fitted = cold
        params = np.asarray(fitted.params, dtype=float)
        usable = self.warm_start and np.all(np.isfinite(params)) and not on_boundary(fitted)
        return fitted, (params if usable else None)

    def warm_up(self) -> None:
        """Import statsmodels' state-space ARIMA and scipy's normal quantiles once per worker
        (about 1.3 s here), apart from the timed forecasts."""
        worker_imports()

    def availability(self) -> Availability:
        try:
            import statsmodels  # noqa: F401
        except ImportError:
            return Availability(False, "statsmodels is not installed")
        return Availability(True, f"statsmodels ARIMA{self.order}")

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        return self.predict_quantiles(batch).point

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        from scipy.stats import norm

        z = norm.ppf(np.asarray(QUANTILE_LEVELS))
        out = np.empty((batch.n_windows, batch.horizon))
        quantiles = np.full((batch.n_windows, batch.horizon, len(z)), np.nan)
        start = None
        fallbacks: list[WindowFallback] = []
        for row, context in enumerate(batch.contexts):
            if np.isnan(context).all():  # nothing to fit: SARIMAX would forecast its prior, 0
                self.fallbacks += 1
                out[row] = np.nan
                continue
            unit_free_context, scale = unit_free(context)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fitted, start = self.fit_window(unit_free_context, start)
                    predicted = fitted.get_forecast(batch.horizon)
                    forecast = scale * settle(np.asarray(predicted.predicted_mean, dtype=float))
                    if not np.all(np.isfinite(forecast)):
                        raise ValueError("non-finite forecast")
                    out[row] = forecast
                    spread = scale * np.sqrt(np.asarray(predicted.var_pred_mean, dtype=float))
                    if np.all(np.isfinite(spread)):
                        quantiles[row] = forecast[:, None] + spread[:, None] * z[None, :]
                except (ValueError, np.linalg.LinAlgError, IndexError) as exc:
                    # IndexError: statsmodels' start values on a series too short to fit
                    start = None
                    self.fallbacks += 1
                    observed = context[~np.isnan(context)]
                    out[row] = observed[-1] if len(observed) else np.nan
                    fallbacks.append(WindowFallback(row, fallback_reason(exc)))
        return QuantileForecasts(out, quantiles, tuple(fallbacks))


def newest_is_jump(context: np.ndarray) -> bool:
    """Whether the window's newest step is a jump: its absolute change exceeds
    :data:`JUMP_FACTOR` times the mean absolute change of the window's other steps (missing
    values skipped; False with fewer than 3 observed values or no other change)."""
    observed = context[np.isfinite(context)]
    if observed.size < 3:
        return False
    steps = np.abs(np.diff(observed))
    typical = float(steps[:-1].mean())
    return bool(typical > 0 and steps[-1] > JUMP_FACTOR * typical)


def unit_scale(context: np.ndarray) -> float:
    """The unit a window is fitted in: the mean absolute observed value of its context (1.0
    when that is 0 or not finite: a context of zeros). Positive and finite for any context
    with a non-zero observed value, whatever P1 zeroed or P3 left missing; the last observed
    value would not do (P1 can zero it)."""
    observed = np.abs(context[np.isfinite(context)])
    scale = float(observed.mean()) if observed.size else 1.0
    return scale if np.isfinite(scale) and scale > 0 else 1.0


def unit_free(context: np.ndarray) -> tuple[np.ndarray, float]:
    """The copy of a context that ARIMA fits, and its scale (:func:`unit_scale`): the
    context divided by its scale and rounded to a multiple of 2**-:data:`UNIT_FREE_BITS`.
    The rounding makes the copy the same bits in every unit: ``x * c / (scale * c)`` differs
    from ``x / scale`` in its last bits, and the optimiser's stopping point on the likelihood's
    flat ridge moves with such bits (measured: forecasts up to 3e-4 apart without it)."""
    scale = unit_scale(context)
    grid = float(2**UNIT_FREE_BITS)
    return np.round(context / scale * grid) / grid, scale


def settle(forecast: np.ndarray) -> np.ndarray:
    """A unit-free forecast whose step changes within floating noise are exactly 0: a step
    within ``NOISE * max(1, |previous step|)`` of the previous one (:mod:`tsrate.methods.noise`)
    takes its value. A converged forecast's last steps differ by a unit in the last place,
    which multiplying back by the scale keeps in one unit and rounds away in another, and
    sign accuracy reads the sign of each step's change (measured: one of 2272 windows at
    prices x0.01, AAPL P1, a step change of 1.8e-16 became 0)."""
    out = np.array(forecast, dtype=float, copy=True)
    for step in range(1, len(out)):
        if abs(out[step] - out[step - 1]) <= NOISE * max(1.0, abs(out[step - 1])):
            out[step] = out[step - 1]
    return out


def fallback_reason(exc: BaseException) -> str:
    """Why a window's fit failed, in one line (stored with the fallback window)."""
    if isinstance(exc, IndexError):
        return "the context is too short for statsmodels' start values"
    if isinstance(exc, np.linalg.LinAlgError):
        return f"singular matrix in the fit ({exc})"
    return f"the fit failed ({exc})"


def worker_imports() -> None:
    """The libraries an ARIMA worker loads (the workers' fork server loads them once:
    :mod:`tsrate.robustness.forecast.workers`)."""
    from scipy.stats import norm  # noqa: F401
    from statsmodels.tsa.statespace.sarimax import SARIMAX  # noqa: F401


def create(study, companies) -> ArimaSystem:  # noqa: ANN001 - registry signature
    return ArimaSystem(study.arima_order)
