"""STORI's stochasticity types as frame-level wrappers of the ALE emulator (frame skip 1, sticky actions off).

:class:`membench_envs.stori.env.StoriEnv` runs the agent's frame skip on top: for each emulator frame it asks the
active wrapper for the executed action (type 1), lets it act around the frame (type 2) and, for the frames that make
the observation, lets it mask the screen (type 5). Type 3 (concept drift) switches one of these on and off by agent
step (:meth:`membench_envs.stori.config.StoriConfig.concept_on`); type 4 is no wrapper. Every random draw comes from
the generator handed to :meth:`FrameWrapper.start`, never from numpy's or Python's global RNG.

Where this differs from the authors' public code, the class docstring says so.
"""

from __future__ import annotations

import numpy as np

from membench_envs.stori.config import Concept
from membench_envs.stori.games import (
    BANKHEIST_BANK,
    BANKHEIST_BOMB,
    BANKHEIST_CITY,
    BANKHEIST_FUEL,
    BANKHEIST_FUEL_EMPTY,
    BANKHEIST_SLOTS,
    CROP_RADIUS,
    GOPHER_CARROTS,
    GOPHER_DELAYED_START,
    GOPHER_UNDERGROUND,
    Game,
    edit_writes,
)

#: The block bitmap of Breakout: RAM[0:36].
BREAKOUT_BLOCKS = slice(0, 36)
#: Boxing RAM addresses.
BOXING_PLAYER_COLOUR, BOXING_ENEMY_COLOUR = 1, 2
BOXING_PLAYER_SCORE, BOXING_ENEMY_SCORE = 18, 19
BOXING_PLAYER_XY, BOXING_ENEMY_XY = (32, 34), (33, 35)


class FrameWrapper:
    """One stochasticity effect on the emulator. The env calls, for every emulator frame while it is active:
    ``a = action(a)``, ``before(ale)``, ``r = ale.act(...)``, ``r = after(ale, r)``; and ``mask(frame, ale)`` on the
    frames that make the observation. ``start`` is called when the effect becomes active (episode start, or the
    drift's switch to it) with the env's generator for this effect and ``start_ram``, the RAM of the episode's start
    (right after ALE's reset): the reference state of the type-2 events, as in the authors' code, whose wrappers
    read the RAM recorded when the environment was built or reset (a wrapper built at a drift's switch too)."""

    masks_observation = False

    def __init__(self, concept: Concept, game: Game, num_actions: int):
        self.concept, self.game, self.num_actions = concept, game, num_actions
        self.prob = concept.prob
        self.rng = np.random.default_rng(0)

    def start(self, ale, rng: np.random.Generator, start_ram: np.ndarray) -> None:
        self.rng = rng

    def action(self, a: int) -> int:
        return a

    def before(self, ale) -> None:
        pass

    def after(self, ale, reward: float) -> float:
        return reward

    def mask(self, frame: np.ndarray, ale) -> None:
        pass


# --- type 1 ----------------------------------------------------------------------------------------------------------
class RandomAction(FrameWrapper):
    """Type 1: each emulator frame, with probability p, the agent's action is replaced by one drawn uniformly from the
    action space (the agent's own action can be drawn: the action changes with probability p·(1 − 1/|A|)), or from
    its first :attr:`Game.random_actions` actions where the game says so (BankHeist: the moves and FIRE). This is
    not sticky actions (no repeat of the previous action)."""

    def __init__(self, concept: Concept, game: Game, num_actions: int):
        super().__init__(concept, game, num_actions)
        self.choices = min(game.random_actions or self.num_actions, self.num_actions)

    def action(self, a: int) -> int:
        if self.rng.random() < self.prob:
            return int(self.rng.integers(self.choices))
        return a


# --- type 2 ----------------------------------------------------------------------------------------------------------
class BreakoutEvents(FrameWrapper):
    """Type 2 on Breakout (modes in :data:`membench_envs.stori.games.BREAKOUT`).

    Mode 1/2 (block hit cancel): after a frame, if the block bitmap differs from its value when the effect started
    and some block byte changed during the frame, then with probability p those bytes are written back (mode 2 also
    sets the frame's reward to 0; the on-screen score and ALE's score keep the hit). Mode 3 (regenerate): after a
    frame, if some block byte differs from its start value, then with probability p one of them, drawn uniformly,
    is written back to its start value. The start value is the block bitmap at the episode's start, also when a
    drift switches to this concept mid-episode (the authors' wrapper built at the switch reads the RAM recorded when
    the environment was built: the full wall)."""

    def start(self, ale, rng: np.random.Generator, start_ram: np.ndarray) -> None:
        super().start(ale, rng, start_ram)
        self.original = start_ram[BREAKOUT_BLOCKS].copy()
        self.previous = self.original

    def before(self, ale) -> None:
        if self.concept.mode in (1, 2):
            self.previous = ale.getRAM()[BREAKOUT_BLOCKS].copy()

    def after(self, ale, reward: float) -> float:
        mode = self.concept.mode
        if mode == 0:
            return reward
        blocks = ale.getRAM()[BREAKOUT_BLOCKS]
        if mode == 3:
            changed = np.flatnonzero(blocks != self.original)
            if changed.size and self.rng.random() < self.prob:
                i = int(changed[self.rng.integers(changed.size)])
                ale.setRAM(BREAKOUT_BLOCKS.start + i, int(self.original[i]))
            return reward
        if np.array_equal(blocks, self.original):
            return reward
        changed = np.flatnonzero(blocks != self.previous)
        if changed.size and self.rng.random() < self.prob:
            for k in changed:
                ale.setRAM(BREAKOUT_BLOCKS.start + int(k), int(self.previous[k]))
            if mode == 2:
                return 0.0
        return reward


class BoxingEvents(FrameWrapper):
    """Type 2 on Boxing (modes in :data:`membench_envs.stori.games.BOXING`).

    Mode 1 (colour flip): before each frame, with probability p a persistent flag toggles; then the colour bytes are
    written: swapped while the flag is set, their start values otherwise (every frame, as the authors' code). Mode 3
    (displace): before each frame, with probability p, the player is moved to the enemy's start position and the
    enemy to the player's. Mode 2 (hit cancel): after a frame where exactly one score byte changed, with probability
    p it is written back and the frame pays 0.

    Fixed bug of the authors' code (mode 2): ALE scores Boxing from those RAM bytes, so after the write-back it pays
    the opposite reward on the next frame; the authors' code zeroes the hit frame's reward only, which makes a
    cancelled hit of the player cost −1 (and one of the enemy pay +1). Here the next frame's compensation is
    cancelled too, so a cancelled hit pays 0 in total, as the paper describes ("reverts score changes"). The
    published results do not use this mode."""

    def start(self, ale, rng: np.random.Generator, start_ram: np.ndarray) -> None:
        super().start(ale, rng, start_ram)
        self.original = start_ram.copy()  # the start colours and positions (also after a drift's switch)
        self.flipped = False
        self.compensation = 0.0

    def before(self, ale) -> None:
        mode = self.concept.mode
        if mode == 1:
            if self.rng.random() < self.prob:
                self.flipped = not self.flipped
            p, e = int(self.original[BOXING_PLAYER_COLOUR]), int(self.original[BOXING_ENEMY_COLOUR])
            ale.setRAM(BOXING_PLAYER_COLOUR, e if self.flipped else p)
            ale.setRAM(BOXING_ENEMY_COLOUR, p if self.flipped else e)
        elif mode == 2:
            ram = ale.getRAM()
            self.previous = (int(ram[BOXING_PLAYER_SCORE]), int(ram[BOXING_ENEMY_SCORE]))
        elif mode == 3 and self.rng.random() < self.prob:
            for (px, py), (qx, qy) in ((BOXING_PLAYER_XY, BOXING_ENEMY_XY), (BOXING_ENEMY_XY, BOXING_PLAYER_XY)):
                ale.setRAM(px, int(self.original[qx]))
                ale.setRAM(py, int(self.original[qy]))

    def after(self, ale, reward: float) -> float:
        if self.concept.mode != 2:
            return reward
        reward, self.compensation = reward + self.compensation, 0.0
        ram = ale.getRAM()
        now = (int(ram[BOXING_PLAYER_SCORE]), int(ram[BOXING_ENEMY_SCORE]))
        changed = [k for k in (0, 1) if now[k] != self.previous[k]]
        if len(changed) == 1 and self.rng.random() < self.prob:
            k = changed[0]
            ale.setRAM((BOXING_PLAYER_SCORE, BOXING_ENEMY_SCORE)[k], self.previous[k])
            self.compensation = reward  # ALE pays -reward on the next frame (its score is read from RAM)
            return 0.0
        return reward


class GopherEvents(FrameWrapper):
    """Type 2 on Gopher (modes in :data:`membench_envs.stori.games.GOPHER`).

    Mode 1/2 (hole does not close): after a frame where the farmer fills a hole (underground bits go from dug, set,
    to earth, clear, and the frame pays: the fill's 20 points), with probability p those bits are set again (mode 2
    also sets the frame's reward to 0; the score keeps the points). The game's refill of the whole underground
    after a carrot is lost clears bits too, but pays nothing, so it is left alone.
    Mode 3 (a carrot dies): once per activation, from the episode's 238th emulator frame on, each frame with
    probability p, if at least two carrots are visible, one of them drawn uniformly is removed.

    Where this differs from the authors' code (which is buggy there) see the notes of
    :data:`membench_envs.stori.games.GOPHER`."""

    def start(self, ale, rng: np.random.Generator, start_ram: np.ndarray) -> None:
        super().start(ale, rng, start_ram)
        self.carrot_done = False

    def before(self, ale) -> None:
        if self.concept.mode in (1, 2):
            self.previous = ale.getRAM()[GOPHER_UNDERGROUND].copy()

    def after(self, ale, reward: float) -> float:
        mode = self.concept.mode
        if mode in (1, 2):
            if reward <= 0:
                return reward
            now = ale.getRAM()[GOPHER_UNDERGROUND]
            filled = self.previous & ~now
            if not filled.any():
                return reward
            if self.rng.random() < self.prob:
                for i in np.flatnonzero(filled):
                    ale.setRAM(GOPHER_UNDERGROUND.start + int(i), int(now[i] | filled[i]))
                if mode == 2:
                    return 0.0
            return reward
        if mode == 3 and not self.carrot_done and ale.getEpisodeFrameNumber() >= GOPHER_DELAYED_START:
            carrots = int(ale.getRAM()[GOPHER_CARROTS])
            visible = [bit for bit in range(3) if carrots >> bit & 1]
            if len(visible) >= 2 and self.rng.random() < self.prob:
                bit = visible[int(self.rng.integers(len(visible)))]
                ale.setRAM(GOPHER_CARROTS, carrots & ~(1 << bit))
                self.carrot_done = True
        return reward


class BankHeistEvents(FrameWrapper):
    """Type 2 on BankHeist (modes in :data:`membench_envs.stori.games.BANKHEIST`).

    Mode 1 (dud bomb), the authors' rule: after a frame whose dynamite byte is neither its start value nor the
    value the wrapper read after the previous frame, with probability p the byte is set to that previous value (a
    dropped stick vanishes; its explosion, back to the start value, is never undone). The previous value is the one
    read *before* any write-back, as the authors' code keeps it: after a write-back, the same change on the next
    frame is let through, and a byte that moved on is set to the value that was undone. (membench's earlier rule
    read the RAM before the frame, after any write-back, so it could hold a stick back frame after frame; in a
    4000-frame random play at p = 0.5 the two rules part after 973 frames.)

    Mode 2 (fuel leak): after each frame, if the current city (RAM[0] % 4) has not leaked since the effect started,
    with probability p it leaks: the fuel used becomes half the tank if it was below. Mode 3 (city switch): after
    each frame, with probability p, the city's maze becomes one of the other three, drawn uniformly (the counter's
    rounds, RAM[0] // 4, are kept). Mode 4 (empty bank): a frame where a slot that held a bank before the frame
    holds something else after it (the robbery) pays 0 with probability p."""

    def start(self, ale, rng: np.random.Generator, start_ram: np.ndarray) -> None:
        super().start(ale, rng, start_ram)
        self.original = start_ram.copy()
        self.seen_bomb = int(start_ram[BANKHEIST_BOMB])  # the dynamite byte read after the last frame
        self.leaked: set[int] = set()

    def before(self, ale) -> None:
        if self.concept.mode == 4:
            self.previous = ale.getRAM().copy()

    def after(self, ale, reward: float) -> float:
        mode = self.concept.mode
        ram = ale.getRAM()
        if mode == 1:
            bomb, was = int(ram[BANKHEIST_BOMB]), self.seen_bomb
            self.seen_bomb = bomb  # before the write-back, as the authors' code
            if bomb != self.original[BANKHEIST_BOMB] and bomb != was and self.rng.random() < self.prob:
                ale.setRAM(BANKHEIST_BOMB, was)
        elif mode == 2:
            city = int(ram[BANKHEIST_CITY]) % 4
            if city not in self.leaked and self.rng.random() < self.prob:
                half = BANKHEIST_FUEL_EMPTY // 2
                if ram[BANKHEIST_FUEL] < half:
                    ale.setRAM(BANKHEIST_FUEL, half)
                self.leaked.add(city)
        elif mode == 3:
            if self.rng.random() < self.prob:
                counter = int(ram[BANKHEIST_CITY])
                others = [c for c in range(4) if c != counter % 4]
                ale.setRAM(BANKHEIST_CITY, counter - counter % 4 + others[int(self.rng.integers(3))])
        elif mode == 4:
            robbed = any(self.previous[a] == BANKHEIST_BANK and ram[a] != BANKHEIST_BANK for a in BANKHEIST_SLOTS)
            if robbed and self.rng.random() < self.prob:
                return 0.0
        return reward


# --- type 5 ----------------------------------------------------------------------------------------------------------
class MaskObservation(FrameWrapper):
    """Type 5: each observed frame, with probability p, is modified in place (each of the frames max-pooled into one
    observation is drawn independently, as in the authors' set-up, so a fixed region is hidden from a pooled
    observation with probability about p²).

    - ``crop``: mode 1-4 zero the left / right / top / bottom half (``width // 2``, ``height // 2``); mode 5 keeps
      only the pixels within 75 px (Euclidean, inclusive) of a centre drawn uniformly over the pixels.
    - ``blackout``: the game's regions for the mode are filled, in order, with their colour (inclusive bounds).
    - ``ram``: save the emulator state (with its RNG), write the mode's RAM values, emulate one NOOP frame, take its
      screen, restore the state: only the observation changes, never the trajectory. As in the authors' code, the
      observed frame is the one after that NOOP frame (one frame ahead, with the object hidden); a conditional
      edit (:class:`~membench_envs.stori.games.Replace`) with nothing to hide leaves the frame as it is."""

    masks_observation = True

    def __init__(self, concept: Concept, game: Game, num_actions: int, noop):
        super().__init__(concept, game, num_actions)
        self.kind, self.mode, self.noop = concept.kind, concept.mode, noop
        # (rows, columns, a block of the region's shape filled with its colour): a plain copy per frame, much
        # cheaper than broadcasting the colour into the region
        self.fills = tuple(
            (
                slice(y0, y1 + 1),
                slice(x0, x1 + 1),
                np.tile(np.array(colour, dtype=np.uint8), (y1 + 1 - y0, x1 + 1 - x0, 1)),
            )
            for (x0, x1, y0, y1), colour in (game.fills(self.mode) if self.kind == "blackout" else ())
        )
        self.edits = game.ram_edits[self.mode][1] if self.kind == "ram" else {}

    def mask(self, frame: np.ndarray, ale) -> None:
        if self.mode == 0 or self.rng.random() >= self.prob:
            return
        if self.kind == "crop":
            crop(frame, self.mode, self.rng)
        elif self.kind == "blackout":
            for rows, columns, fill in self.fills:
                frame[rows, columns] = fill
        else:
            writes = edit_writes(self.edits, ale.getRAM())
            if writes is None:  # a conditional edit with nothing to hide (no bank, no police, no seed)
                return
            state = ale.cloneState(include_rng=True)
            for address, value in writes:
                ale.setRAM(address, value)
            ale.act(self.noop)
            ale.getScreenRGB(frame)
            ale.restoreState(state)


_OFFSETS = np.arange(-CROP_RADIUS, CROP_RADIUS + 1)
#: The pixels within CROP_RADIUS of the centre of a (2r+1, 2r+1) square.
_DISC = (_OFFSETS[:, None] ** 2 + _OFFSETS[None, :] ** 2 <= CROP_RADIUS**2).astype(np.uint8)


def crop(frame: np.ndarray, mode: int, rng: np.random.Generator) -> None:
    """Crop ``frame`` (H, W, 3) in place: mode 1 left, 2 right, 3 top, 4 bottom half zeroed; 5 random disc kept."""
    h, w = frame.shape[:2]
    if mode == 1:
        frame[:, : w // 2] = 0
    elif mode == 2:
        frame[:, w // 2 :] = 0
    elif mode == 3:
        frame[: h // 2] = 0
    elif mode == 4:
        frame[h // 2 :] = 0
    elif mode == 5:
        cx, cy = int(rng.integers(w)), int(rng.integers(h))
        r = CROP_RADIUS
        keep = np.zeros((h, w), dtype=np.uint8)  # 1 inside the disc (clipped to the frame), 0 outside
        y0, y1, x0, x1 = max(cy - r, 0), min(cy + r + 1, h), max(cx - r, 0), min(cx + r + 1, w)
        keep[y0:y1, x0:x1] = _DISC[y0 - cy + r : y1 - cy + r, x0 - cx + r : x1 - cx + r]
        np.multiply(frame, keep[..., None], out=frame)


#: The type-2 wrapper of each game.
EVENTS: dict[str, type[FrameWrapper]] = {
    "Breakout": BreakoutEvents,
    "Boxing": BoxingEvents,
    "Gopher": GopherEvents,
    "BankHeist": BankHeistEvents,
}


def make_wrapper(concept: Concept, game: Game, num_actions: int, noop) -> FrameWrapper:
    """The frame wrapper of one type-1, -2 or -5 concept on ``game``."""
    if concept.type == 1:
        return RandomAction(concept, game, num_actions)
    if concept.type == 2:
        return EVENTS[game.name](concept, game, num_actions)
    return MaskObservation(concept, game, num_actions, noop)
