"""The registry's ViT-num-spec system takes the study's window shape: a context of the
study's n values and a horizon of its d (asked the other way round, it would train on
d-value contexts and forecast n steps, and refuse every batch of the study)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems.base import ForecastBatch
from tsrate.systems.vit_num_spec import VARIANTS, create


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_variant_is_trained_for_the_studys_context_and_horizon(variant, tmp_path):
    study = Study(
        tickers=("AAPL",), start=dt.date(2022, 1, 3), end=dt.date(2022, 12, 30),
        context_length=30, horizon=5,
    )  # fmt: skip
    system = create(study, None, variant=variant, cache_dir=tmp_path)
    assert (system.settings.context_length, system.settings.horizon) == (30, 5)
    # a batch shaped the other way round (d-value contexts, n steps ahead) is refused
    swapped = ForecastBatch(
        "AAPL", "P0", np.arange(2), np.ones((2, 5)), 30, np.zeros((2, 30)), (0, 1)
    )
    with pytest.raises(TsrateError, match="trained for horizon 5"):
        system.predict(swapped)
