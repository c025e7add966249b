"""The dashboards' charts: SVG rendered on the server by pygal, inlined in the page.

No JavaScript (the CSP allows scripts from our origin only): pygal's inline config
script is dropped from the tree, its tooltips with it; every point's value stays in the
SVG (`<desc class="value">`) and the page prints the same figures in a table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

import pygal
from django.utils.safestring import SafeString, mark_safe
from pygal.style import Style

SVG_NS: Final = "{http://www.w3.org/2000/svg}"
# Readable on the admin's light and dark themes: transparent ground, mid-grey text.
STYLE: Final = Style(
    background="transparent", plot_background="transparent",
    foreground="#777", foreground_strong="#777", foreground_subtle="#7774",
    opacity=".75", opacity_hover=".95", font_family="system-ui, sans-serif",
    label_font_size=13, major_label_font_size=13, legend_font_size=14, title_font_size=16,
    value_font_size=13, tooltip_font_size=13,
    colors=("#2f7ed8", "#f28f43", "#c42525", "#8bbc21", "#77a1e5", "#a6c96a"),
)


def _without_scripts(tree: Any) -> Any:
    for parent in list(tree.iter()):
        for child in list(parent):
            if child.tag in (f"{SVG_NS}script", "script"):
                parent.remove(child)
    return tree


def nice_ticks(top: float, count: int = 5, whole: bool = False) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10^k; whole numbers for counts) up to at least
    `top`: an axis read at a glance."""
    if top <= 0:
        return [0, 1]
    rough = top / count
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= rough)
    step = max(step, 1) if whole else step
    return [round(i * step, 10) for i in range(math.ceil(top / step - 1e-9) + 1)]


def _chart(kind: Callable[..., Any], title: str, labels: Sequence[str],
           formatter: Callable[[float], str], series: dict[str, list[float | None]],
           whole: bool = False, **config: Any) -> Any:
    top = max((v for values in series.values() for v in values if v is not None), default=0)
    chart = kind(
        title=title, style=STYLE, js=[], disable_xml_declaration=True, height=320,
        width=640, x_labels=list(labels), x_label_rotation=0, show_minor_x_labels=False,
        x_labels_major_every=4, truncate_label=-1, truncate_legend=-1,
        show_legend=len(series) > 1, legend_at_bottom=True, legend_at_bottom_columns=3,
        margin=8, margin_bottom=28, spacing=10, no_data_text="No runs",
        y_labels=nice_ticks(top, whole=whole), value_formatter=formatter, allow_interruptions=True,
        **config)
    for name, values in series.items():
        chart.add(name, values)
    chart.add_xml_filter(_without_scripts)
    return chart


def _render(chart: Any) -> SafeString:
    # pygal escapes titles, labels and values itself; the SVG holds no user text but
    # the bucket times.
    return mark_safe(chart.render(is_unicode=True))  # noqa: S308


def bucket_labels(buckets: list[dict[str, Any]], hours: int) -> list[str]:
    starts = [datetime.fromisoformat(b["start"]) for b in buckets]
    pattern = "%H:%M" if hours <= 24 else "%a %H:%M"
    return [start.strftime(pattern) for start in starts]


def charts(buckets: list[dict[str, Any]], hours: int) -> dict[str, SafeString]:
    """The five charts of a series of buckets (operations.metrics.series)."""
    labels = bucket_labels(buckets, hours)
    latency = _chart(pygal.Line, "Latency (ms)", labels, lambda v: f"{v:,.0f} ms",
                     {name.upper(): [b["latency_ms"][name] for b in buckets]
                      for name in ("p50", "p95", "p99")}, dots_size=2)
    requests = _chart(pygal.Bar, "Requests and errors", labels, lambda v: f"{v:,.0f}",
                      {"Requests": [b["requests"] for b in buckets],
                       "Errors": [b["errors"] for b in buckets]}, whole=True)
    errors = _chart(pygal.Line, "Error rate (%)", labels, lambda v: f"{v:.1f} %",
                    {"Error rate": [error_rate(b) for b in buckets]}, dots_size=2, fill=True)
    tokens = _chart(pygal.Bar, "Tokens", labels, lambda v: f"{v:,.0f}",
                    {"Tokens": [b["tokens"] for b in buckets]}, whole=True)
    cost = _chart(pygal.Bar, "Cost", labels, lambda v: f"{v:,.4f}",
                  {"Cost": [b["cost"] for b in buckets]})
    return {name: _render(chart) for name, chart in (
        ("latency", latency), ("requests", requests), ("errors", errors),
        ("tokens", tokens), ("cost", cost))}


def error_rate(bucket: dict[str, Any]) -> float | None:
    """Failed share of the bucket's requests in percent (None without requests)."""
    requests = bucket["requests"]
    return round(100 * bucket["errors"] / requests, 1) if requests else None
