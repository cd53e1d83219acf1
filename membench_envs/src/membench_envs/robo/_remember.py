"""Shared mechanics of RememberColor, RememberShape and RememberShapeAndColor (paper App. K.2-K.4, Table 1).

Phases, with the defaults ``time_offset = 5`` and ``delta_time = 5`` (observation index t, 0 = reset; T = 60, in
general max(60, ``time_offset + delta_time + 50``) unless ``episode_steps`` is given: the catalogue's
:func:`~membench_envs.catalogue.robo.remember_timing`):

- ``cue``    t in [0, time_offset): only the target object, at the table centre (0, 0).
- ``delay``  t in [time_offset, time_offset + delta_time): empty table.
- ``choice`` t >= time_offset + delta_time: all N objects (the target among them) at shuffled, jittered slots.

Success (default: the public code's rule) = the TCP within ``goal_thresh`` (0.05 m) of the target object's centre ∧
robot static (max |arm qvel| ≤ 0.2) ∧ choice phase, on one step. ``strict_success=True`` is the paper's wording
("maintaining contact with the correct cube for at least 0.1 seconds"): the same condition on 2 consecutive steps
(0.1 s at the 20 Hz control rate; neither source senses contact). The choice-phase condition is ours: upstream
counts a static touch of the *cue* cube during t < 5 as success, which needs no memory.

Dense reward (max 3, the value written on success; ``normalized_dense`` = dense / 3 in [0, 1]):
``reaching = (1 - tanh(10 d))·[choice]``, ``static = 0.5 (1 - tanh(5 ‖qvel_arm‖))``,
``static_at_target = 0.5·[static ∧ d ≤ goal_thresh ∧ choice]``; without success it is at most 2.

Layout (paper code): N = 3 on a line x = 0, y ∈ {+0.1, 0, -0.1}; otherwise an arc of radius 0.3 around (-0.25, 0),
angle π(k - ⌊N/2⌋)/N (odd N) or π(k + 0.5 - N/2)/N (even N), with an extra y shift of -(k - ⌊N/2⌋)·0.025 for
N ∈ {5, 9}. Each slot gets N(0, (0.5 s)²) xy jitter, kept only if ≥ 3 s from the objects already placed (50 tries,
else the nominal slot), then slots are randomly permuted among objects, so neither slot nor order gives the answer.

State (``full`` variant): qpos ‖ qvel ‖ tcp_pose (25) ‖ ``goal_pos`` (3, target centre in the choice phase, else 0)
‖ ``object_pos`` (3N, each object's centre while on the table, else 0) ‖ ``phase`` one-hot (3) ‖ ``time`` (1, t/T)
‖ oracle (k). D = 32 + 3N + k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import sapien
import torch
from mani_skill.utils import common

from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.shapes import build_shape


@dataclass(frozen=True)
class Item:
    """One candidate object: its shape, RGBA colour in [0, 1], and oracle value(s)."""

    shape: str
    rgba: tuple[float, float, float, float]
    label: str
    oracle: tuple[int, ...]


def choice_slots(n: int) -> np.ndarray:
    """Nominal (x, y) of the N choice slots (paper layout, see module docstring)."""
    slots = np.zeros((n, 2))
    mid = n // 2
    for k in range(n):
        if n == 3:
            slots[k] = (0.0, -(k - mid) * 0.1)
            continue
        angle = math.pi * ((k + 0.5 - n / 2) if n % 2 == 0 else (k - mid)) / n
        slots[k] = (0.3 * math.cos(angle) - 0.25, 0.3 * math.sin(angle))
        if n in (5, 9):
            slots[k, 1] -= (k - mid) * 0.025
    return slots


def jittered_shuffled_slots(rng: np.random.RandomState, n: int, scale: float, attempts: int = 50) -> np.ndarray:
    nominal = choice_slots(n)
    placed = nominal.copy()
    min_dist = 3.0 * scale
    for i in range(n):
        for _ in range(attempts):
            candidate = nominal[i] + rng.normal(0.0, 0.5 * scale, 2)
            if i == 0 or np.min(np.linalg.norm(placed[:i] - candidate, axis=1)) >= min_dist:
                placed[i] = candidate
                break
    return placed[rng.permutation(n)]


class RememberBaseEnv(MemoryTabletopEnv):
    """Show one object, hide everything, then show all N candidates; touch the one that was shown."""

    MAX_DENSE_REWARD: ClassVar[float] = 3.0
    CUE_XY: ClassVar[tuple[float, float]] = (0.0, 0.0)

    def __init__(
        self,
        *args,
        time_offset: int | None = None,
        delta_time: int | None = None,
        goal_thresh: float | None = None,
        **kwargs,
    ):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.time_offset = self.knob("time_offset", time_offset)
        self.delta_time = self.knob("delta_time", delta_time)
        self.goal_thresh = float(self.knob("goal_thresh", goal_thresh))
        self.items: list[Item] = list(self.make_items())
        if not self.items:
            raise ValueError("a Remember task needs at least one object")
        super().__init__(*args, **kwargs)

    # --- what the family members define ---------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        raise NotImplementedError

    def make_items(self) -> list[Item]:
        raise NotImplementedError

    # --- platform hooks (phases and T: the catalogue's remember_timing, via MemoryTabletopEnv.timing) ------------
    @property
    def choice_start(self) -> int:
        return self.time_offset + self.delta_time

    def _load_objects(self, options: dict) -> None:
        rests = []
        for j, item in enumerate(self.items):
            park = sapien.Pose(p=[j * self.PARK_SPACING, 0.0, self.PARK_Z])
            name = f"{item.shape}_{j}"
            actor, rest = build_shape(self.scene, item.shape, self.scale, item.rgba, name, "dynamic", park)
            self.register_memory_object(actor)
            rests.append(rest)
        self._rest = torch.tensor(rests, device=self.device, dtype=torch.float32)
        self._oracle_table = torch.tensor([it.oracle for it in self.items], device=self.device, dtype=torch.int64)
        self._target = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b, m = len(env_idx), len(self.items)
        target = np.asarray(rng.randint(0, m)).reshape(b)
        slots = np.stack([jittered_shuffled_slots(rng[i], m, self.scale) for i in range(b)])  # (b, m, 2)
        target_t = torch.as_tensor(target, device=self.device, dtype=torch.int64)
        self._target[env_idx] = target_t
        rest = common.to_numpy(self._rest)
        for j in range(m):
            choice_p = np.concatenate([slots[:, j], np.full((b, 1), rest[j])], axis=1)
            self.show("choice", j, env_idx, choice_p)
            cue_envs = env_idx[target_t == j]
            if len(cue_envs):
                cue_p = np.tile([*self.CUE_XY, rest[j]], (len(cue_envs), 1))
                self.show("cue", j, cue_envs, cue_p)

    def oracle(self) -> torch.Tensor:
        return self._oracle_table[self._target]

    def target_index(self) -> torch.Tensor:
        """Index (in ``self.items`` / ``memory_objects``) of the target object of every environment."""
        return self._target

    def describe_oracle(self, env_i: int) -> str:
        return self.items[int(self._target[env_i])].label

    def _evaluate_task(self) -> dict:
        if self.num_envs == 1:  # CPU: read the target's pose only (the full state needs all, and caches them)
            target_p = self.memory_objects[int(self._target[0])].pose.p
        else:
            target_p = self.memory_object_positions[torch.arange(self.num_envs, device=self.device), self._target]
        dist = torch.linalg.norm(target_p - self.agent.tcp.pose.p, dim=1)
        in_choice = self.elapsed_steps >= self.choice_start
        placed = (dist <= self.goal_thresh) & in_choice
        static = self.agent.is_static(self.STATIC_THRESH)
        touch = placed & static
        if self.strict_success:
            touch = self.held_steps("touch", touch) >= self.strict_hold_steps
        return {
            "success": touch,
            "is_obj_placed": placed,
            "is_robot_static": static,
            "tcp_to_target_dist": dist,
            "in_choice_phase": in_choice,
        }

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        choice = info["in_choice_phase"].float()
        dist = info["tcp_to_target_dist"]
        qvel = self.agent.robot.get_qvel()[..., :-2]
        return {
            "reaching": (1.0 - torch.tanh(10.0 * dist)) * choice,
            "static": 0.5 * (1.0 - torch.tanh(5.0 * torch.linalg.norm(qvel, dim=1))),
            "static_at_target": 0.5 * (info["is_robot_static"] & info["is_obj_placed"]).float(),
        }

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        arange = torch.arange(self.num_envs, device=self.device)
        visible = self.object_visible()  # (n, m)
        positions = self.memory_object_positions * visible[..., None]
        in_choice = info["in_choice_phase"].float()[:, None]
        phase = torch.nn.functional.one_hot(self.current_phase(), len(self.phase_names)).float()
        return {
            "goal_pos": positions[arange, self._target] * in_choice,
            "object_pos": positions.reshape(self.num_envs, -1),
            "phase": phase,
            "time": (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1),
        }
