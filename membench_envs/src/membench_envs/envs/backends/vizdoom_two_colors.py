"""ViZDoom-Two-Colors (Sorokin et al., "Explain My Surprise", NeurIPS 2022 (MemUP); MIKASA-Base's
``ViZDoomTwoColorsBase-v0`` / ``ViZDoomTwoColorsHard-v0``) on the ``vizdoom`` engine, with a scenario membench
writes itself (:mod:`membench_envs.envs.backends.vizdoom_wad`; upstream's WAD and ACS are not used).

Upstream's rules (its map, ACS script and .cfg, the same in the MemUP and MIKASA-Base repositories):

- A square room of 1280 map units, acid floor (Doom sector special 83: 8 damage every 32 tics; the first hit
  lands on tic 1, so the first observation shows 92 health). The player starts with 100 health at (-384, -640).
- A tall column (the pillar) stands on a spot of the map: green or red, drawn per episode with probability 1/2.
  Layout ``base``: 181 units straight ahead of the start (the player faces it); ``hard``: 572 units away, 63°
  to the left of the initial view direction, outside the 16:9 view (about ±53°): the agent must turn to see it.
  In both upstream maps the pillar is taken away 90 tics after the start (``pillar_tics``).
- 10 green and 10 red items lie at uniform free spots; then one green item appears at tic 90, a red one at tic 120,
  and so on every 30 tics, alternating. They are Doom's armour pickups: green is ``GreenArmor``, red is
  ``BlueArmor`` (Freedoom draws it red).
- Touching an item of the pillar's colour heals 25 (up to 100). Touching the other colour runs
  ``Thing_Damage(0, 25)`` while the player wears the armour the pickup just gave (upstream's script clears the
  inventory right after), so the armour absorbs ``int(25 * share)`` of it (ZDoom's savepercent: 33.335 % for
  green, 50 % for blue): a bad green item costs 17 health, a bad red one 13, measured on upstream's own WAD and
  reproduced by ours (``armour=True``, the default). ``armour=False`` is the papers' wording, 25 for either colour.
  So the two colours are not symmetric upstream: a bad red item hurts less, and episodes last longer than
  with 25.
- The episode ends when the player dies (``terminated``) or at tic 2100 (``truncated``; upstream's ``done``).
- Reward per step: 0.01 per tic played (upstream's ``living_reward``) plus, with ``reward_mode="items"``
  (default; MemUP's ``use_shaping=True`` and both papers' wording), +1 per item of the pillar's colour and -1 per
  other item; with ``reward_mode="health"`` (MIKASA-Base's class default, ``use_shaping=False``) +1 on a step whose
  health rose and nothing for a bad item.
- Steps repeat the action ``frame_skip`` tics: 2 in MemUP's training (the papers' "pillar gone after 45 steps":
  observation k is tic 1 + 2k, the pillar shows in observations 0 ... 44), 4 in MIKASA-Base's class default.
- Layout ``delay`` (MIKASA-Base's ``ViZDoomTwoColorsDelay1000-v0``, upstream's ``two_colors_delay_1000``): the
  player starts in a 608x256 cue room without acid, the pillar 320 units ahead; after 100 tics (observation 50 at
  frame skip 2) it is moved to the acid room, facing east, where 20 medikits lie and one more appears every 50
  tics (+0.1 each with ``reward_mode="items"``); after ``delay_tics`` (2000) more tics it is moved to a choice
  room with a green and a red vest 128 units ahead. Touching a vest ends the episode (``terminated``, on the
  engine's tic after the touch, which can be the next step): +5 and ``success`` for the pillar's colour, 0
  otherwise. Living reward 0, timeout 2300 tics.
- Actions: Discrete(8) over TURN_LEFT, TURN_RIGHT, MOVE_FORWARD, MOVE_BACKWARD: 0 left, 1 right, 2 forward,
  3 backward, 4 left+forward, 5 left+backward, 6 right+forward, 7 right+backward (upstream's list).

Observation (``partial``): ``{"image", "health"}``. ``"image"``: uint8 (64, 112, 3), the 320x180 screen (no HUD,
weapon or crosshair) area-averaged to 112x64 (upstream's size; upstream returns it channel-first, here
channel-last). ``"health"``: float32 (1,), the player's health (upstream's ``obs["health"]``, a float there), in
every variant. After the last step the image is black and the health 0, as upstream's. Upstream's third key,
``"shaping_reward"`` (its ACS variable USER1), is left out of every variant on purpose: it is the running item
score (+1 per good item, -1 per bad one), a counter that carries the item history into every observation, so
the step after touching an item it tells which colour is good (the fact the task asks the agent to remember)
without any memory; the reward already gives each item's sign to an agent that remembers it. ``oracle`` adds
``"oracle"``: Discrete(2), the pillar's colour (0 green, 1 red; upstream's ``is_red``) - what the agent must
remember once the pillar is gone. ``full`` adds the Markov state: ``"good_colour"`` (the same), ``"player"`` (x, y
in map units, angle in degrees, health), ``"pillar"`` (1 while the pillar stands), ``"items"`` (one row per item
slot: present, x, y, kind (0 green, 1 red, 2 medikit), in spawn order, zero rows for absent ones) and ``"time"``
(tic / episode_timeout). ``info`` has
``"oracle"``, ``"health"`` and the step's ``"good_items"`` / ``"bad_items"`` picked up (delay layout:
``"medikits"`` and ``"good_items"``, the right vest).

Differences from upstream, on purpose: item spots are whole map units (upstream: fixed-point); the colour of an
episode comes from the environment's seed and the engine's random numbers (item spots) from a seed drawn from it,
so ``reset(seed=s)`` repeats an episode exactly (upstream cannot seed per episode).

Measured with a memoryless scripted policy heading for the nearest item of one colour (layout ``hard``, 8 seeds,
300 steps): return 10.97 with the oracle's colour vs 2.69 always taking green.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.vizdoom import IDS, PARAMS, steps_per_episode
from membench_envs.envs.backends import vizdoom_wad as wad
from membench_envs.envs.core.native import check_can_step, check_render_mode
from membench_envs.envs.core.params import check_kwargs, check_seed

SCREEN = (180, 320)  # the engine's screen, rows x columns
IMAGE = (64, 112)  # the observation, rows x columns (upstream's 112x64)
#: Upstream's 8 button combinations over (TURN_LEFT, TURN_RIGHT, MOVE_FORWARD, MOVE_BACKWARD).
ACTIONS = (
    (1, 0, 0, 0),
    (0, 1, 0, 0),
    (0, 0, 1, 0),
    (0, 0, 0, 1),
    (1, 0, 1, 0),
    (1, 0, 0, 1),
    (0, 1, 1, 0),
    (0, 1, 0, 1),
)
ACTION_NAMES = (
    "left",
    "right",
    "forward",
    "backward",
    "left+forward",
    "left+backward",
    "right+forward",
    "right+backward",
)
GREEN, RED, MEDIKIT = 0, 1, 2  # item kinds in the full state
#: "items" rewards per engine counter (AMMO2: good events, ITEMCOUNT: other events), per layout.
ITEM_REWARDS = {"base": (1.0, -1.0), "hard": (1.0, -1.0), "delay": (5.0, 0.1)}


def area_weights(n_out: int, n_in: int) -> np.ndarray:
    """(n_out, n_in) weights of an area-average resize: each output pixel averages the input span it covers."""
    scale = n_in / n_out
    edges = np.arange(n_out + 1) * scale
    lo, hi = edges[:-1, None], edges[1:, None]
    j = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0.0, None)
    return (overlap / scale).astype(np.float32)


def max_items(layout: str, episode_timeout: int, delay_tics: int) -> int:
    """Items that can lie in the map at once: the initial ones plus one per spawn before the end."""
    if layout == "delay":
        return wad.MEDIKITS + delay_tics // wad.MEDIKIT_EVERY + len(wad.VESTS)
    later = max(0, -(-(episode_timeout - wad.FIRST_SPAWN_TICS) // wad.SPAWN_EVERY))
    return 2 * wad.INITIAL_ITEMS + later


class ViZDoomTwoColors(gym.Env):
    """ViZDoom-Two-Colors. Kwargs: see ``catalogue.vizdoom.PARAMS``."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 35}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        p = check_kwargs("ViZDoomTwoColors", PARAMS, kwargs)
        self.render_mode = check_render_mode(render_mode, tuple(self.metadata["render_modes"]))
        self.obs_variant = p["obs_variant"]
        self.layout = p["layout"]
        self.frame_skip = p["frame_skip"]
        self.pillar_tics = p["pillar_tics"]
        self.reward_mode = p["reward_mode"]
        self.living_reward = p["living_reward"]
        self.episode_timeout = p["episode_timeout"]
        self.delay_tics = p["delay_tics"]
        self.armour = p["armour"]
        self.T = steps_per_episode(self.frame_skip, self.episode_timeout)
        self.n_items = max_items(self.layout, self.episode_timeout, self.delay_tics)
        self._item_rewards = ITEM_REWARDS[self.layout]

        image = gym.spaces.Box(0, 255, (*IMAGE, 3), np.uint8)
        colour = gym.spaces.Discrete(2)
        spaces: dict[str, gym.Space] = {"image": image, "health": gym.spaces.Box(0.0, 100.0, (1,), np.float32)}
        if self.obs_variant == "oracle":
            spaces["oracle"] = colour
        elif self.obs_variant == "full":
            spaces.update(
                good_colour=colour,
                player=gym.spaces.Box(
                    np.array([-2000, -2000, 0, -200], np.float32), np.array([2000, 2000, 360, 200], np.float32)
                ),
                pillar=gym.spaces.Discrete(2),
                items=gym.spaces.Box(
                    np.tile(np.array([0, -2000, -2000, 0], np.float32), (self.n_items, 1)),
                    np.tile(np.array([1, 2000, 2000, 2], np.float32), (self.n_items, 1)),
                ),
                time=gym.spaces.Box(0.0, 1.0, (1,), np.float32),
            )
        self.observation_space = gym.spaces.Dict(spaces)
        self.action_space = gym.spaces.Discrete(len(ACTIONS))

        self._vzd = require("vizdoom", "vizdoom", env_id=IDS[self.layout])
        self._wy, self._wx = area_weights(IMAGE[0], SCREEN[0]), area_weights(IMAGE[1], SCREEN[1])
        self._actions = [list(a) for a in ACTIONS]
        self.game: Any = None  # a vizdoom.DoomGame once started
        self._started = self._done = False
        self.good = GREEN
        self._screen = np.zeros((*SCREEN, 3), dtype=np.uint8)

    # --- the engine ----------------------------------------------------------------------------------------------
    def _init_game(self):
        vzd = self._vzd
        game = vzd.DoomGame()
        game.set_doom_scenario_path(str(wad.scenario_path(self.layout, self.pillar_tics, self.delay_tics, self.armour)))
        game.set_doom_map("map01")
        game.set_doom_config_path(str(wad.cache_dir() / "_vizdoom.ini"))  # not the working directory
        game.set_screen_resolution(vzd.ScreenResolution.RES_320X180)
        game.set_screen_format(vzd.ScreenFormat.RGB24)
        for setting in ("hud", "crosshair", "weapon", "decals", "particles"):
            getattr(game, f"set_render_{setting}")(False)
        game.set_window_visible(False)
        game.set_sound_enabled(False)
        game.set_available_buttons(
            [vzd.Button.TURN_LEFT, vzd.Button.TURN_RIGHT, vzd.Button.MOVE_FORWARD, vzd.Button.MOVE_BACKWARD]
        )
        V = vzd.GameVariable
        game.set_available_game_variables([V.HEALTH, V.POSITION_X, V.POSITION_Y, V.ANGLE, V.AMMO2, V.ITEMCOUNT])
        game.set_objects_info_enabled(self.obs_variant == "full")
        game.set_living_reward(self.living_reward)
        game.set_episode_timeout(self.episode_timeout)
        game.set_mode(vzd.Mode.PLAYER)
        game.init()
        self.game = game

    def _counts(self) -> tuple[float, int, int]:
        """Health, the good items (delay: the right vest) and the other items (bad ones; delay: medikits) picked
        up so far: engine counters (AMMO2, ITEMCOUNT), readable after the episode's end too."""
        V, get = self._vzd.GameVariable, self.game.get_game_variable
        return get(V.HEALTH), int(get(V.AMMO2)), int(get(V.ITEMCOUNT))

    def _read(self):
        """Engine state -> player (x, y, angle), the items {actor id: (x, y, kind)}, pillar standing (the last two
        only with ``full``, which turns the engine's object list on); keeps the screen."""
        state = self.game.get_state()
        _, x, y, angle = (float(v) for v in state.game_variables[:4])
        items, pillar = {}, False
        for obj in state.objects or ():
            name = obj.name
            if name.startswith("TwoColorsPillar"):
                pillar = True
            elif name == "TwoColorsMedikit":
                items[obj.id] = (obj.position_x, obj.position_y, MEDIKIT)
            elif name.endswith(("Good", "Bad")) and name.startswith("TwoColors"):
                items[obj.id] = (obj.position_x, obj.position_y, RED if "Red" in name else GREEN)
        self._screen = state.screen_buffer
        return (x, y, angle), items, pillar

    def _image(self) -> np.ndarray:
        if self._done:
            return np.zeros((*IMAGE, 3), dtype=np.uint8)
        screen = self._screen.astype(np.float32).reshape(SCREEN[0], -1)
        rows = (self._wy @ screen).reshape(IMAGE[0], SCREEN[1], 3)  # (64, 320, 3)
        columns = self._wx @ rows.transpose(1, 0, 2).reshape(SCREEN[1], -1)  # (112, 64 * 3): one product
        return (columns.reshape(IMAGE[1], IMAGE[0], 3).transpose(1, 0, 2) + 0.5).astype(np.uint8)

    def _observe(self) -> dict[str, np.ndarray]:
        # upstream's "health": the engine's health, 0 once the episode is over (as its black image)
        health = 0.0 if self._done else min(max(self._health, 0.0), 100.0)
        obs = {"image": self._image(), "health": np.array([health], dtype=np.float32)}
        if self.obs_variant == "oracle":
            obs["oracle"] = np.int64(self.good)
        elif self.obs_variant == "full":
            items = np.zeros((self.n_items, 4), dtype=np.float32)
            for row, key in enumerate(sorted(self._items)[: self.n_items]):
                ix, iy, kind = self._items[key]
                items[row] = (1.0, ix, iy, kind)
            x, y, angle = self._player
            obs.update(
                good_colour=np.int64(self.good),
                player=np.array([x, y, angle, self._health], dtype=np.float32),
                pillar=np.int64(self._pillar),
                items=items,
                time=np.array([min(1.0, self._tic / self.episode_timeout)], dtype=np.float32),
            )
        return obs

    def _info(self) -> dict[str, Any]:
        return {"oracle": np.int64(self.good), "health": self._health}

    # --- gymnasium -----------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, "ViZDoomTwoColors.reset")
        super().reset(seed=seed)
        if self.game is None:
            self._init_game()
        self.good = int(self.np_random.integers(2))
        self.game.set_doom_map(f"map0{self.good + 1}")
        self.game.set_seed(int(self.np_random.integers(2**31 - 1)))
        self.game.new_episode()
        self._started, self._done = True, False
        self._health, self._good_count, self._other_count = self._counts()
        self._good_at_start = self._good_count  # AMMO2 starts at the pistol's 50 bullets
        self._player, self._items, self._pillar = self._read()
        self._tic = self.game.get_episode_time()
        return self._observe(), self._info()

    def step(self, action):
        check_can_step(self._started, self._done)
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            arr = np.asarray(action)
            if arr.shape != () or arr.dtype.kind not in "iu":
                raise ValueError(f"action {action!r} is not an integer in the action space {self.action_space}")
            action = int(arr)
        if not 0 <= action < len(ACTIONS):
            raise ValueError(f"action {action!r} is outside the action space {self.action_space}")
        before_health, before_good, before_other = self._health, self._good_count, self._other_count
        reward = self.game.make_action(self._actions[int(action)], self.frame_skip)
        finished = self.game.is_episode_finished()
        self._health, self._good_count, self._other_count = self._counts()
        self._tic = self.game.get_episode_time()
        if finished:
            self._done = True
            self._pillar, self._items = False, {}
            # else the player died, or took a vest (the delay layout's map exit): terminated
            timed_out = not self.game.is_player_dead() and self._tic > self.episode_timeout
        else:
            self._player, self._items, self._pillar = self._read()
        good, other = self._good_count - before_good, self._other_count - before_other
        if self.reward_mode == "items":
            reward += good * self._item_rewards[0] + other * self._item_rewards[1]
        elif self._health > before_health:
            reward += 1.0
        obs = self._observe()
        info = self._info()
        if self.layout == "delay":
            info.update(medikits=other, good_items=good)
        else:
            info.update(good_items=good, bad_items=other)
        if finished:
            # base / hard: survived to the timeout; delay: took the vest of the pillar's colour
            info["success"] = self._good_count > self._good_at_start if self.layout == "delay" else timed_out
            return obs, float(reward), not timed_out, timed_out, info
        return obs, float(reward), False, False, info

    def render(self):
        """``"rgb_array"``: the engine's last 320x180 screen (uint8, HWC); None without a render mode."""
        if self.render_mode == "rgb_array":
            return np.array(self._screen, dtype=np.uint8)
        return None

    def close(self):
        if self.game is not None:
            self.game.close()
            self.game = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass
