"""The measured figures of docs/measurements.md, and where else in the README and docs/ one of them is written.

A figure is a number with a unit of measure (ms, s, MiB, KiB, ×, %, bits, tokens/s), or a count written with a
thousands comma, in a result or reference column of the page's tables. Goals, commands and dates are not
figures: a goal's "2 s" or "30 MiB" may be written wherever the goal is named."""
from __future__ import annotations

import re

NUMBER = r"\d[\d,]*(?:\.\d+)?(?:e-\d+)?"
UNIT = r"tokens/s|MiB/min|ms|s|MiB|KiB|×|%|bits"
# numbers that share one unit: "8.7–9.2 ms", "33.5 and 37.8 ms", "51.5 / 85.8 ms", "1,272 → 1,286 MiB"
FIGURE = re.compile(rf"(?<![\w.,-])((?:{NUMBER})(?:\s*(?:–|/|→|±|and|against)\s*(?:{NUMBER}))*)\s?({UNIT})(?![\w/])")
THOUSANDS = re.compile(r"(?<![\w.,-])\d{1,3}(?:,\d{3})+(?![\d,])")  # a count such as "4,800 updates"
FIGURE_COLUMNS = ("current result", "result", "reference in the same run")


def figures(text: str) -> set[str]:
    """Every number-with-unit in ``text``, each number with its unit (``1.70 s``, ``2.8 ×``, ``69 %``), and
    every count written with a thousands comma (``4,800``)."""
    found = {f"{number} {unit}" for numbers, unit in FIGURE.findall(text)
             for number in re.findall(NUMBER, numbers)}
    return found | set(THOUSANDS.findall(text))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_figures(text: str) -> set[str]:
    """The figures in the result and reference columns of every table of a Markdown page."""
    found: set[str] = set()
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
        elif not set("".join(cells)) <= set("-: "):
            found |= {f for name, cell in zip(header, cells) if name in FIGURE_COLUMNS for f in figures(cell)}
    return found


def prose(text: str) -> str:
    """A page without its tables: what is left for a figure to be repeated in."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("|"))


def repeated(measured: set[str], pages: dict[str, str]) -> list[str]:
    """``page: figure`` for each measured figure a page writes again."""
    return sorted(f"{name}: {figure}" for name, text in pages.items() for figure in figures(text) & measured)
