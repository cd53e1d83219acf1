"""Shared test configuration: one torch thread (2-core machines), helpers for optional extras."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# stable-baselines3's default logger makes a /tmp/SB3-<date> folder per model that learns without one of ours (the SB3
# compatibility tests): one folder for this test process instead, removed at its exit
_sb3_logs = tempfile.mkdtemp(prefix="membench-tests-sb3-")
os.environ.setdefault("SB3_LOGDIR", _sb3_logs)
atexit.register(shutil.rmtree, _sb3_logs, True)

if importlib.util.find_spec("torch") is not None:
    import torch

    torch.set_num_threads(1)
