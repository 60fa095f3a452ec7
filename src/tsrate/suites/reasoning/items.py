"""One reasoning item: what a system is asked, with the truth it is scored against.

Tasks (paper Sections 4-6):

- ``etiological``: a series and four scenario captions; which caption produced it?
- ``qa_single``: a what-if question about one series, four options.
- ``qa_two``: a question about a series and a second series made under a what-if, four options.
- ``qa_perturbed``: a ``qa_two`` question whose one wrong option is replaced by a near copy
  of the right one with other numbers (paper Section 5.3); ``params.original_item_id``
  names the original, ``params.perturbed_index`` the near copy's position.
- ``forecast``: the history of a series (``series``), the true continuation (``future``)
  and a context text that states something about that future.

An item is named by a hash of everything a system sees or is scored against
(:attr:`Item.item_id`), so the same item generated or imported twice is stored once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

TASKS = ("etiological", "qa_single", "qa_two", "qa_perturbed", "forecast")
CHOICE_TASKS = ("etiological", "qa_single", "qa_two", "qa_perturbed")


@dataclasses.dataclass(frozen=True)
class Item:
    task: str
    category: str
    series: tuple[float, ...]
    question: str = ""
    options: tuple[str, ...] = ()
    answer_index: int | None = None
    series_b: tuple[float, ...] | None = None
    context: str = ""
    future: tuple[float, ...] | None = None
    domain: str | None = None
    source: str = "procedural"
    params: dict = dataclasses.field(default_factory=dict, compare=False)

    @property
    def item_id(self) -> str:
        text = json.dumps(
            [
                self.task,
                self.category,
                self.question,
                list(self.options),
                self.answer_index,
                list(self.series),
                None if self.series_b is None else list(self.series_b),
                self.context,
                None if self.future is None else list(self.future),
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def horizon(self) -> int | None:
        return None if self.future is None else len(self.future)

    @property
    def chance_level(self) -> float | None:
        """Accuracy of a uniform random choice (None for forecasting items)."""
        return 1.0 / len(self.options) if self.options else None


LETTERS = "ABCDEFGHIJ"
