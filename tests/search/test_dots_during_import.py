"""A vector product asked while another thread is still importing torch (the daemon's
watcher loading the model as a search or the daemon's warm-up runs) is computed by numpy.

Found in a daemon's log: "warming the model failed ... AttributeError: partially initialized
module 'torch' has no attribute 'inference_mode'": `search.vectors.dots` took torch from
`sys.modules` as soon as it was there, before its import had finished. A search at that
moment failed the same way. Here `sys.modules["torch"]` holds a module in exactly the state
CPython's import leaves it in meanwhile (`__spec__._initializing`)."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import numpy as np
import pytest

from ctxd.search.vectors import dots


def test_dots_while_torch_is_being_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    partial = types.ModuleType("torch")
    partial.__spec__ = importlib.machinery.ModuleSpec("torch", None)
    partial.__spec__._initializing = True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", partial)
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.array([1, 0, 2, 0], dtype=np.float32)
    assert dots(rows, v).tolist() == [4.0, 16.0, 28.0]
