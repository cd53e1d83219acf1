"""The episodic replay of the off-policy algorithms (SAC and DTQN): each environment's stream of steps in order.

Per environment, a ring of rows on the training device holds the environment's experience as it happened: one
row per step (the observation acted on, the action, the reward, ``terminated``, ``episode_start``), and after
the last step of every episode one more row with its final observation (``is_final``; action, reward and
``terminated`` zero). So the row after any step holds that step's next observation, and consecutive rows are a
sequence of steps with their next observations, episode starts marked. Besides the ``capacity`` rows of past
steps and final observations, one row holds the observation each environment is about to act on (its action
is written when the step is taken): ``rows = capacity + 1``. When the ring is full, every new row replaces the
oldest.

Two ways of sampling windows of consecutive rows, one per algorithm:

* :meth:`EpisodicReplay.sample_sequences` (SAC): windows of W rows anywhere in the stored steps, crossing
  episode boundaries (the recurrent cores reset at the marked episode starts), the environment drawn first,
  then the window; windows whose first loss row holds a final observation are drawn again.
* :meth:`EpisodicReplay.sample_episode_windows` (DTQN): windows of K steps of one episode, at the window starts
  of the DTQN authors' buffer (in an episode of L >= K steps the windows starting at steps 0 .. L-K; in a
  shorter episode the one window starting at its first step, masked after its last step), drawn uniformly
  among all stored ones. These starts are indexed as the steps arrive, so the replay is built with K
  (``episode_window``); a replay without it samples no episode windows.

:meth:`EpisodicReplay.state_dict` is plain data (tensors and numbers): a run resumes exactly.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from torch import Tensor

from membench_agents.algos.common import tree_map

#: The layout :meth:`EpisodicReplay.state_dict` writes; a saved replay in another layout is refused.
FORMAT = "membench.episodic-replay/1"


class EpisodicReplay:
    """``num_envs`` rings of ``capacity + 1`` rows on ``device`` (see the module docstring).

    Tensors ``[num_envs, rows, ...]``: ``obs`` (a tree of them for dict observations, of ``obs_example``'s
    dtypes), ``actions`` (``action_shape``, ``action_dtype``), ``rewards`` (float32), ``terminated``,
    ``episode_start``, ``is_final``; and, with ``episode_window`` K, ``window_start`` (the rows where a
    K-step episode window starts). ``pos[n]`` is the row of the observation environment n is about to act on,
    ``size[n]`` how many rows before it hold steps or final observations (at most ``capacity``).

    Use: :meth:`start` with the observations after the environments' reset, then :meth:`add` after every vector
    step.
    """

    FIELDS = ("actions", "rewards", "terminated", "episode_start", "is_final")

    def __init__(
        self,
        num_envs: int,
        capacity: int,
        obs_example: Any,
        action_shape: tuple[int, ...] = (),
        action_dtype: torch.dtype = torch.long,
        device: str | torch.device = "cpu",
        episode_window: int | None = None,
    ):
        if capacity < 1:
            raise ValueError(f"a replay needs at least one row per environment, got capacity {capacity}")
        if episode_window is not None and not 1 <= episode_window < capacity:
            raise ValueError(f"episode_window {episode_window} must be in [1, capacity) = [1, {capacity})")
        N, R, dev = num_envs, capacity + 1, torch.device(device)
        self.num_envs, self.capacity, self.rows, self.device = N, capacity, R, dev
        self.episode_window = episode_window
        self.obs = tree_map(lambda o: torch.zeros((N, R, *o.shape), dtype=o.dtype, device=dev), obs_example)
        self.actions = torch.zeros((N, R, *action_shape), dtype=action_dtype, device=dev)
        self.rewards = torch.zeros((N, R), device=dev)
        self.terminated = torch.zeros((N, R), dtype=torch.bool, device=dev)
        self.episode_start = torch.zeros((N, R), dtype=torch.bool, device=dev)
        self.is_final = torch.zeros((N, R), dtype=torch.bool, device=dev)
        self.pos = torch.zeros(N, dtype=torch.long, device=dev)
        self.size = torch.zeros(N, dtype=torch.long, device=dev)
        self._envs = torch.arange(N, device=dev)
        if episode_window is not None:
            self.window_start = torch.zeros((N, R), dtype=torch.bool, device=dev)
            self.episode_steps = torch.zeros(N, dtype=torch.long, device=dev)  # steps of each episode so far

    # -- writing ---------------------------------------------------------------------------------------------
    def _put(self, envs: Tensor, obs: Any, episode_start: Tensor | bool, is_final: bool) -> None:
        """Write a new row at ``pos`` of the environments ``envs``: an observation without a step yet."""
        rows = self.pos[envs]
        for buf, o in zip(_leaves(self.obs), _leaves(obs), strict=True):
            buf[envs, rows] = o.to(buf.device, buf.dtype)
        self.actions[envs, rows] = 0
        self.rewards[envs, rows] = 0.0
        self.terminated[envs, rows] = False
        self.episode_start[envs, rows] = episode_start
        self.is_final[envs, rows] = is_final
        if self.episode_window is not None:
            self.window_start[envs, rows] = False  # an overwritten row starts no window

    def _advance(self, envs: Tensor | None = None) -> None:
        """The rows at ``pos`` are kept: move on (over the oldest row once the ring is full)."""
        if envs is None:
            self.pos.add_(1).remainder_(self.rows)
            self.size.add_(1).clamp_(max=self.capacity)
        else:
            self.pos[envs] = (self.pos[envs] + 1) % self.rows
            self.size[envs] = torch.clamp(self.size[envs] + 1, max=self.capacity)

    def start(self, obs: Any) -> None:
        """The observations every environment acts on first (after its reset): each starts an episode."""
        self._put(self._envs, obs, True, False)

    def add(
        self, actions: Tensor, rewards: Tensor, terminated: Tensor, done: Tensor, final_obs: Any, next_obs: Any
    ) -> None:
        """One vector step: the actions taken on the current observations, their rewards and ``terminated``;
        for the environments whose episode ended (``done``), the final observation (``final_obs``: the rows
        of the done environments in order, None when none ended); then the observations acted on next
        (``next_obs``, an episode start where ``done``)."""
        envs, p = self._envs, self.pos
        self.actions[envs, p] = actions.to(self.actions.dtype)
        self.rewards[envs, p] = rewards.to(self.rewards.dtype)
        self.terminated[envs, p] = terminated
        if self.episode_window is not None:
            self._index_windows(p, done)
        self._advance()
        if final_obs is not None:
            ended = torch.nonzero(done).squeeze(1)
            self._put(ended, final_obs, False, True)
            self._advance(ended)
        self._put(envs, next_obs, done, False)

    def _index_windows(self, p: Tensor, done: Tensor) -> None:
        """Mark the episode windows the step just taken (row ``p``) completes: the window of the episode's
        last K steps once it has K, or, where an episode of fewer than K steps ends, the one from its first step
        (a window is complete when the observation after its last step is stored: the next row, written now)."""
        K = cast(int, self.episode_window)  # (called only when there is one)
        t = self.episode_steps  # the index of this step in its episode
        full = t >= K - 1
        start = torch.where(full, p - (K - 1), p - t) % self.rows
        self.window_start[self._envs, start] |= full | done
        self.episode_steps = torch.where(done, 0, t + 1)

    # -- SAC: sequences of consecutive steps -------------------------------------------------------------------
    def can_sample(self, window: int) -> bool:
        """Whether every environment holds a window of ``window`` rows with a step at any row (``window + 1``
        rows suffice: two final observations are never adjacent)."""
        return bool((self.size > window).all())

    def sample_sequences(
        self, batch_size: int, window: int, first_loss: int, generator: torch.Generator
    ) -> dict[str, Any]:
        """``batch_size`` windows of ``window`` consecutive stored rows, time-major (``[window, batch, ...]``):
        ``obs``, ``actions``, ``rewards``, ``terminated``, ``episode_start``, ``is_final``.

        Environments are drawn uniformly, then a start uniformly among the windows inside the stored rows whose
        row ``first_loss`` is a step (not a final observation); windows may cross episodes. ``generator`` lives
        on the replay's device."""
        N, R, dev = self.num_envs, self.rows, self.device
        env = torch.randint(N, (batch_size,), generator=generator, device=dev)
        start = torch.zeros(batch_size, dtype=torch.long, device=dev)
        todo = torch.ones(batch_size, dtype=torch.bool, device=dev)
        while True:  # rejection sampling: redraw the windows whose first loss row holds a final observation
            n_valid = self.size[env] - window + 1
            oldest = (self.pos[env] - self.size[env]) % R
            u = torch.rand(batch_size, generator=generator, device=dev)
            draw = (oldest + (u * n_valid).long().clamp(max=n_valid - 1)) % R
            start = torch.where(todo, draw, start)
            todo = self.is_final[env, (start + first_loss) % R]
            if not bool(todo.any()):
                break
        rows = (start.unsqueeze(0) + torch.arange(window, device=dev).unsqueeze(1)) % R  # [W, B]
        envs = env.unsqueeze(0).expand_as(rows)
        batch = {name: getattr(self, name)[envs, rows] for name in self.FIELDS}
        batch["obs"] = tree_map(lambda b: b[envs, rows], self.obs)
        return batch

    # -- DTQN: windows of K steps of one episode ----------------------------------------------------------------
    def num_windows(self) -> int:
        """How many episode windows are stored (0 without ``episode_window``)."""
        return int(self.window_start.sum()) if self.episode_window is not None else 0

    def sample_episode_windows(self, batch_size: int, generator: torch.Generator) -> dict[str, Any]:
        """``batch_size`` episode windows drawn uniformly among the stored ones, batch-major: ``obs``
        ``[B, K + 1, ...]`` (positions 0..K-1: the window's steps, 1..K: the observation after each),
        ``actions``, ``rewards``, ``terminated`` and ``mask`` ``[B, K]`` (the positions that are steps of the
        window's episode: all K, or those up to the end of an episode shorter than K; the rows after it are
        whatever the ring holds there). The draw is one ``torch.randint`` from ``generator``, on its device."""
        if self.episode_window is None:
            raise ValueError("this replay was built without episode_window, so it indexes no episode windows")
        K, R, dev = self.episode_window, self.rows, self.device
        starts = torch.nonzero(self.window_start.reshape(-1)).squeeze(1)
        if len(starts) == 0:
            raise ValueError("the replay holds no complete episode window yet (see num_windows)")
        pick = starts[torch.randint(len(starts), (batch_size,), generator=generator, device=generator.device).to(dev)]
        env, first = (pick // R).unsqueeze(1), pick % R
        rows = (first.unsqueeze(1) + torch.arange(K + 1, device=dev)) % R  # [B, K + 1]
        steps = rows[:, :K]
        mask = (~self.is_final[env, steps]).long().cumprod(1).bool()  # up to the episode's final observation
        return {
            "obs": tree_map(lambda b: b[env, rows], self.obs),
            "actions": self.actions[env, steps],
            "rewards": self.rewards[env, steps],
            "terminated": self.terminated[env, steps],
            "mask": mask,
        }

    # -- checkpoints -----------------------------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes held by the replay's buffers."""
        return sum(t.numel() * t.element_size() for t in (*_leaves(self.obs), *self._buffers()))

    def _buffers(self) -> list[Tensor]:
        return [getattr(self, name) for name in self._buffer_names()]

    def _buffer_names(self) -> tuple[str, ...]:
        return self.FIELDS + (("window_start",) if self.episode_window is not None else ())

    def state_dict(self) -> dict[str, Any]:
        """The filled rows (tensors, loadable with ``weights_only=True``), the positions, and the layout."""
        used = int(self.size.max()) + 1 if self.size.numel() else 0  # rows 0 .. size are written before a wrap
        d = {
            "format": FORMAT,
            "rows": self.rows,
            "episode_window": self.episode_window,
            "used": used,
            "pos": self.pos.clone(),
            "size": self.size.clone(),
            "obs": tree_map(lambda b: b[:, :used].clone(), self.obs),
            **{name: getattr(self, name)[:, :used].clone() for name in self._buffer_names()},
        }
        if self.episode_window is not None:
            d["episode_steps"] = self.episode_steps.clone()
        return d

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` into a replay of the same shape; a saved replay that does not fit (another
        layout, number of environments, capacity, episode window or observation) is a ValueError naming it."""
        if d.get("format") != FORMAT:
            raise ValueError(
                f"the saved replay is in another layout ({d.get('format')!r}; this membench reads {FORMAT!r})"
            )
        N, R = self.num_envs, self.rows
        if d["rows"] != R or tuple(d["pos"].shape) != (N,):
            raise ValueError(
                f"the saved replay has {d['pos'].numel()} environments x {d['rows']} rows; this config's has {N} x {R}"
            )
        if d["episode_window"] != self.episode_window:
            raise ValueError(
                f"the saved replay indexes episode windows of {d['episode_window']} steps; this "
                f"config's, of {self.episode_window}"
            )
        used = int(d["used"])
        saved_obs, obs = _leaves(d["obs"]), _leaves(self.obs)
        if len(saved_obs) != len(obs):
            raise ValueError(f"the saved replay's observations have {len(saved_obs)} arrays; this config's, {len(obs)}")
        pairs = [*zip(obs, saved_obs, strict=True), *((getattr(self, n), d[n]) for n in self._buffer_names())]
        for buf, saved in pairs:
            if tuple(saved.shape) != (N, used, *buf.shape[2:]):
                raise ValueError(
                    f"a saved replay array has shape {tuple(saved.shape)}; this config's replay needs "
                    f"{(N, used, *buf.shape[2:])}"
                )
        for buf, saved in pairs:
            buf[:, :used] = saved.to(self.device, buf.dtype)
        self.pos.copy_(d["pos"])
        self.size.copy_(d["size"])
        if self.episode_window is not None:
            self.episode_steps.copy_(d["episode_steps"])


def _leaves(tree) -> list[Tensor]:
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k])]
    return [tree]


__all__ = ["FORMAT", "EpisodicReplay"]
