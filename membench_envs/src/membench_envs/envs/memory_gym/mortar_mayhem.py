"""Mortar Mayhem (Pleines et al., "Memory Gym: Towards Endless Tasks to Benchmark Memory Capabilities of Agents",
2023/2025; the ``memory-gym`` package that MIKASA-Base lists), re-implemented in numpy with the authors' rules,
timing, random draws and pictures (no pygame: :mod:`~membench_envs.envs.memory_gym.common` rasterises them as
pygame does).

Arena. ``arena_size`` x ``arena_size`` tiles of 14 x 14 pixels, centred on a black 84 x 84 screen (5 x 5: the
pixels 7 … 76). Tile (x, y) is column x, row y. The agent starts at the centre of a uniformly drawn tile.

Command phase. A sequence of ``command_count`` commands is drawn, each uniform among the first
``allowed_commands`` of (right, down, left, up, stay, right_down, right_up, left_down, left_up) that keep the
target inside the arena. Command k is drawn in the middle of the screen (a white arrow, or a crossed circle for
"stay") in observations k·P … k·P + ``command_show_duration`` − 1, with P = duration + ``command_show_delay``;
observations in between show no command. The agent cannot move: the phase lasts count·P − 1 steps (the reset
observation is its first frame). The B variants (``show_commands=False``) have no command phase: the whole
sequence is in the observation from the start as the authors' one-hot vector (``MortarMayhemB-v0`` also starts
the agent up to 2 pixels off its tile's centre, ``spawn_jitter``).

Execution phase. The agent moves from the first step after the command phase. Every command has
``explosion_delay`` steps to reach its target tile (the previous target moved by the command); then every other
tile turns red for ``explosion_duration`` steps (``visual_feedback``) while the target stays blue. Being off the
target when the tiles turn red, or stepping off it while they are red, ends the episode (reward
``reward_command_failure`` = 0); being on it gives ``reward_command_success`` = +0.1. After the last command the
episode ends with ``reward_episode_success`` (0) and ``success``. The authors' step counting: the first
verification comes ``explosion_delay`` + 1 steps into the phase, the next ones every ``explosion_delay`` +
``explosion_duration`` steps (Grid: 7, 15, …, 79; default: 19, 43, …, 235), so a perfect episode lasts
T = count·P − 1 + (delay + 1) + (count − 1)(delay + duration) steps (Grid 118, default 274, B-Grid 79, B 235).
Nothing truncates an episode (the authors return ``truncated=False`` always). ``success`` is reported only when
the last command is executed (the authors also report it when the last command fails).

Endless (``endless=True``, continuous only; memory-gym 1.0.2's ``Endless-MortarMayhem-v0``: MIKASA-Base registers
that ID with an entry point module, ``mikasa_base.MemoryGym.env.endless_mortar_mayhem``, that its repository lacks,
so memory-gym's is the only code there is). One command (any of the allowed ones; targets wrap around the
arena) is shown, then executed; each time the whole sequence is done, one new command is drawn and shown alone
(the tiles stay red while it is shown) and the whole sequence is executed again from the agent's tile. The
agent moves at 3 pixels a step (diagonals 3/√2, its centre truncated towards zero) and leaves the screen to come
back on the other side (beyond 3 pixels off it). No success; the authors' optional ``max_steps`` truncates here
(they terminate), and so does a sequence longer than ``max_commands`` (100), the oracle's capacity. The authors
draw the previous episode's agent sprite during the first command phase after a reset; here it is where it is.

Movement. Grid (``grid=True``): Discrete(4), 0 = stay, 1 = turn left, 2 = turn right, 3 = one tile forward
(blocked at the arena's edge); the agent starts facing up. Continuous (``grid=False``): MultiDiscrete([3, 3]),
(horizontal: 0 none, 1 left, 2 right; vertical: 0 none, 1 up, 2 down), 3 pixels per step, diagonals
int(3 / √2) = 2 pixels per axis, the agent's centre kept ≥ 6 pixels inside the arena; the agent faces its last
move (8 directions). Its tile is the one under its centre.

Observation (``partial``): the authors' 84 x 84 RGB screen, uint8 (84, 84, 3), rows top to bottom (the
orientation of their ``render()``; their ``step`` returns the transpose, pygame's x-major ``array3d``). The B
variants return ``{"image", "commands_one_hot"}``: the authors' ``(180,)`` float32 vector (20 commands x 9, in
their order stay, right, left, up, down, right_down, right_up, left_down, left_up). ``oracle`` adds
``"oracle"``: the commands shown so far (code + 1, codes in the command order above: 0 = right … 8 = left_up;
0 = not shown yet / none), the index of the
command being executed (the number verified so far) and its target tile (x, y): what a perfect memory holds
(the target is where the remembered command leads from the remembered previous target; a memoryless policy
cannot tell whether it has already moved for the current command). ``full`` adds the Markov state: ``"agent"``
(centre pixel x, y), ``"rotation"`` (0 … 7, 45° steps, 0 = up, counter-clockwise), ``"tiles_on"`` and
``"timers"`` (command frames left, execution step, explosion step, each scaled to [0, 1]). ``info["oracle"]`` is
the oracle vector in every variant.

Randomness is the authors': environment i of a batch reset with seed s draws from ``numpy.random.default_rng(s +
i)`` exactly what ``memory_gym`` draws after ``reset(seed=s + i)`` (tile, count, commands, show duration and
delay, explosion duration and delay, in their order), so seeds give the same episodes as the reference.

One core steps N environments with numpy; a single environment is the same core with N = 1. (A scalar copy of the
step rules for N = 1 made the single env only 1.3-1.8x faster, below the 2x a second copy must buy, so it went.)
The tests play the batched env against single envs and both against ``memory_gym``.

Tested step for step against memory-gym 1.0.2 on every preset (commands, rewards, ends, agent positions and the
84 x 84 pixels, the diagonal arrows and the 8 agent orientations of the continuous versions included). Measured
(10 seeds, memoryless scripted policies): success 1.00 with ``oracle`` on Grid, continuous and B-Grid; 0.05 / 0.06 /
0.05 on the picture alone (it can only stand still).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.memory_gym.common import (
    AGENT_RADIUS,
    AGENT_SPRITE,
    FREE_FACING,
    FREE_STEP,
    FREE_VELOCITY,
    GRID_FACING,
    GRID_STEP,
    SCALE,
    SCREEN,
    MemoryGymCore,
    MemoryGymEnv,
    MemoryGymVectorEnv,
    Sprites,
    agent_sprites,
    flat_canvas,
    framed_view,
    pixel_tile,
    ring,
    rotate,
    thick_line,
    tile_centre,
)

#: The B variants' one-hot vector holds 20 commands (the authors' ``max_num_commands``).
MAX_B_COMMANDS = 20
#: Endless Mortar Mayhem: the oracle's capacity, and the sequence length at which an episode is truncated (the
#: authors' sequence grows without bound; a perfect agent needs about 120k steps to reach 100 commands).
ENDLESS_MAX_COMMANDS = 100
#: The most commands an episode may hold (command_count, max_commands): each environment keeps an array of that
#: many and the oracle observation is that long (a bound, so that command_count=[10**9] is refused, not allocated).
MAX_COMMANDS = 1000
#: The most entries of a "drawn from this list" kwarg.
MAX_CHOICES = 100

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "grid",
        "bool",
        True,
        doc="grid movement (Discrete(4): stay, turn left, turn right, forward) instead of "
        "continuous movement (MultiDiscrete([3, 3]), 3 pixels a step)",
    ),
    Param(
        "show_commands",
        "bool",
        True,
        doc="show the commands one by one before the execution (False: task B, "
        "the whole sequence as a one-hot vector in every observation, no command phase)",
    ),
    Param("arena_size", "int", 5, low=2, high=6, doc="tiles per side"),
    Param(
        "allowed_commands",
        "int",
        5,
        low=4,
        high=9,
        doc="the first k of right, down, left, up, stay, right_down, right_up, left_down, left_up",
    ),
    Param(
        "command_count",
        "ints",
        (10,),
        low=1,
        high=MAX_COMMANDS,
        max_length=MAX_CHOICES,
        doc="commands per episode, drawn from this list",
    ),
    Param(
        "command_show_duration",
        "ints",
        (3,),
        low=1,
        max_length=MAX_CHOICES,
        doc="observations showing each command (drawn from the list)",
    ),
    Param(
        "command_show_delay",
        "ints",
        (1,),
        low=0,
        max_length=MAX_CHOICES,
        doc="blank observations after each command (drawn from the list)",
    ),
    Param(
        "explosion_duration",
        "ints",
        (2,),
        low=1,
        max_length=MAX_CHOICES,
        doc="steps the other tiles stay red (drawn from the list)",
    ),
    Param(
        "explosion_delay",
        "ints",
        (6,),
        low=1,
        max_length=MAX_CHOICES,
        doc="steps to reach each target tile (drawn from the list)",
    ),
    Param(
        "spawn_jitter",
        "int",
        0,
        low=0,
        high=6,
        doc="the agent starts up to this many pixels off its tile's "
        "centre (each axis uniform in [-j, j)); MortarMayhemB-v0 uses 2",
    ),
    Param(
        "endless",
        "bool",
        False,
        doc="Endless Mortar Mayhem: after each round one more command is shown and the "
        "whole sequence is executed again from where the agent stands; targets wrap around the arena (needs "
        "grid=False, show_commands=True; command_count is the initial count)",
    ),
    Param(
        "max_commands",
        "int",
        None,
        low=1,
        high=MAX_COMMANDS,
        none_ok=True,
        doc="endless only: the oracle's capacity; the episode is truncated when the sequence would grow beyond it "
        "(None: 100)",
    ),
    Param(
        "max_steps",
        "int",
        None,
        low=1,
        none_ok=True,
        doc="endless only: truncate after this many steps (None: never, the authors' max_steps = -1)",
    ),
    Param("visual_feedback", "bool", True, doc="turn the other tiles red while they explode"),
    Param("reward_command_failure", "float", 0.0, doc="reward when a command fails (the episode ends)"),
    Param("reward_command_success", "float", 0.1, doc="reward per command executed"),
    Param("reward_episode_success", "float", 0.0, doc="extra reward when the last command is executed"),
)


def episode_length(
    count: int, show_duration: int, show_delay: int, explosion_delay: int, explosion_duration: int
) -> int:
    """T: the steps of a perfect episode, the longest there is (nothing truncates): the command phase
    (count · (duration + delay) frames, the reset shows the first), the first verification explosion_delay + 1
    steps into the execution and the others every explosion_delay + explosion_duration steps."""
    frames = count * (show_duration + show_delay)
    return max(frames - 1, 0) + explosion_delay + 1 + (count - 1) * (explosion_delay + explosion_duration)


TILE = int(56 * SCALE)  #: 14: pixels per arena tile

#: The authors' commands, in their order (the first ``allowed_commands`` are used): (dx, dy) on the tiles.
COMMANDS = ("right", "down", "left", "up", "stay", "right_down", "right_up", "left_down", "left_up")
COMMAND_MOVES = np.array([(1, 0), (0, 1), (-1, 0), (0, -1), (0, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=np.int64)
#: The arrows' rotation (degrees, counter-clockwise) of the right-pointing arrow; "stay" has its own symbol.
COMMAND_ANGLES = {
    "right": 0,
    "left": 180,
    "down": 270,
    "up": 90,
    "right_down": 315,
    "right_up": 45,
    "left_down": 225,
    "left_up": 135,
}
#: The position of each command in the authors' one-hot vector of the B variants.
ONE_HOT_ORDER = ("stay", "right", "left", "up", "down", "right_down", "right_up", "left_down", "left_up")
ONE_HOT_INDEX = np.array([ONE_HOT_ORDER.index(c) for c in COMMANDS], dtype=np.int64)

TILE_BLUE, TILE_BLUE_EDGE = (21, 43, 77), (29, 60, 107)
TILE_RED, TILE_RED_EDGE = (81, 18, 26), (112, 24, 36)
COMMAND_RGB = (255, 255, 255)


def command_symbol(command: str) -> np.ndarray:
    """The authors' 22 x 22 command picture (arrows rotated with pygame's rotate, so diagonals are 31 x 31)."""
    dim = int(88 * SCALE)
    mask = np.zeros((dim, dim), dtype=bool)
    width = int(8 * SCALE)
    if command == "stay":
        radius = dim // 2 - 4 * SCALE
        ring(mask, radius, radius, radius, width)
        y = dim // 2 - 8 * SCALE
        thick_line(mask, (0, y), (dim - 12 * SCALE, y), width)
        return mask
    x1, x2, y1 = 2 * SCALE, 80 * SCALE, 40 * SCALE
    thick_line(mask, (x1, y1), (x2, y1), width)
    thick_line(mask, (x2, y1), (y1, 0), width)
    thick_line(mask, (x2, y1), (y1, x2), width)
    return rotate(mask, COMMAND_ANGLES[command])


def _command_screens() -> np.ndarray:
    """(9, 84, 84) masks of each command symbol where the authors blit it: its top-left corner at the screen's
    centre minus half the unrotated size (so the larger diagonal arrows sit off-centre, as upstream)."""
    out = np.zeros((len(COMMANDS), SCREEN, SCREEN), dtype=bool)
    corner = SCREEN // 2 - int(88 * SCALE) // 2
    for k, name in enumerate(COMMANDS):
        symbol = command_symbol(name)
        h, w = symbol.shape
        out[k, corner : corner + h, corner : corner + w] = symbol[: SCREEN - corner, : SCREEN - corner]
    return out


def _arena_screens(size: int) -> np.ndarray:
    """(1 + size², 84² + 1, 3), flat pictures as :func:`flat_canvas` makes them: the arena with every tile
    blue, then with every tile but (x, y) red, at index 1 + x·size + y."""
    left = SCREEN // 2 - TILE * size // 2
    flat, screens = flat_canvas(1 + size * size)
    for k in range(1 + size * size):
        for x in range(size):
            for y in range(size):
                red = k > 0 and k - 1 != x * size + y
                fill, edge = (TILE_RED, TILE_RED_EDGE) if red else (TILE_BLUE, TILE_BLUE_EDGE)
                px, py = left + x * TILE, left + y * TILE
                tile = screens[k, py : py + TILE, px : px + TILE]
                tile[:] = edge
                tile[1:-1, 1:-1] = fill
    return flat


_AGENT = Sprites(*agent_sprites())
_COMMAND_SCREENS = _command_screens()


def _command_pixels() -> np.ndarray:
    """(10, k) flat pixel indices of each command's white pixels (row 9: none), padded with the spare index."""
    masks = _COMMAND_SCREENS.reshape(len(COMMANDS), -1)
    count = int(masks.sum(axis=1).max())
    out = np.full((len(COMMANDS) + 1, count), SCREEN * SCREEN, dtype=np.int64)
    for k, m in enumerate(masks):
        idx = np.flatnonzero(m)
        out[k, : idx.size] = idx
    return out


_COMMAND_PIXELS = _command_pixels()
_NO_COMMAND = len(COMMANDS)


class MortarMayhemCore(MemoryGymCore):
    PARAMS = PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        grid: bool,
        show_commands: bool,
        arena_size: int,
        allowed_commands: int,
        command_count: tuple[int, ...],
        command_show_duration: tuple[int, ...],
        command_show_delay: tuple[int, ...],
        explosion_duration: tuple[int, ...],
        explosion_delay: tuple[int, ...],
        visual_feedback: bool,
        reward_command_failure: float,
        reward_command_success: float,
        reward_episode_success: float,
        spawn_jitter: int,
        endless: bool,
        max_commands: int | None,
        max_steps: int | None,
    ):
        super().__init__(num_envs)
        if endless and (grid or not show_commands):
            raise ValueError(
                "MortarMayhem: endless=True needs grid=False and show_commands=True (the authors' "
                "Endless Mortar Mayhem moves continuously and shows each new command)"
            )
        if not show_commands and max(command_count) > MAX_B_COMMANDS:
            raise ValueError(
                f"MortarMayhem: command_count={command_count!r} is not allowed with "
                f"show_commands=False; the one-hot vector holds at most {MAX_B_COMMANDS} commands"
            )
        self.grid, self.show_commands = bool(grid), bool(show_commands)
        self.size, self.allowed = int(arena_size), int(allowed_commands)
        self.command_count = tuple(command_count)
        self.show_duration, self.show_delay = tuple(command_show_duration), tuple(command_show_delay)
        self.explosion_duration, self.explosion_delay = tuple(explosion_duration), tuple(explosion_delay)
        self.visual_feedback = bool(visual_feedback)
        self.r_fail, self.r_ok = float(reward_command_failure), float(reward_command_success)
        self.r_done = float(reward_episode_success)
        self.jitter = int(spawn_jitter)
        self.endless = bool(endless)
        self.max_steps = max_steps
        if self.endless:  # the sequence grows by one command a round: the oracle holds up to max_commands
            self.max_commands = int(max_commands or ENDLESS_MAX_COMMANDS)
            self.T = max_steps
        else:
            self.max_commands = MAX_B_COMMANDS if not show_commands else max(self.command_count)
            self.T = episode_length(
                max(self.command_count),
                max(self.show_duration) if show_commands else 0,
                max(self.show_delay) if show_commands else 0,
                max(self.explosion_delay),
                max(self.explosion_duration),
            )
        self.left = SCREEN // 2 - TILE * self.size // 2  # the arena's first pixel (x and y)
        self._arena = _arena_screens(self.size)
        n, m = num_envs, self.max_commands
        self.commands = np.zeros((n, m), dtype=np.int64)
        self.num = np.ones(n, dtype=np.int64)
        self.period = np.ones(n, dtype=np.int64)  # command frames: show duration + delay
        self.duration = np.ones(n, dtype=np.int64)  # command show duration
        self.frames = np.zeros(n, dtype=np.int64)  # command-phase frames in all (num · period)
        self.shown = np.zeros(n, dtype=np.int64)  # command-phase frames shown so far (the reset shows the first)
        self.first_shown = np.zeros(n, dtype=np.int64)  # the command of the phase's first frame (endless: the new one)
        self.done_total = np.zeros(n, dtype=np.int64)  # commands executed in the episode (endless: over all rounds)
        self.in_command_phase = np.zeros(n, dtype=bool)  # the last observation is a command-phase frame
        self.pos = np.zeros((n, 2), dtype=np.int64)  # the agent's centre pixel (x, y)
        self.rot = np.zeros(n, dtype=np.int64)  # facing, in 45° steps counter-clockwise from up
        self.current = np.zeros(n, dtype=np.int64)  # commands verified so far
        self.cmd_steps = np.zeros(n, dtype=np.int64)
        self.verify_step = np.zeros(n, dtype=np.int64)
        self.tiles_on = np.zeros(n, dtype=bool)
        self.target = np.zeros((n, 2), dtype=np.int64)
        self.ex_duration = np.ones(n, dtype=np.int64)
        self.ex_delay = np.ones(n, dtype=np.int64)
        self._rows = np.arange(n)
        self._pictures: dict[tuple[int, ...], np.ndarray] = {}

        self.action_space = gym.spaces.Discrete(4) if self.grid else gym.spaces.MultiDiscrete([3, 3])
        image = gym.spaces.Box(0, 255, (SCREEN, SCREEN, 3), np.uint8)
        partial: dict[str, gym.Space] = {"image": image}
        if not self.show_commands:
            partial["commands_one_hot"] = gym.spaces.Box(0.0, 1.0, (MAX_B_COMMANDS * 9,), np.float32)
        oracle_space = gym.spaces.MultiDiscrete([len(COMMANDS) + 1] * m + [m + 1, self.size, self.size])
        oracle = {**partial, "oracle": oracle_space}
        self.obs_spaces = {
            "partial": gym.spaces.Dict(partial) if len(partial) > 1 else image,
            "oracle": gym.spaces.Dict(oracle),
            "full": gym.spaces.Dict(
                {
                    **oracle,
                    "agent": gym.spaces.Box(0, SCREEN, (2,), np.int64),
                    "rotation": gym.spaces.Discrete(8),
                    "tiles_on": gym.spaces.Discrete(2),
                    "timers": gym.spaces.Box(0.0, 1.0, (3,), np.float32),
                }
            ),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def tile_of(self, pos: np.ndarray) -> np.ndarray:
        """The tile (x, y) under each centre pixel (pos - left) // 14 (may lie outside the arena)."""
        return pixel_tile(pos, TILE, self.left)

    def _valid_commands(self, x: int, y: int) -> list[int]:
        moves = COMMAND_MOVES[: self.allowed] + (x, y)
        return list(np.flatnonzero(((moves >= 0) & (moves < self.size)).all(axis=1)))

    def _new_episodes(self, idx):
        for i in np.atleast_1d(idx):
            self._draw_episode(int(i), self.generator(int(i)))

    def _draw_episode(self, i: int, rng: np.random.Generator) -> None:
        flat = int(rng.integers(0, self.size**2))
        x, y = flat // self.size, flat % self.size
        offset = rng.integers(-self.jitter, self.jitter, 2) if self.jitter else np.zeros(2, dtype=np.int64)
        if self.endless:  # one command, any of the allowed ones (the target wraps around)
            num = int(self.command_count[0])
            commands = [int(c) for c in rng.integers(0, self.allowed, num)]
        else:
            num = int(rng.choice(list(self.command_count)))
            commands = []
            cx, cy = x, y
            for _ in range(num):
                valid = self._valid_commands(cx, cy)
                c = int(valid[rng.integers(0, len(valid))])
                commands.append(c)
                cx, cy = cx + COMMAND_MOVES[c][0], cy + COMMAND_MOVES[c][1]
        if self.show_commands:
            duration = int(rng.choice(list(self.show_duration)))
            delay = int(rng.choice(list(self.show_delay)))
        else:
            duration = delay = 0
        self.ex_duration[i] = int(rng.choice(list(self.explosion_duration)))
        self.ex_delay[i] = int(rng.choice(list(self.explosion_delay)))
        self.commands[i] = 0
        self.commands[i, :num] = commands
        self.num[i] = num
        self.duration[i], self.period[i] = duration, duration + delay
        self.frames[i] = num * (duration + delay)
        self.shown[i] = 1 if self.show_commands else 0
        self.first_shown[i] = self.done_total[i] = 0
        self.in_command_phase[i] = self.show_commands
        self.pos[i] = tile_centre((x, y), TILE, self.left) + offset
        self.rot[i] = 0
        self.current[i] = self.cmd_steps[i] = self.verify_step[i] = 0
        self.tiles_on[i] = False
        self.target[i] = ((x, y) + COMMAND_MOVES[commands[0]]) % self.size

    # --- dynamics ----------------------------------------------------------------------------------------------
    def _move(self, rows: np.ndarray, actions: np.ndarray) -> None:
        pos, rot = self.pos[rows], self.rot[rows]
        if self.grid:
            tile = np.clip(self.tile_of(pos) + GRID_STEP[rot, actions], 0, self.size - 1)
            pos = tile_centre(tile, TILE, self.left)
            rot = GRID_FACING[rot, actions]
        else:
            a = actions[:, 0] * 3 + actions[:, 1]
            rot = FREE_FACING[rot, a]
            if self.endless:  # float velocity, the centre truncated towards zero; beyond 3 pixels off the screen
                pos = np.trunc(pos + FREE_VELOCITY[a]).astype(np.int64)  # it comes back on the other side
                low, high = self.left - AGENT_RADIUS // 2, self.left + TILE * self.size + AGENT_RADIUS // 2
                pos = np.where(pos > high, low, np.where(pos < low, high, pos))
            else:  # velocity truncated to ints (diagonals 2 pixels per axis), the centre kept inside the arena
                lo, hi = self.left + AGENT_RADIUS, self.left + TILE * self.size - AGENT_RADIUS
                pos = np.clip(pos + FREE_STEP[a], lo, hi)
        self.pos[rows], self.rot[rows] = pos, rot

    def step(self, actions, idx=None):
        rows = self._rows if idx is None else np.asarray(idx)
        n = rows.size
        reward = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        showing = self.shown[rows] < self.frames[rows]
        self.shown[rows] += showing
        self.in_command_phase[rows] = showing
        act = ~showing
        if act.any():
            r = rows[act]
            self._move(r, actions[act])
            tile = self.tile_of(self.pos[r])
            on_target = (tile == self.target[r]).all(axis=1)
            steps, current, num = self.cmd_steps[r], self.current[r], self.num[r]
            verify = (steps % self.ex_delay[r] == 0) & (steps > 0) & ~self.tiles_on[r]
            counted = verify & (current < num)
            current = current + counted
            rew = np.where(counted, np.where(on_target, self.r_ok, self.r_fail), 0.0)
            done = counted & ~on_target
            self.done_total[r] += counted & on_target
            finished = verify & (current >= num)
            if self.endless:  # a new round: one more command, shown alone, then the whole sequence again
                for j in np.flatnonzero(finished):
                    current[j] = 0
                    self._next_round(int(r[j]))
                num = self.num[r]
                finished = np.zeros_like(finished)
            done |= finished
            rew = rew + np.where(finished, self.r_done, 0.0)
            tiles_on = self.tiles_on[r] | counted
            steps = np.where(verify, 1, steps)
            # while the tiles are red: they go off after the explosion, else leaving the target is death
            vstep = self.verify_step[r]
            off = tiles_on & (vstep % self.ex_duration[r] == 0) & (vstep > 0)
            burning = tiles_on & ~off
            dead = burning & ~on_target
            done |= dead
            rew = np.where(dead, self.r_fail, rew)
            vstep = np.where(off, 0, vstep + burning)
            advance = off & (current < num)
            nxt = self.commands[r, np.minimum(current, self.max_commands - 1)]
            self.target[r] = (self.target[r] + COMMAND_MOVES[nxt] * advance[:, None]) % self.size
            tiles_on &= ~off
            steps = steps + ~(tiles_on | off)
            self.cmd_steps[r], self.current[r], self.verify_step[r], self.tiles_on[r] = steps, current, vstep, tiles_on
            self.success[r] = finished & on_target  # upstream also reports success when the last command fails
            reward[act], terminated[act] = rew, done
        self.t[rows] += 1
        truncated = np.zeros(n, dtype=bool)
        if self.endless:
            full = self.num[rows] > self.max_commands
            truncated = ~terminated & (full | ((self.t[rows] >= self.max_steps) if self.max_steps else False))
        return reward, terminated, truncated

    def _next_round(self, i: int) -> None:
        """Endless: draw one more command and show it alone (the red tiles stay on while it is shown)."""
        command = int(self.episode_generator(i).integers(0, self.allowed, 1)[0])
        k = int(self.num[i])
        if k < self.max_commands:
            self.commands[i, k] = command
        self.num[i] = k + 1  # beyond max_commands the episode is truncated at the end of this step
        self.first_shown[i] = k
        self.frames[i], self.shown[i] = self.period[i], 0
        self.verify_step[i] = 0

    # --- observations ------------------------------------------------------------------------------------------
    def _picture_key(self, i: int) -> tuple[int, ...]:
        """Everything the picture of environment i depends on."""
        screen = (
            1 + int(self.target[i, 0]) * self.size + int(self.target[i, 1])
            if (self.tiles_on[i] and self.visual_feedback)
            else 0
        )
        code = _NO_COMMAND
        if self.show_commands and self.in_command_phase[i]:
            frame, period = int(self.shown[i]) - 1, int(self.period[i])
            if frame % period < self.duration[i]:
                code = int(self.commands[i, min(int(self.first_shown[i]) + frame // period, self.max_commands - 1)])
        return screen, int(self.pos[i, 0]), int(self.pos[i, 1]), int(self.rot[i]), code

    def image(self, rows: np.ndarray) -> np.ndarray:
        if rows.size == 1:  # one environment: pictures repeat a lot (the command phase, standing still), cache them
            key = self._picture_key(int(rows[0]))
            picture = self._pictures.get(key)
            if picture is None:
                if len(self._pictures) >= 4096:
                    self._pictures.clear()
                picture = self._pictures[key] = self._draw(rows)[0]
            return picture[None].copy()
        return self._draw(rows)

    def _draw(self, rows: np.ndarray) -> np.ndarray:
        n = rows.size
        size = self.size
        screen = np.where(
            self.tiles_on[rows] & self.visual_feedback, 1 + self.target[rows, 0] * size + self.target[rows, 1], 0
        )
        flat = self._arena[screen]  # a copy (fancy indexing)
        # the agent faces up throughout the command phase, as the authors draw it; the sprites are [y, x]
        _AGENT.draw(flat, self.rot[rows], self.pos[rows, ::-1] - AGENT_SPRITE // 2)
        if self.show_commands:
            frame = self.shown[rows] - 1
            visible = self.in_command_phase[rows] & (frame % self.period[rows] < self.duration[rows])
            cmd = self.commands[
                rows, np.clip(self.first_shown[rows] + frame // self.period[rows], 0, self.max_commands - 1)
            ]
            code = np.where(visible, cmd, _NO_COMMAND)
            flat[np.arange(n)[:, None], _COMMAND_PIXELS[code]] = COMMAND_RGB
        return flat[:, :-1].reshape(n, SCREEN, SCREEN, 3)

    def one_hot(self, rows: np.ndarray) -> np.ndarray:
        n = rows.size
        out = np.zeros((n, MAX_B_COMMANDS, 9), dtype=np.float32)
        k = np.arange(self.max_commands)[None, :]
        valid = k < self.num[rows, None]
        r, c = np.nonzero(valid)
        out[r, c, ONE_HOT_INDEX[self.commands[rows][r, c]]] = 1.0
        return out.reshape(n, -1)

    def oracle(self, idx=None):
        rows = self._rows if idx is None else np.asarray(idx)
        m = self.max_commands
        out = np.zeros((rows.size, m + 3), dtype=np.int64)
        seen = self.num[rows]  # commands shown so far: the first frame of command k is frame (k - first) * period
        if self.show_commands:
            seen = np.minimum(seen, self.first_shown[rows] + (self.shown[rows] - 1) // self.period[rows] + 1)
        out[:, :m] = np.where(np.arange(m) < seen[:, None], self.commands[rows] + 1, 0)
        out[:, m] = np.minimum(self.current[rows], m)
        out[:, m + 1 :] = self.target[rows]
        return out

    def observe(self, variant, idx=None):
        rows = self._rows if idx is None else np.asarray(idx)
        image = self.image(rows)
        if variant == "partial" and self.show_commands:
            return image
        obs = {"image": image}
        if not self.show_commands:
            obs["commands_one_hot"] = self.one_hot(rows)
        if variant in ("oracle", "full"):
            obs["oracle"] = self.oracle(rows)
        if variant == "full":
            obs["agent"] = np.clip(self.pos[rows], 0, SCREEN)
            obs["rotation"] = self.rot[rows].copy()
            obs["tiles_on"] = self.tiles_on[rows].astype(np.int64)
            frames = np.maximum(self.frames[rows], 1)
            obs["timers"] = np.stack(
                [
                    (self.frames[rows] - np.minimum(self.shown[rows], self.frames[rows])) / frames,
                    np.minimum(self.cmd_steps[rows] / self.ex_delay[rows], 1.0),
                    np.minimum(self.verify_step[rows] / self.ex_duration[rows], 1.0),
                ],
                axis=1,
            ).astype(np.float32)
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        rows = []
        tile = self.tile_of(self.pos[i])
        for y in range(self.size):
            line = ""
            for x in range(self.size):
                if (x, y) == tuple(tile):
                    line += "A"
                elif self.tiles_on[i] and (x, y) != tuple(self.target[i]):
                    line += "x"
                else:
                    line += "."
            rows.append(line)
        names = [COMMANDS[c] for c in self.commands[i, : min(self.num[i], self.max_commands)]]
        return (
            "\n".join(rows) + f"\ncommands: {', '.join(names)}; executing {int(self.current[i])}; "
            f"target {tuple(int(v) for v in self.target[i])}\nt={self.t[i]}/{self.T or 'unbounded'}\n"
        )

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The 84 x 84 screen at 4x (the authors' 336-pixel view), the step count under it, t / T along the bottom
        (endless: the sequence length / max_commands) and the outcome border."""
        return framed_view(
            self.image(np.array([i]))[0],
            self.t[i] / self.T if self.T else self.num[i] / self.max_commands,
            done,
            bool(self.success[i]),
            caption=str(int(self.t[i])),
        )


class MortarMayhem(MemoryGymEnv):
    """Mortar Mayhem (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = MortarMayhemCore


class MortarMayhemVector(MemoryGymVectorEnv):
    """Mortar Mayhem, N environments in one numpy step."""

    core_cls = MortarMayhemCore
