"""`tsrate show-input`: the exact image a ViT-num-spec system received for one window.

Real pieces: a temporary DuckDB warehouse with the bundled sample's MRK closes, the CLI, the
registry's system and the tiny line-plot sentiment classifier trained here (for P6). The
PNGs are decoded here with zlib only and compared with images built independently from the
prices.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from tsrate.cli import main
from tsrate.inputs.images import vit_num_spec_images
from tsrate.inputs.perturbations import SENTIMENT_STRIPE_HEIGHT
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.sources import load_skfolio_sp500

pytest.importorskip("torch")
pytest.importorskip("pywt")

STUDY = ["--tickers", "MRK,PFE", "--start", "2021-12-29", "--end", "2022-12-28"]
SYSTEM = "vit_num_spec_covid"
DATE = "2022-06-01"


def decode_png(path) -> np.ndarray:
    """An 8-bit RGB PNG written without row filters (as tsrate.inputs.images.write_png writes) →
    (H, W, 3) uint8; fails on anything else."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks = 8, {}
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = chunks.get(kind, b"") + body
        offset += 12 + length
    width, height, depth, colour, _, _, _ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, colour) == (8, 2)
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert (rows[:, 0] == 0).all()  # filter type "none"
    return rows[:, 1:].reshape(height, width, 3)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("show_input")
    warehouse = folder / "tsrate.duckdb"
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["MRK", "PFE"]), "skfolio")
    env = {
        "TSRATE_WAREHOUSE": str(warehouse),
        "TSRATE_MODEL_DIR": str(folder / "models"),
        "TSRATE_MULTIMODAL_VARS": json.dumps(
            {"vit_size": "tiny", "sentiment_training_walks": 200, "sentiment_epochs": 1}
        ),
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        yield folder


def show(folder, perturbation, *extra, date=DATE, system=SYSTEM, ticker="MRK"):
    output = folder / f"{system}-{ticker}-{date}-{perturbation}.png"
    code = main(
        ["show-input", "--system", system, "--ticker", ticker, "--date", date]
        + ["--perturbation", perturbation, "--output", str(output), *STUDY, *extra]
    )
    return code, output


@pytest.fixture(scope="module")
def images(setup):
    decoded = {}
    for perturbation in ("P0", "P2", "P4", "P5", "P6"):
        code, output = show(setup, perturbation)
        assert code == 0
        decoded[perturbation] = decode_png(output)
    return decoded


def test_p0_is_the_image_of_the_window_ending_on_the_date(images):
    closes = load_skfolio_sp500(["MRK"]).set_index("price_date")["close"]
    closes.index = closes.index.astype(str)
    study_closes = closes.loc["2021-12-29":"2022-12-28"]
    position = list(study_closes.index).index(DATE)
    context = study_closes.to_numpy()[position - 79 : position + 1]
    expected = vit_num_spec_images(context[None, :])[0]
    assert images["P0"].shape == (128, 128, 3)
    np.testing.assert_array_equal(images["P0"], expected)
    assert not np.array_equal(images["P2"], images["P0"])  # P2 halves a value of the numbers


def test_p4_differs_from_p0_only_at_the_centre_pixel(images):
    differs = (images["P4"] != images["P0"]).any(axis=-1)
    assert differs.sum() == 1 and differs[64, 64]
    assert (images["P4"][64, 64] == 0).all()


def test_p5_raises_saturation(images):
    def saturation(image):
        rgb = image.astype(float)
        value = rgb.max(axis=-1)
        return np.where(value > 0, (value - rgb.min(axis=-1)) / np.maximum(value, 1), 0)

    assert not np.array_equal(images["P5"], images["P0"])
    assert saturation(images["P5"]).mean() > saturation(images["P0"]).mean() + 0.1
    # hue-preserving: the brightest channel (HSV value) is unchanged
    np.testing.assert_array_equal(images["P5"].max(axis=-1), images["P0"].max(axis=-1))


def test_p6_draws_the_sentiment_stripe(images):
    top = 128 - SENTIMENT_STRIPE_HEIGHT
    np.testing.assert_array_equal(images["P6"][:top], images["P0"][:top])
    stripe = images["P6"][top:]
    assert len(np.unique(stripe)) == 1 and int(stripe[0, 0, 0]) in (0, 128, 255)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"system": "vit_x"}, "unknown system 'vit_x'"),
        ({"system": "naive"}, "does not read images"),
        ({"ticker": "KO"}, "KO is not a study ticker"),
        ({"perturbation": "P9"}, "unknown perturbation 'P9'"),
        ({"perturbation": "P3"}, "not rated on P3"),
        ({"date": "2022-13-01"}, "--date"),
        ({"date": "2022-06-04"}, "2022-06-04 is not a window end of MRK"),  # a Saturday
        ({"date": "2022-01-03"}, "nearest: 2022-04-22"),  # before the first window end
    ],
)
def test_bad_requests_are_clear_errors(setup, capsys, changes, message):
    arguments = {"perturbation": "P0", **changes}
    perturbation = arguments.pop("perturbation")
    code, output = show(setup, perturbation, **arguments)
    assert code == 2 and not output.exists()
    assert message in capsys.readouterr().err
