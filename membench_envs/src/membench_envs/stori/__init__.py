"""STORI (STOchastic-ataRI): Atari games under the paper's taxonomy of stochasticity, seeded, on current ale-py.

- :mod:`.games`: per-game tables (RAM labels, type-2 modes, type-5 blackout regions and RAM edits, the paper's
  presets).
- :mod:`.config`: the config dict, its validation and the presets (:func:`parse_config`, :func:`preset_config`).
- :mod:`.wrappers`: the frame-level wrappers of types 1, 2 and 5 (type 3 switches one on by agent step).
- :mod:`.preprocess`: grey-scale and area resize (the usual Atari preprocessing, no frame stack).
- :mod:`.env`: :class:`~membench_envs.stori.env.StoriEnv`, behind the ``STORI/`` gymnasium IDs (needs the ``atari``
  extra: ``pip install 'membench-envs[atari]'``).

Importing this package does not import ale-py; :mod:`.env` does.
"""

from membench_envs.stori.config import StoriConfig, parse_config, preset_config
from membench_envs.stori.games import GAMES, TAXONOMY

__all__ = ["GAMES", "TAXONOMY", "StoriConfig", "parse_config", "preset_config"]
