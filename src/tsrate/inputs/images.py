"""Image inputs built from numeric windows: the ViT-num-spec image and a line plot.

Both builders take a batch of windows (``contexts``: windows × n values, NaN = missing)
and return ``uint8`` RGB images shaped (windows × height × width × 3), row 0 at the top.
They are deterministic and vectorised over the batch (no per-window Python loop).

Conventions (paper, section 5.1.1, and our choices where it is silent):

- Missing values (P3): filled by linear interpolation between the neighbouring observed
  values, with the nearest observed value at the edges; a window with no observed value
  becomes flat (all zeros after standardisation). Both images use the filled series.
- Standardisation: per window, (x − mean) / std over the filled values (population std;
  a constant window gets std 1).
- ViT-num-spec image, 128 × 128: rows 0–15 are the numeric stripe (the standardised series
  resampled to 128 columns by linear interpolation, clipped to ±3 std and colour-mapped;
  every stripe row is the same), rows 16–127 the spectrogram.
- Spectrogram: |CWT| of the standardised series with PyWavelets' complex Morlet wavelet
  ``cmor2.0-0.7957747``: psi(t) = (π·B)^-½ · exp(−t²/B) · exp(i·2π·C·t) with bandwidth
  B = 2 and centre C = ω0 / 2π for ω0 = 5, i.e. exp(−t²/2)·exp(i·5t), the paper's Morlet
  (eq. 7) up to a constant factor. 112 scales, geometrically spaced from a period of 2
  samples (row 16, the highest frequency, at the top) to a period of n samples (row 127).
  The transform is computed in the input's own time axis (n samples), then its magnitude
  is resampled to 128 columns by linear interpolation and divided by the image's largest
  magnitude (so colours span 0–1 per image).
- Colours: a fixed viridis-like colormap (9 anchors, linear interpolation), no matplotlib.
- Line plot (for vision-language systems), 128 × 128 by default: white background, the
  filled series min–max scaled into the plot area (4-pixel margin; higher values at the
  top; a flat window sits in the middle), drawn as a connected 3-pixel-thick line
  (kept inside the plot area).
"""

from __future__ import annotations

import functools
import struct
import zlib
from pathlib import Path

import numpy as np

from tsrate import TsrateError

IMAGE_SIZE = 128
STRIPE_ROWS = 16
SPECTROGRAM_ROWS = IMAGE_SIZE - STRIPE_ROWS
#: Morlet central frequency of the paper (eq. 7) and PyWavelets' parameters for it.
OMEGA0 = 5.0
CMOR_BANDWIDTH = 2.0
CMOR_CENTER = OMEGA0 / (2 * np.pi)
WAVELET_NAME = f"cmor{CMOR_BANDWIDTH}-{CMOR_CENTER:.7f}"
#: Standardised values beyond ±STRIPE_CLIP std share the end colours of the numeric stripe.
STRIPE_CLIP = 3.0

LINE_PLOT_MARGIN = 4
LINE_COLOUR = np.array([31, 60, 140], dtype=np.uint8)
BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)

# viridis at 0, 1/8, ..., 1 (sRGB, 0–255)
_COLORMAP_ANCHORS = np.array(
    [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 145, 140],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ],
    dtype=float,
)


def _colormap_table(levels: int = 256) -> np.ndarray:
    """(levels × 3) uint8 lookup table of the viridis-like colormap."""
    anchor_positions = np.linspace(0.0, 1.0, len(_COLORMAP_ANCHORS))
    positions = np.linspace(0.0, 1.0, levels)
    table = np.stack(
        [np.interp(positions, anchor_positions, _COLORMAP_ANCHORS[:, c]) for c in range(3)],
        axis=1,
    )
    return np.round(table).astype(np.uint8)


COLORMAP = _colormap_table()
#: the colormap's rows as 3-byte items: one gather paints all three channels of a pixel
_COLORMAP_PIXELS = np.ascontiguousarray(COLORMAP).view(np.dtype("V3")).reshape(-1)


def rendering_fingerprint() -> bytes:
    """Bytes naming the drawing constants both image builders use (the colormap's table,
    the image and stripe sizes, the wavelet, the stripe's clip, the line plot's margin and
    colours). A model trained on these images is cached under a key that holds them, so
    a changed colormap or layout trains a new model instead of reusing one that learnt
    other pictures (a change to the drawing code itself bumps the models' versions)."""
    constants = (
        f"{IMAGE_SIZE}|{STRIPE_ROWS}|{WAVELET_NAME}|{STRIPE_CLIP!r}|{LINE_PLOT_MARGIN}|"
    ).encode()
    return b"".join(
        (
            constants,
            np.ascontiguousarray(COLORMAP, dtype=np.uint8).tobytes(),
            np.asarray(LINE_COLOUR, dtype=np.uint8).tobytes(),
            np.asarray(BACKGROUND, dtype=np.uint8).tobytes(),
        )
    )


def colour_map(values: np.ndarray) -> np.ndarray:
    """Map values in [0, 1] (clipped; NaN → 0) to RGB uint8 with the fixed colormap."""
    return COLORMAP[_quantise(np.asarray(values, dtype=float))]


def _as_contexts(contexts: np.ndarray) -> np.ndarray:
    array = np.asarray(contexts, dtype=float)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2:
        raise TsrateError(f"expected a (windows × values) array, got shape {array.shape}")
    if array.shape[1] < 2:
        raise TsrateError(f"a window needs at least 2 values to draw, got {array.shape[1]}")
    return array


def fill_missing(contexts: np.ndarray) -> np.ndarray:
    """Linear interpolation over NaN (nearest observed value at the edges; all-NaN → 0)."""
    values = _as_contexts(contexts)
    observed = np.isfinite(values)
    if observed.all():
        return values.copy()
    n_windows, length = values.shape
    positions = np.arange(length)
    # index of the previous / next observed value for every position (-1 / length if none)
    previous = np.where(observed, positions, -1)
    previous = np.maximum.accumulate(previous, axis=1)
    following = np.where(observed, positions, length)
    following = np.minimum.accumulate(following[:, ::-1], axis=1)[:, ::-1]
    has_previous = previous >= 0
    has_following = following < length
    rows = np.arange(n_windows)[:, None]
    safe_values = np.where(observed, values, 0.0)
    left = safe_values[rows, np.clip(previous, 0, length - 1)]
    right = safe_values[rows, np.clip(following, 0, length - 1)]
    span = np.maximum(following - previous, 1)
    weight = (positions - previous) / span
    both = has_previous & has_following
    filled = np.where(both, left + weight * (right - left), 0.0)
    filled = np.where(has_previous & ~has_following, left, filled)
    filled = np.where(~has_previous & has_following, right, filled)
    return np.where(observed, values, filled)


def standardise(contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(standardised filled windows, mean, std) — std 1 for a constant window."""
    filled = fill_missing(contexts)
    mean = filled.mean(axis=1)
    std = filled.std(axis=1)
    std = np.where(std > 1e-12, std, 1.0)
    return (filled - mean[:, None]) / std[:, None], mean, std


def resample_matrix(length: int, columns: int) -> np.ndarray:
    """(length × columns) linear-interpolation matrix from ``length`` samples to ``columns``."""
    targets = np.linspace(0.0, length - 1, columns)
    lower = np.clip(np.floor(targets).astype(int), 0, length - 2)
    weight = targets - lower
    matrix = np.zeros((length, columns))
    matrix[lower, np.arange(columns)] = 1.0 - weight
    matrix[lower + 1, np.arange(columns)] += weight
    return matrix


def spectrogram_scales(length: int, rows: int = SPECTROGRAM_ROWS) -> np.ndarray:
    """CWT scales, smallest (highest frequency) first: periods from 2 to ``length`` samples."""
    return np.geomspace(2.0 * CMOR_CENTER, max(length, 3) * CMOR_CENTER, rows)


@functools.lru_cache(maxsize=8)
def _cwt_kernel(length: int, rows: int) -> np.ndarray:
    """(length × 2·rows·length) float32 matrix: real then imaginary parts of ``pywt.cwt``.

    The CWT is linear in its input, so the transform of every unit impulse gives a matrix
    whose product with a batch of windows reproduces ``pywt.cwt(..., method='conv')``
    (to float32 rounding) at the cost of one matrix product per batch.
    """
    import pywt

    impulses = np.eye(length)
    coefficients, _ = pywt.cwt(
        impulses, spectrogram_scales(length, rows), WAVELET_NAME, method="conv", axis=-1
    )
    # coefficients: (rows, impulse position k, time t) → (k, rows·t)
    kernel = np.transpose(coefficients, (1, 0, 2)).reshape(length, rows * length)
    return np.ascontiguousarray(np.concatenate([kernel.real, kernel.imag], axis=1), np.float32)


def cwt_magnitudes(standardised: np.ndarray, rows: int = SPECTROGRAM_ROWS) -> np.ndarray:
    """|CWT| (windows × rows × n, float32) of finite windows; row 0 = highest frequency."""
    n_windows, length = standardised.shape
    coefficients = np.asarray(standardised, dtype=np.float32) @ _cwt_kernel(length, rows)
    coefficients = coefficients.reshape(n_windows, 2, rows, length)
    return np.hypot(coefficients[:, 0], coefficients[:, 1])


def _quantise(values: np.ndarray, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """Colormap indices (uint8) of ``values × scale`` clipped to [0, 1] (in place on one
    temporary: the same float arithmetic as out-of-place, without four array copies)."""
    scaled = values * scale
    np.nan_to_num(scaled, copy=False, nan=0.0)
    np.clip(scaled, 0.0, 1.0, out=scaled)
    scaled *= len(COLORMAP) - 1
    scaled += 0.5
    return scaled.astype(np.uint8)


def _paint(out: np.ndarray, indices: np.ndarray) -> None:
    """Write ``COLORMAP[indices]`` into ``out`` (…× 3, uint8, pixels contiguous) with one
    gather of 3-byte pixels (no temporary; about 2× faster than channel by channel)."""
    if out.strides[-1] == 1 and out.strides[-2] == 3:
        np.take(_COLORMAP_PIXELS, indices, out=out.view(np.dtype("V3"))[..., 0])
        return
    for channel in range(3):
        out[..., channel] = COLORMAP[:, channel][indices]


def vit_num_spec_images(contexts: np.ndarray, size: int = IMAGE_SIZE) -> np.ndarray:
    """The ViT-num-spec images (windows × 128 × 128 × 3, uint8) of a batch of windows."""
    if size != IMAGE_SIZE:
        raise TsrateError(f"the ViT-num-spec image is {IMAGE_SIZE} × {IMAGE_SIZE}, got {size}")
    standardised, _, _ = standardise(contexts)
    n_windows, length = standardised.shape
    to_columns = resample_matrix(length, IMAGE_SIZE).astype(np.float32)
    stripe = (standardised.astype(np.float32) @ to_columns + STRIPE_CLIP) / (2 * STRIPE_CLIP)
    magnitudes = cwt_magnitudes(standardised).reshape(-1, length) @ to_columns
    magnitudes = magnitudes.reshape(n_windows, SPECTROGRAM_ROWS, IMAGE_SIZE)
    peak = magnitudes.reshape(n_windows, -1).max(axis=1)
    scale = (1.0 / np.where(peak > 1e-12, peak, 1.0)).astype(np.float32)[:, None, None]
    images = np.empty((n_windows, IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    _paint(
        images[:, :STRIPE_ROWS],
        np.broadcast_to(_quantise(stripe)[:, None, :], (n_windows, STRIPE_ROWS, IMAGE_SIZE)),
    )
    _paint(images[:, STRIPE_ROWS:], _quantise(magnitudes, scale))
    return images


def line_plot_images(
    contexts: np.ndarray,
    height: int = IMAGE_SIZE,
    width: int = IMAGE_SIZE,
    y_limits: tuple[float, float] | None = None,
) -> np.ndarray:
    """Line plots (windows × height × width × 3, uint8) of a batch of windows. Each window
    is drawn on its own vertical scale (its lowest value at the bottom, its highest at the
    top) unless ``y_limits`` (low, high) gives every window the same one, so that windows
    compared with each other keep their levels (values outside it are drawn at the edge)."""
    margin = LINE_PLOT_MARGIN
    if height < 2 * margin + 4 or width < 2 * margin + 4:
        raise TsrateError(f"a line plot needs at least {2 * margin + 4} pixels a side")
    filled = fill_missing(contexts)
    n_windows, length = filled.shape
    plot_width = width - 2 * margin
    columns = filled @ resample_matrix(length, plot_width)
    low = columns.min(axis=1, keepdims=True)
    span = columns.max(axis=1, keepdims=True) - low
    if y_limits is not None:
        bottom_value, top_value = (float(v) for v in y_limits)
        if not (np.isfinite(bottom_value) and np.isfinite(top_value)) or top_value < bottom_value:
            raise TsrateError(f"y_limits must be finite (low, high) with low <= high: {y_limits}")
        low = np.full_like(low, bottom_value)
        span = np.full_like(span, top_value - bottom_value)
    relative = np.where(span > 1e-12, (columns - low) / np.where(span > 1e-12, span, 1.0), 0.5)
    if y_limits is not None:
        relative = np.clip(relative, 0.0, 1.0)
    plot_height = height - 2 * margin
    y = np.round(margin + (1.0 - relative) * (plot_height - 1)).astype(int)  # pixel rows
    # connect consecutive columns: column c covers every row between y[c] and y[c+1]
    following = np.concatenate([y[:, 1:], y[:, -1:]], axis=1)
    top = np.maximum(np.minimum(y, following) - 1, margin)
    bottom = np.minimum(np.maximum(y, following) + 1, height - 1 - margin)
    rows = np.arange(height)[None, :, None]
    on_line = (rows >= top[:, None, :]) & (rows <= bottom[:, None, :])  # (windows, height, plot_w)
    images = np.empty((n_windows, height, width, 3), dtype=np.uint8)
    images[:] = BACKGROUND
    plot = images[:, :, margin : margin + plot_width]
    plot[on_line] = LINE_COLOUR
    return images


def write_png(path: str | Path, image: np.ndarray) -> Path:
    """Write one (H × W × 3) uint8 RGB image as a PNG (zlib only, no imaging library), e.g. to
    look at what a system received: ``write_png("p5.png", system.model_images(ctx, "P5")[0])``."""
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise TsrateError(
            f"write_png needs one uint8 (H × W × 3) image, got {array.dtype} {array.shape}"
        )
    height, width, _ = array.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), array.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    path = Path(path)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )
    return path
