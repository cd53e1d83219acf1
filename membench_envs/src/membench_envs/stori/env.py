"""``StoriEnv``: one Atari game of STORI (ale-py, frame skip 1, sticky actions off) with one stochasticity config,
the agent's frame skip on top, and the membench observation variants.

One agent step (``frame_skip`` emulator frames, the agent's action repeated): every frame goes through the active
frame wrapper (:mod:`membench_envs.stori.wrappers`): type 1 may replace the action, type 2 acts around the frame;
the observation is the pixel-wise max of the last two frames (``max_pool``), each masked on its own by a type-5
wrapper. Rewards are summed over the frames. The episode ends when the game is over (``terminated``) or after
``max_episode_frames`` emulator frames (``truncated``, ALE's v5 default 108000); a lost life does not end it.
Reset: ALE's reset, then a uniform number of NOOP frames in ``[0, noop_max)``. With ``noops_through_effect=True``
(default) they go through the active type-1 / type-2 wrapper like any frame (type 1 may replace a NOOP, type 2's
events may happen), as in the authors' DreamerV3 pipeline, whose Atari env steps its no-ops through the wrapped
ALE env (``noops: 30``); ``False`` runs them on the bare emulator (membench's earlier rule; the authors' STORM
pipeline has no no-op starts: ``noop_max=0``). Drifts (type 3) start in the default game, so no wrapper acts on
their no-ops either way; type-5 masks act on observations only.

Observation variants:

- ``partial``: the (masked) frame, uint8 (210, 160, 3), or the preprocessed shape (``grayscale``, ``screen_size``).
- ``oracle``: ``{"image": partial, "oracle": float32 vector}``: the game's labelled RAM variables
  (:attr:`Game.ram_labels`: positions, scores, clock), which hold every variable a type-5 mask can remove.
- ``full``: ``{"image": the unmasked frame, "ram": uint8 (128,)}``: the paper's type 0 (the RAM with the state
  labels of :attr:`Game.ram_labels`) next to the screen.

``info`` carries ``oracle`` (the labelled variables), ``lives``, ``episode_frame_number`` and, for a concept drift,
``concept`` (1 before the switch, 2 after).

Randomness: ``reset(seed=s)`` seeds one ``np.random.SeedSequence``; its children drive the dynamics (types 1, 2),
the observation masks (type 5) and the no-op starts. ALE itself is deterministic here (its RNG serves sticky actions
only, which are off; the RAM edits save and restore it with the state). The variants share the dynamics stream, so
partial, oracle and full see the same trajectory under the same seed and actions. numpy's and Python's global RNGs
are never used (the authors' code draws from them, so its episodes cannot be reproduced from a seed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.stori import PARAMS
from membench_envs.envs.core.native import check_render_mode
from membench_envs.envs.core.params import check_kwargs, check_seed
from membench_envs.envs.core.wrap import check_action
from membench_envs.stori.config import StoriConfig, parse_config, preset_config
from membench_envs.stori.games import GAMES
from membench_envs.stori.preprocess import Preprocess
from membench_envs.stori.wrappers import FrameWrapper, make_wrapper

RAM_SIZE = 128


class StoriEnv(gym.Env):
    """A STORI task: ``gym.make("STORI/<Game>-<Preset>-v0")`` or ``gym.make("STORI/<Game>-v0", config={...})``."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 15}  # noqa: RUF012

    def __init__(
        self,
        game: str = "Breakout",
        config: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        p = check_kwargs("StoriEnv", PARAMS, {"game": game, **kwargs})
        self.game = GAMES[p["game"]]
        self.preset = p["preset"]
        if self.preset is not None and config is not None:
            raise ValueError(
                f"STORI/{self.game.name}-{self.preset}-v0 fixes its config; pass config=... to "
                f"STORI/{self.game.name}-v0 instead"
            )
        config = preset_config(self.game.name, self.preset) if self.preset is not None else config
        self.config: StoriConfig = parse_config(self.game, config)
        self.config_dict = None if config is None else dict(config)
        self.obs_variant = p["obs_variant"]
        self.frame_skip, self.max_pool, self.noop_max = p["frame_skip"], p["max_pool"], p["noop_max"]
        self.noops_through_effect = p["noops_through_effect"]
        self._first_observed = self.frame_skip - (2 if self.max_pool else 1)  # frame index within a step
        self.render_mode = check_render_mode(render_mode, tuple(self.metadata["render_modes"]))
        name = f"STORI/{self.game.name}-{self.preset or ''}{'-' if self.preset else ''}v0"
        ale_py = require("ale_py", "atari", env_id=name)

        self.ale = ale_py.ALEInterface()
        self.ale.setLoggerMode(ale_py.LoggerMode.Error)
        self.ale.setFloat("repeat_action_probability", 0.0)
        self.ale.setInt("frame_skip", 1)
        self.ale.setInt("max_num_frames_per_episode", p["max_episode_frames"])
        # ALE's own RNG only drives sticky actions, which are off: the emulation is deterministic, so the ROM is
        # loaded once with a fixed ALE seed and reset_game() restarts it; every draw is the env's own generator's.
        self.ale.setInt("random_seed", 0)
        self.ale.loadROM(ale_py.roms.get_rom_path(self.game.rom))
        actions = self.ale.getLegalActionSet() if p["full_action_space"] else self.ale.getMinimalActionSet()
        self._actions = list(actions)
        self._noop = ale_py.Action.NOOP
        self._noop_index = self._actions.index(self._noop)  # 0 in every set
        self.action_space = gym.spaces.Discrete(len(self._actions))

        h, w = self.ale.getScreenDims()
        self._frames = np.zeros((2, h, w, 3), dtype=np.uint8)  # the last two frames of a step (masked)
        self._clean = np.zeros((2, h, w, 3), dtype=np.uint8)  # the same, unmasked (no mask active)
        self._pooled = np.zeros((h, w, 3), dtype=np.uint8)
        self._pre = Preprocess(h, w, p["grayscale"], p["screen_size"])
        image = gym.spaces.Box(0, 255, self._pre.shape, dtype=np.uint8)
        self._labels = np.array(list(self.game.ram_labels.values()), dtype=np.int64)
        oracle = gym.spaces.Box(0.0, 255.0, (len(self._labels),), dtype=np.float32)
        if self.obs_variant == "partial":
            self.observation_space = image
        elif self.obs_variant == "oracle":
            self.observation_space = gym.spaces.Dict({"image": image, "oracle": oracle})
        else:
            ram = gym.spaces.Box(0, 255, (RAM_SIZE,), dtype=np.uint8)
            self.observation_space = gym.spaces.Dict({"image": image, "ram": ram})

        concept = self.config.effect
        self.wrapper: FrameWrapper | None = (
            None if concept is None else make_wrapper(concept, self.game, int(self.action_space.n), self._noop)
        )
        self._masks = self.wrapper is not None and self.wrapper.masks_observation and self.obs_variant != "full"
        self._seed_sequence = np.random.SeedSequence()
        self._rngs = self._spawn(self._seed_sequence)
        self._started = self._done = False
        self._step = 0
        self._on = False
        self._start_ram = np.zeros(RAM_SIZE, dtype=np.uint8)  # the RAM right after ALE's reset: type 2's reference

    # --- set-up --------------------------------------------------------------------------------------------------
    @staticmethod
    def _spawn(seq: np.random.SeedSequence) -> dict[str, np.random.Generator]:
        dyn, obs, noop = (np.random.default_rng(s) for s in seq.spawn(3))
        return {"dynamics": dyn, "observation": obs, "noop": noop}

    @property
    def step_count(self) -> int:
        """Agent steps since the episode started."""
        return self._step

    @property
    def concept(self) -> int:
        """1 while the default game runs, 2 while the config's effect runs (types 1, 2, 5: always 2)."""
        return 2 if self._on else 1

    def _activate(self, on: bool) -> None:
        if on and not self._on and self.wrapper is not None:
            rng = self._rngs["observation" if self.wrapper.masks_observation else "dynamics"]
            self.wrapper.start(self.ale, rng, self._start_ram)
        self._on = on

    # --- observation ---------------------------------------------------------------------------------------------
    def _capture(self, slot: int) -> None:
        if self._masks and self._on:  # the masked frame only: nothing reads the clean one then
            self.ale.getScreenRGB(self._frames[slot])
            cast(FrameWrapper, self.wrapper).mask(self._frames[slot], self.ale)  # _masks: there is a wrapper
        else:
            self.ale.getScreenRGB(self._clean[slot])

    def _observe(self, slots: tuple[int, ...]):
        source = self._frames if self._masks and self._on else self._clean
        if len(slots) == 2 and self.max_pool:
            np.maximum(source[slots[0]], source[slots[1]], out=self._pooled)
        else:
            self._pooled[:] = source[slots[-1]]
        image = self._pre(self._pooled)
        if self.obs_variant == "partial":
            return image.copy() if image is self._pooled else image
        if self.obs_variant == "oracle":
            return {"image": image.copy() if image is self._pooled else image, "oracle": self._oracle()}
        return {"image": image.copy() if image is self._pooled else image, "ram": self.ale.getRAM().copy()}

    def _oracle(self) -> np.ndarray:
        return self.ale.getRAM()[self._labels].astype(np.float32)

    def _info(self) -> dict[str, Any]:
        info = {
            "oracle": self._oracle(),
            "lives": int(self.ale.lives()),
            "episode_frame_number": int(self.ale.getEpisodeFrameNumber()),
        }
        if self.config.type == 3:
            info["concept"] = self.concept
        return info

    # --- gymnasium API -------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, "StoriEnv.reset")
        super().reset(seed=seed)
        if seed is not None:
            self._seed_sequence = np.random.SeedSequence(seed)
            self._rngs = self._spawn(self._seed_sequence)
        self._restart()
        self._step = 0
        noops = int(self._rngs["noop"].integers(self.noop_max)) if self.noop_max > 0 else 0
        for _ in range(noops):
            wrapper = self.wrapper if self._on and self.noops_through_effect else None
            if wrapper is None:
                self.ale.act(self._noop)
            else:  # as an agent's NOOP frame (the authors' DreamerV3 pipeline)
                executed = wrapper.action(self._noop_index)
                wrapper.before(self.ale)
                wrapper.after(self.ale, self.ale.act(self._actions[executed]))
            if self.ale.game_over():
                self._restart()
        self._capture(0)
        self._started, self._done = True, False
        return self._observe((0,)), self._info()

    def _restart(self) -> None:
        """ALE's reset; types 1, 2, 5 start with the episode (type 2's reference state is the RAM right after it); a
        drift's second concept starts inside a step, as in the authors' code."""
        self.ale.reset_game()
        self._start_ram = self.ale.getRAM().copy()
        self._on = False
        self._activate(self.config.type in (1, 2, 5))

    def step(self, action):
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._done:
            raise gym.error.ResetNeeded("the episode is over; call reset() before step()")
        a = int(check_action(self.action_space, action))
        self._activate(self.config.concept_on(self._step))
        wrapper = self.wrapper if self._on else None
        ale, actions, reward, slots = self.ale, self._actions, 0.0, []
        for i in range(self.frame_skip):
            if wrapper is None:
                reward += ale.act(actions[a])
            else:
                executed = wrapper.action(a)
                wrapper.before(ale)
                reward = reward + wrapper.after(ale, ale.act(actions[executed]))
            over = ale.game_over()
            if over or i >= self._first_observed:  # the frames the observation is made of (two when max-pooling)
                self._capture(len(slots))
                slots.append(len(slots))
            if over:
                break
        self._step += 1
        terminated = bool(ale.game_over(with_truncation=False))
        truncated = bool(ale.game_truncated())
        self._done = terminated or truncated
        return self._observe(tuple(slots)), float(reward), terminated, truncated, self._info()

    def render(self):
        if self.render_mode == "rgb_array":
            return self._pooled.copy()
        return None

    # --- exact resume (membench_agents.runs.envstate) -----------------------------------------------------------------
    #: The emulator lives outside Python: its state is saved through the two methods below, the rest of this
    #: object (frames, random generators, counters, the wrapper's state) as plain attributes.
    membench_external_state = ("ale",)

    def membench_get_external(self) -> dict[str, np.ndarray]:
        """The emulator's state (RAM, CPU, frame counters and its RNG) as bytes."""
        return {"ale": np.frombuffer(self.ale.cloneState(include_rng=True).serialize(), dtype=np.uint8).copy()}

    def membench_set_external(self, state: dict[str, np.ndarray]) -> None:
        state_type = type(self.ale.cloneState())  # ale_py.ALEState, without importing ale_py here
        self.ale.restoreState(state_type(np.asarray(state["ale"], dtype=np.uint8).tobytes()))
