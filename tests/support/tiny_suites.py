"""The smallest settings of each suite that the flow tests (unit and integration) run with. No
test here."""

from __future__ import annotations

#: the smallest procedural reasoning set (an item has 4 captions)
GENERATOR = {"scenarios": 4, "forecasts": 1}
#: the smallest understanding datasets (one of them)
UNDERSTANDING = {"train": 1, "validation": 1, "test": 2, "position_per_cell": 1,
                 "position_length": 40, "max_length": 60, "datasets": ["trend"]}  # fmt: skip
#: a tiny interpretability run with one sensitivity study of IMV-LSTM (Tensor)
INTERPRETABILITY = {"length": 260, "burn_in": 20, "sensitivity_f": (0.3,),
                    "sensitivity_sigma": (0.1,), "sensitivity_n": (5,),
                    "sensitivity_models": ("imv_tensor",),
                    "settings": {"test_length": 40, "hidden": 3, "epochs": 2,
                                 "batch_size": 64}}  # fmt: skip
