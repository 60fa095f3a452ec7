"""One page shell for every tsrate report (the core and each suite), and its atomic write.

:func:`page` returns a complete, self-contained HTML document: the shared style sheet, a
navigation bar, the sections (HTML strings, one per ``section()``), and, when a section
holds a chart (:func:`tsrate.html.charts.figure`), the Vega, Vega-Lite and Vega-Embed
libraries inlined once plus a few lines that render every spec. Nothing is fetched: the
file opens offline and from ``file://``. :func:`write_page` writes it atomically (a
temporary file renamed over the target), so a reader never sees half a report.

A section is a function returning HTML; wrap its content with :func:`section` so it gets
the anchor the navigation links to. :func:`details` folds long tables behind a toggle.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

from tsrate.html.charts import esc
from tsrate.platform.files import write_text_atomic

#: the Vega-Lite version the specs and the inlined bundle share (Altair's schema)
VEGA_LITE_VERSION = "v6.4"

STYLE = """
body{font-family:Helvetica,Arial,sans-serif;margin:0 auto;max-width:1280px;padding:0 24px 48px;color:#222;box-sizing:border-box}
h1{margin-top:24px}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:40px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.source{font-size:12px;color:#666;margin-top:2px}
.grid{display:flex;flex-wrap:wrap;gap:12px}.chart-figure{margin:0}
figcaption{font-size:12px;color:#555;max-width:520px}
.num[data-mart]{border-bottom:1px dotted #999;cursor:help}
nav a{margin-right:12px}.verdict{font-size:15px;line-height:1.5;background:#f6f8fb;border-left:4px solid #0072B2;padding:8px 12px}
.note{font-size:13px}details{margin:8px 0}details>summary{cursor:pointer;color:#0057a0}
.table-scroll{max-width:100%;overflow-x:auto}
table.summary td,table.summary th{white-space:nowrap}
"""

EMBED = """
(function () {
  document.querySelectorAll('.num[data-mart]').forEach(function (el) {
    el.title = el.dataset.mart + '.' + el.dataset.column + ' where ' + el.dataset.where +
      (el.dataset.agg ? ' (' + el.dataset.agg + ')' : '') + ' = ' + el.dataset.value;
  });
  var specs = document.querySelectorAll('script.vega-spec');
  window.tsrateCharts = {rendered: 0, failed: [], total: specs.length};
  specs.forEach(function (script) {
    var name = script.dataset.chart;
    var mount = document.getElementById('chart-' + name);
    vegaEmbed(mount, JSON.parse(script.textContent), {actions: false, renderer: 'svg'})
      .then(function () { window.tsrateCharts.rendered += 1; })
      .catch(function (error) {
        window.tsrateCharts.failed.push(name + ': ' + error);
        console.error('chart ' + name + ': ' + error);
      });
  });
})();
"""


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega + Vega-Lite + Vega-Embed as one script defining ``vegaEmbed`` globally.

    Built by ``vl-convert-python`` (bundled with it: no network), cached on disk per version
    (``$XDG_CACHE_HOME/tsrate``) because bundling costs about two seconds."""
    import vl_convert

    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tsrate"
    target = cache / f"vega-bundle-{vl_convert.__version__}-{VEGA_LITE_VERSION}.js"
    try:
        return target.read_text(encoding="utf-8")
    except OSError:
        pass
    text = vl_convert.javascript_bundle(vl_version=VEGA_LITE_VERSION)
    if "</script" in text.lower():  # cannot happen with today's bundle; never break the page
        text = text.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        write_page(target, text)
    except OSError:
        pass  # a read-only home: bundle again next time
    return text


def named(names: Sequence[str]) -> str:
    """Names in bold as a verdict lists them: ``a``, ``a and b``, ``a, b and c``."""
    bold = [f"<b>{esc(name)}</b>" for name in names]
    return bold[0] if len(bold) == 1 else ", ".join(bold[:-1]) + " and " + bold[-1]


def section(anchor: str, title: str, body: str) -> str:
    """A report section: ``<section id=anchor><h2>title</h2>body</section>``."""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def details(summary: str, body: str, open_: bool = False) -> str:
    """``body`` behind a toggle labelled ``summary`` (HTML)."""
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{body}</details>"


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], css: str = "", scroll: bool = True
) -> str:
    """An HTML table of pre-rendered cells; ``scroll`` keeps a wide one inside the page."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    out = f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    return f'<div class="table-scroll">{out}</div>' if scroll else out


def page(
    title: str,
    heading: str,
    sections: Sequence[str],
    nav: Sequence[tuple[str, str]] = (),
    subtitle: str = "",
    style: str = "",
) -> str:
    """The whole document. ``nav``: (anchor, label) pairs; ``style``: extra CSS rules."""
    body = "".join(sections)
    links = "".join(f'<a href="#{esc(a)}">{esc(label)}</a>' for a, label in nav)
    charts = 'class="vega-spec"' in body
    scripts = f"<script>{vega_bundle()}</script>" if charts else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}{style}</style></head><body>"
        + (f"<h1>{esc(heading)}</h1>" if heading else "")
        + (f'<p class="source">{subtitle}</p>' if subtitle else "")
        + (f"<nav>{links}</nav>" if links else "")
        + body
        + scripts
        + f"<script>{EMBED}</script></body></html>\n"
    )


def write_page(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (:func:`tsrate.platform.files.write_text_atomic`)."""
    return write_text_atomic(path, text)


#: words a column name spells in short (``ci_low`` -> "CI low")
_WORDS = {"ci": "CI", "mae": "MAE", "mape": "MAPE", "crps": "CRPS", "f1": "F1", "n": "n",
          "id": "", "pct": "%", "p": "p", "minmax": "min-max", "cot": "CoT", "mse": "MSE",
          "rmse": "RMSE", "mase": "MASE", "smape": "SMAPE", "wql": "WQL", "msis": "MSIS",
          "wrs": "WRS", "ape": "APE", "pie": "PIE", "llm": "LLM"}  # fmt: skip


def human(column: str) -> str:
    """A column name as a header: ``share_at_rating`` -> "Share at rating",
    ``mae_ci_low`` -> "MAE CI low", ``system_id`` -> "System"."""
    words = [_WORDS.get(w, w) for w in str(column).split("_")]
    words = [w for w in words if w]
    if not words:
        return str(column)
    first = words[0]
    return " ".join([first[:1].upper() + first[1:], *words[1:]])


def frame_table(frame, labels: dict[str, str] | None = None, digits: int = 3) -> str:
    """A DataFrame as an HTML table with human headers (:func:`human`, or ``labels``),
    numbers to ``digits`` significant figures, NULL as empty, inside a scroll box."""
    import pandas as pd

    labels = labels or {}

    def cell(value) -> str:
        if value is None or (not isinstance(value, str) and pd.api.types.is_scalar(value)
                             and pd.isna(value)):  # fmt: skip
            return ""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.{digits}g}"
        return esc(value)

    header = [esc(labels.get(c, human(c))) for c in frame.columns]
    rows = [[cell(v) for v in row] for row in frame.itertuples(index=False)]
    return table(header, rows, css="frame")
