"""Small statistics helpers shared by the benchmarks."""

from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summary(ms: list[float]) -> dict[str, float]:
    """{"p50", "p95"} rounded to 0.01."""
    return {"p50": round(statistics.median(ms), 2), "p95": round(percentile(ms, 0.95), 2)}
