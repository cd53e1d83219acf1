"""BunchOfColors, SeqOfColors, ChainOfColors 3/5/7 (paper App. K.10-K.12, Table 1): remember a set of colours
(capacity: Bunch, Seq) or a sequence of colours (sequential: Chain), then touch those cubes among 9.

One class per family, the sizes are rows of the one table (:mod:`membench_envs.catalogue.robo`, ``sequence_length``
= N = 3, 5, 7). The pool is ``colors`` (9) cubes of the RememberColor palette; the N to remember are distinct and
drawn per episode. Phases (observation index t; defaults ``step_duration = 5``, ``delta_time = 5``; T = 120):

- **Bunch**: ``cue`` t in [0, 5): the N cubes together, cube of colour k on an arc of radius 0.22 m around the table
  centre (angle π(k − ⌊m/2⌋)/m, y shifted by −(k − ⌊m/2⌋)·0.015, m = pool size; the public code's layout);
  ``delay`` [5, 10): empty table; ``selection`` t ≥ 10: all m cubes.
- **Seq / Chain**: ``cue_i`` t in [5i, 5i + 5) for i < N: only cube ``seq[i]``, at the table centre; ``delay``
  [5N, 5N + 5): empty table; ``selection`` t ≥ 5N + 5: all m cubes.

At the selection the m cubes stand on the RememberColor9 arc slots, jittered and shuffled (as RememberColor; the
order of the cubes says nothing). Hidden cubes are parked out of physics and cameras (see :mod:`.base`).

**Touch** (the public code's rule, default): during the selection, the TCP within ``goal_thresh`` (default
``cube_halfsize`` = 0.02 m) of the point 0.5 cm above the cube's top face (its centre + (0, 0, halfsize + 0.005))
while every arm joint moves slower than 0.2 rad/s. A touch latches (a cube stays touched). ``strict_success=True``
(the paper's "each cube must be touched for at least 0.1 seconds") counts a touch only once the condition has held
on 2 consecutive steps (0.1 s at 20 Hz).

**Success** = the set of touched cubes equals the shown set (so any other cube touched fails the episode for good:
"without any mistakes") ∧ still arm ∧ selection. ChainOfColors also needs the order of first touches to equal the
shown order ("in the exact order as demonstrated"); Bunch and Seq take any order (K.10/K.11: "order of selection
doesn't matter"; the public code agrees).

**Dense reward** (public code's terms, each × [selection]; success overwrites with 100; ``normalized_dense`` =
dense / 100): ``reaching`` = 1 − tanh(10 d), d = TCP to the next target's touch point (Bunch/Seq: the untouched shown
cube of lowest colour index, d = 0 once none is left; Chain: the first shown cube not yet touched in its place, and
once every place holds its colour still the last shown cube, as upstream, whose position index is clamped to N − 1);
``static`` = 0.5 (1 − tanh(5 ‖arm qvel‖)); ``correct`` = 90 · (correct touches) / N (Chain: positions whose first
touch is the right colour); ``wrong`` = −10 · (wrong touches). So the dense reward is below 0 after mistakes (as
upstream) and below 91.5 without success.

**ChainOfColors' record of first touches** (``touch_order``, N places) differs from upstream in one case, kept on
purpose (an upstream bug): a new cube touched when all N places are filled (possible only after a wrong touch, so
success is already impossible) is not recorded here, so the reward no longer changes; upstream writes it into place
0 (it picks the first free place with an argmax over an all-false mask, which is 0), so a late touch of another
colour turns a right first place wrong (−90/N − 10) and a late touch of the first colour turns a wrong first place
right (+90/N + 10). E.g. N = 3, touches c₀, x, c₂ then c₁: here places (c₀, x, c₂), 2 right, 1 wrong, 50; upstream
(c₁, x, c₂), 1 right, 2 wrong, 10 (dense, before the static and reaching terms).

**State** (``full``): qpos ‖ qvel ‖ tcp_pose (25) ‖ ``object_pos`` (3m: each cube's centre while on the table, else 0)
‖ ``touched`` (m) ‖ [``touch_order`` (N, colour of the i-th new touch or −1): Chain] ‖ ``to_next_target`` (3, TCP to
the next target's touch point; 0 outside the selection) ‖ ``phase`` one-hot ‖ ``time`` (1, t/T) ‖ oracle
``true_color_indices`` (N, the shown colours in order). D = 25 + 4m + 3 + P + 1 + N (+ N for Chain), P = phases.

Customise with kwargs or class constants (App. M, Codes 18-20)::

    gym.make("MIKASA/SeqOfColors5-v0", step_duration=15, delta_time=100, goal_thresh=0.03)

    class SeqOfColors6Debug(SeqOfColorsEnv):          # then membench_envs.robo.make(SeqOfColors6Debug, ...)
        SEQUENCE_LENGTH = 6; COLORS = 9; STEP_DURATION = 15; DELTA_TIME = 100; GOAL_THRESH = 0.03
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import sapien
import torch

from membench_envs.robo._remember import jittered_shuffled_slots
from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.remember_color import COLORS as PALETTE
from membench_envs.robo.shapes import build_shape

BUNCH_RADIUS = 0.22
BUNCH_Y_SHIFT = 0.015


class ColorsEnv(MemoryTabletopEnv):
    """Shared mechanics of Bunch/Seq/ChainOfColors (see the module docstring)."""

    MAX_DENSE_REWARD: ClassVar[float] = 100.0
    TOUCH_LIFT: ClassVar[float] = 0.005  # the touch point is this far above the top face
    #: whether the cue shows the cubes one after the other (the catalogue's timing rule reads the same flag) ...
    SEQUENTIAL: ClassVar[bool] = False
    #: ... and whether the touches must follow the shown order
    ORDERED: ClassVar[bool] = False

    def __init__(
        self,
        *args,
        sequence_length: int | None = None,
        colors: int | None = None,
        step_duration: int | None = None,
        delta_time: int | None = None,
        cube_halfsize: float | None = None,
        goal_thresh: float | None = None,
        **kwargs,
    ):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.sequence_length = self.knob("sequence_length", sequence_length)
        self.n_colors = self.knob("colors", colors)  # 1..len(PALETTE): the catalogue's bound
        self.step_duration = self.knob("step_duration", step_duration)
        self.delta_time = self.knob("delta_time", delta_time)
        self.cube_halfsize = float(self.knob("cube_halfsize", cube_halfsize))
        thresh = self.knob("goal_thresh", goal_thresh)
        self.goal_thresh = self.cube_halfsize if thresh is None else float(thresh)
        if self.sequence_length > self.n_colors:
            raise ValueError(f"sequence_length must be in 1..colors={self.n_colors}, got {self.sequence_length}")
        super().__init__(*args, **kwargs)

    # --- timing: the catalogue's colors_timing, via MemoryTabletopEnv.timing -------------------------------------
    @property
    def selection_start(self) -> int:
        return self.timing().decision

    # --- scene and episode ---------------------------------------------------------------------------------------
    def _load_objects(self, options: dict) -> None:
        self.cubes = []
        for k, (name, (r, g, b)) in enumerate(PALETTE[: self.n_colors]):
            park = sapien.Pose(p=[k * self.PARK_SPACING, 0.0, self.PARK_Z])
            cube, rest = build_shape(
                self.scene,
                "cube",
                self.cube_halfsize,
                (r / 255, g / 255, b / 255, 1.0),
                f"cube_{name.lower()}",
                "dynamic",
                park,
            )
            self.cubes.append(self.register_memory_object(cube))
        self._rest = rest
        n, m, dev = self.num_envs, self.n_colors, self.device
        self._seq = torch.zeros((n, self.sequence_length), dtype=torch.int64, device=dev)
        self._in_seq = torch.zeros((n, m), dtype=torch.bool, device=dev)
        self._touched = torch.zeros((n, m), dtype=torch.bool, device=dev)
        self._order = torch.full((n, self.sequence_length), -1, dtype=torch.int64, device=dev)

    def bunch_positions(self) -> np.ndarray:
        """(m, 3) where cube k stands during the Bunch cue (public code's arc around the table centre)."""
        m = self.n_colors
        k = np.arange(m) - m // 2
        a = math.pi * k / m
        return np.stack(
            [BUNCH_RADIUS * np.cos(a), BUNCH_RADIUS * np.sin(a) - k * BUNCH_Y_SHIFT, np.full(m, self._rest)], axis=1
        )

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b, m, n = len(env_idx), self.n_colors, self.sequence_length
        seq = np.stack([rng[i].choice(m, n, replace=False) for i in range(b)]).reshape(b, n)
        slots = np.stack([jittered_shuffled_slots(rng[i], m, self.cube_halfsize) for i in range(b)])  # (b, m, 2)
        seq_t = torch.as_tensor(seq, device=self.device, dtype=torch.int64)
        self._seq[env_idx] = seq_t
        self._in_seq[env_idx] = torch.zeros((b, m), dtype=torch.bool, device=self.device).scatter_(1, seq_t, True)
        self._touched[env_idx] = False
        self._order[env_idx] = -1
        bunch = self.bunch_positions()
        centre = np.array([0.0, 0.0, self._rest])
        for k in range(m):
            p = np.concatenate([slots[:, k], np.full((b, 1), self._rest)], axis=1)
            self.show("selection", k, env_idx, p)
            for i in range(n):
                envs = env_idx[seq_t[:, i] == k]
                if len(envs) == 0:
                    continue
                if self.SEQUENTIAL:
                    self.show(f"cue_{i}", k, envs, np.tile(centre, (len(envs), 1)))
                else:
                    self.show("cue", k, envs, np.tile(bunch[k], (len(envs), 1)))

    # --- oracle ----------------------------------------------------------------------------------------------------
    def oracle(self) -> torch.Tensor:
        return self._seq.clone()

    def oracle_bounds(self):
        return [0] * self.sequence_length, [self.n_colors - 1] * self.sequence_length

    def describe_oracle(self, env_i: int) -> str:
        names = [PALETTE[int(k)][0] for k in self._seq[env_i]]
        done = int((self._touched[env_i] & self._in_seq[env_i]).sum())
        return f"{' > '.join(names) if self.ORDERED else ', '.join(names)} (touched {done}/{len(names)})"

    # --- evaluation ------------------------------------------------------------------------------------------------
    def touch_points(self) -> torch.Tensor:
        """(num_envs, m, 3): the point 0.5 cm above each cube's top face."""
        lift = torch.tensor([0.0, 0.0, self.cube_halfsize + self.TOUCH_LIFT], device=self.device)
        return self.memory_object_positions + lift

    def _next_target(self) -> torch.Tensor:
        """(num_envs,) colour index of the next cube to touch: Bunch/Seq -1 when none is left; Chain the last shown
        cube once every position holds its colour (upstream clamps the position to N - 1)."""
        if self.ORDERED:
            wrong = self._order != self._seq  # positions not (yet) touched with the right colour
            pos = torch.where(wrong, torch.arange(self.sequence_length, device=self.device), self.sequence_length)
            first = pos.min(dim=1).values
            return self._seq.gather(1, first.clamp(max=self.sequence_length - 1)[:, None])[:, 0]
        left = self._in_seq & ~self._touched
        target = torch.argmax(left.to(torch.int64), dim=1)
        return torch.where(left.any(dim=1), target, torch.full_like(target, -1))

    def _evaluate_task(self) -> dict:
        arange = torch.arange(self.num_envs, device=self.device)
        selection = self.elapsed_steps >= self.selection_start
        static = self.agent.is_static(self.STATIC_THRESH)
        tcp = self.agent.tcp.pose.p
        points = self.touch_points()
        near = torch.linalg.norm(points - tcp[:, None, :], dim=2) < self.goal_thresh
        touch = near & (static & selection)[:, None]
        if self.strict_success:
            touch = self.held_steps("touch", touch) >= self.strict_hold_steps
        new = touch & ~self._touched
        if bool(new.any()):
            for k in torch.nonzero(new.any(dim=0)).flatten().tolist():  # in colour order when several start at once
                envs = torch.nonzero(new[:, k]).flatten()
                free = self._order[envs] == -1
                slot = torch.argmax(free.to(torch.int64), dim=1)
                ok = free.any(dim=1)
                self._order[envs[ok], slot[ok]] = k
            self._touched |= new
        exact_set = (self._touched == self._in_seq).all(dim=1)
        in_order = (self._order == self._seq).all(dim=1)
        success = exact_set & static & selection
        if self.ORDERED:
            success = success & in_order
        nxt = self._next_target()
        to_next = points[arange, nxt.clamp(min=0)] - tcp
        to_next = torch.where(((nxt >= 0) & selection)[:, None], to_next, torch.zeros_like(to_next))
        if self.ORDERED:
            filled = self._order >= 0
            correct = (filled & (self._order == self._seq)).sum(dim=1)
            wrong = (filled & (self._order != self._seq)).sum(dim=1)
        else:
            correct = (self._touched & self._in_seq).sum(dim=1)
            wrong = (self._touched & ~self._in_seq).sum(dim=1)
        return {
            "success": success,
            "touched": self._touched.clone(),
            "touch_order": self._order.clone(),
            "n_correct": correct,
            "n_wrong": wrong,
            "next_target": nxt,
            "to_next_target": to_next,
            "is_robot_static": static,
            "in_selection": selection,
        }

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        active = info["in_selection"].float()
        qvel = self.agent.robot.get_qvel()[..., :-2]
        dist = torch.linalg.norm(info["to_next_target"], dim=1)
        return {
            "reaching": (1.0 - torch.tanh(10.0 * dist)) * active,
            "static": 0.5 * (1.0 - torch.tanh(5.0 * torch.linalg.norm(qvel, dim=1))) * active,
            "correct": 90.0 * info["n_correct"].float() / self.sequence_length * active,
            "wrong": -10.0 * info["n_wrong"].float() * active,
        }

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        visible = self.object_visible()
        positions = self.memory_object_positions * visible[..., None]
        state = {"object_pos": positions.reshape(self.num_envs, -1), "touched": info["touched"].float()}
        if self.ORDERED:
            state["touch_order"] = info["touch_order"].float()
        state["to_next_target"] = info["to_next_target"]
        state["phase"] = torch.nn.functional.one_hot(self.current_phase(), len(self.phase_names)).float()
        state["time"] = (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1)
        return state


class BunchOfColorsEnv(ColorsEnv):
    """The N cubes are shown together; touch all of them, in any order, and no other."""


class SeqOfColorsEnv(ColorsEnv):
    """The N cubes are shown one after the other; touch all of them, in any order, and no other."""

    SEQUENTIAL = True


class ChainOfColorsEnv(ColorsEnv):
    """The N cubes are shown one after the other; touch them in the shown order, and no other."""

    SEQUENTIAL = True
    ORDERED = True
