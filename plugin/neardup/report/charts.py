"""Static SVG charts for the HTML report, drawn offline with matplotlib (no pyplot state).

Output is reproducible: fixed SVG id salt, no date metadata, text drawn as paths so the
page needs no fonts.
"""

from __future__ import annotations

import io
from itertools import pairwise
from typing import Mapping, Sequence

import matplotlib
from matplotlib.figure import Figure

DUP = "#d1495b"
ORIG = "#8fa9c4"
ONE = "#30638e"


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "neardup", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def _figure(title: str, xlabel: str, ylabel: str) -> tuple[Figure, object]:
    fig = Figure(figsize=(6.4, 3.4), dpi=100)
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return fig, ax


def bar_chart(
    labels: Sequence[str], values: Sequence[float], *, title: str, xlabel: str, ylabel: str
) -> str:
    """One bar per label."""
    fig, ax = _figure(title, xlabel, ylabel)
    ax.bar(range(len(labels)), values, color=ONE)
    ax.set_xticks(
        range(len(labels)),
        labels,
        rotation=45 if len(labels) > 12 else 0,
        ha="right" if len(labels) > 12 else "center",
    )
    ax.yaxis.get_major_locator().set_params(integer=True)
    return _svg(fig)


def stacked_bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    colors: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> str:
    """Bars per label, one stacked segment per series (legend in series order)."""
    fig, ax = _figure(title, xlabel, ylabel)
    bottom = [0.0] * len(labels)
    for (name, vals), color in zip(series.items(), colors, strict=True):
        ax.bar(range(len(labels)), vals, bottom=bottom, color=color, label=name)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(range(len(labels)), labels)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(frameon=False, fontsize=9)
    return _svg(fig)


def binned_histogram(
    edges: Sequence[float],
    series: Mapping[str, Sequence[int]],
    colors: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    marker: float | None = None,
    marker_label: str = "",
) -> str:
    """Pre-counted bins (``len(edges) - 1`` counts per series), stacked, with an optional
    vertical marker."""
    fig, ax = _figure(title, xlabel, ylabel)
    widths = [b - a for a, b in pairwise(edges)]
    bottom = [0] * (len(edges) - 1)
    for (name, counts), color in zip(series.items(), colors, strict=True):
        ax.bar(
            edges[:-1],
            counts,
            width=widths,
            bottom=bottom,
            align="edge",
            color=color,
            label=name,
            edgecolor="white",
            linewidth=0.5,
        )
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    if marker is not None:
        ax.axvline(marker, color="#333", linestyle="--", linewidth=1, label=marker_label or None)
    ax.set_xlim(edges[0], edges[-1])
    ax.yaxis.get_major_locator().set_params(integer=True)
    if len(series) > 1 or marker_label:
        ax.legend(frameon=False, fontsize=9)
    return _svg(fig)
