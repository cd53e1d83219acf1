"""Shared test configuration: one torch thread (2-core machines), helpers for optional extras."""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

if importlib.util.find_spec("torch") is not None:
    import torch

    torch.set_num_threads(1)
