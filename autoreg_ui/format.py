"""One way to write numbers on every page. Memory is in binary units (KiB, MiB, GiB), always."""
from __future__ import annotations

import math

BYTE_UNITS_NOTE = "Memory is shown in binary units: 1 KiB = 1,024 bytes, 1 MiB = 1,024 KiB, 1 GiB = 1,024 MiB."


def human_bytes(n: float) -> str:
    """1536 → '1.50 KiB' (binary units, as memory is sold and measured)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1024
    return f"{n:,.2f} TiB"


def human_count(n: float) -> str:
    """1234567 → '1.23 M' (FLOPs, dot products, parameters)."""
    n = float(n)
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,.0f}"


def ms(value: float) -> str:
    """Milliseconds for a metric: '35 ms', '2.41 s' past a second, '—' when unknown."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def ratio(value: float) -> str:
    """A speed-up or a ratio: '29.4×'."""
    return "—" if value is None or not math.isfinite(value) else f"{value:,.1f}×"


TINY_PERCENT = 0.001  # a probability under this many percent is written as under it: its digits would be noise
ALMOST_SURE = 0.9995  # from here up one decimal would round to 100.0%: written '> 99.9%'


def percent(prob: float) -> str:
    """A model's probability as a percentage, never 0.0% for a token the model gave a chance, never 100% (a
    softmax leaves every other token a little, even where float32 rounds the sum to exactly 1.0), and never in
    e-notation: 0.4153 → '41.5%', 0.0000123 → '0.0012%' (two significant digits under 0.1%), 2.5e-9 →
    '< 0.001%', 0.9997 and 1.0 → '> 99.9%'."""
    if prob <= 0:
        return "0%"
    if prob >= ALMOST_SURE:
        return "> 99.9%"
    if prob >= 0.001:
        return f"{prob:.1%}"
    if prob * 100 >= TINY_PERCENT:
        return f"{prob * 100:.2g}%"
    return f"< {TINY_PERCENT:g}%"


def apart(value: float, bound: float) -> tuple[str, str]:
    """``value`` and ``bound`` to two significant digits, or as many more as it takes for two different numbers
    not to print the same (a value just past the bound would read as the bound itself)."""
    for digits in range(2, 8):
        shown = f"{value:.{digits}g}", f"{bound:.{digits}g}"
        if value == bound or shown[0] != shown[1]:
            return shown
    return shown


def spoken_percent(prob: float) -> str:
    """``percent`` for a screen reader, whose symbol tables read '>' and '<' as 'greater' and 'less':
    'over 99.9%', 'under 0.001%'."""
    said = percent(prob)
    return said.replace("> ", "over ", 1) if said.startswith(">") else said.replace("< ", "under ", 1)


def p_is(prob: float) -> str:
    """'p = 41.5%', or 'p < 0.001%' / 'p > 99.9%' for a probability too near 0 or 1 to write (not 'p = < 0.001%')."""
    said = percent(prob)
    return f"p {said}" if said.startswith(("<", ">")) else f"p = {said}"
