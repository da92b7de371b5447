"""Small statistics helpers shared by the benchmarks."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summary(ms: list[float]) -> dict[str, float]:
    """{"p50", "p95"} rounded to 0.01."""
    return {"p50": round(statistics.median(ms), 2), "p95": round(percentile(ms, 0.95), 2)}


def against(by_case: dict[str, list[float]], base: str) -> dict[str, dict[str, float]]:
    """Per case of timings (ms): p50 and p90 (nearest rank), rounded to 0.01, the p50's
    ratio to case `base`'s (`x_<base>`, to 0.001), and the number of samples."""
    ref = statistics.median(by_case[base])
    return {name: {"p50_ms": round(statistics.median(ms), 2),
                   "p90_ms": round(percentile(ms, 0.9), 2),
                   f"x_{base}": round(statistics.median(ms) / ref, 3), "samples": len(ms)}
            for name, ms in by_case.items()}


def emit(result: dict[str, Any], path: Path | None) -> None:
    """Print a benchmark's result as JSON, and write it to `path` when one is given."""
    text = json.dumps(result, indent=2)
    print(text)
    if path is not None:
        path.write_text(text + "\n", encoding="utf-8")
