"""The int8 coarse pass's building blocks at 1M 384-d vectors, side by side.

    .venv/bin/python bench/bench_int8.py [--rows 1000000] [--json out.json]

Random unit vectors (the product's cost does not depend on the data); medians of 7 of:
the float32 matrix-vector product (numpy), float16 `torch.mv`, fbgemm's int8 dynamic
linear (prepacked in blocks of 65,536 rows; torch's deprecated quantized API), torch's
`_weight_int8pack_mm` (what `search.vectors.Int8Matrix` uses), and the top 1,000 of 1M
scores by numpy's `argpartition` vs `torch.topk`. Also the RSS fbgemm's packing adds
against the int8 bytes it holds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_search import rss_mb
from bench.stats import emit


def median_ms(fn: Any, runs: int = 7) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n, dim = args.rows, 384
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((n, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rows[7] + np.float32(0.05) * rng.standard_normal(dim).astype(np.float32)
    q = torch.from_numpy(query)[None, :]
    scales = np.abs(rows).max(axis=1) / 127.0
    int8 = torch.from_numpy(np.rint(rows / scales[:, None]).astype(np.int8))
    scales16 = torch.from_numpy(scales.astype(np.float32)).to(torch.bfloat16)
    half = torch.from_numpy(rows).to(torch.float16)
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "rows": n, "dim": dim,
                           "torch": torch.__version__, "threads": torch.get_num_threads()}
    out["float32_numpy_ms"] = median_ms(lambda: rows @ query)
    out["float16_torch_mv_ms"] = median_ms(lambda: torch.mv(half, q[0].to(torch.float16)))
    out["int8pack_mm_bf16_ms"] = median_ms(
        lambda: torch.ops.aten._weight_int8pack_mm(q.to(torch.bfloat16), int8, scales16))
    half = torch.empty(0)  # free the float16 copy before measuring memory
    before = rss_mb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        blocks = []
        for start in range(0, n, 65_536):
            part = torch.from_numpy(rows[start:start + 65_536])
            packed = torch.quantize_per_channel(
                part, torch.from_numpy(scales[start:start + 65_536].astype(np.float64)),
                torch.zeros(len(part), dtype=torch.int64), 0, torch.qint8)
            blocks.append(torch.ops.quantized.linear_prepack(packed, None))
        out["fbgemm_int8_ms"] = median_ms(lambda: torch.cat(
            [torch.ops.quantized.linear_dynamic(q, b)[0] for b in blocks]))
    out["fbgemm_packed_rss_mb"] = round(rss_mb() - before)
    out["int8_bytes_mb"] = round(int8.numel() / 2**20)
    scores = rows @ query
    tensor = torch.from_numpy(scores)
    out["top1000_numpy_argpartition_ms"] = median_ms(lambda: np.argpartition(-scores, 999))
    out["top1000_torch_topk_ms"] = median_ms(lambda: torch.topk(tensor, 1000, sorted=False))
    emit(out, args.json)


if __name__ == "__main__":
    main()
