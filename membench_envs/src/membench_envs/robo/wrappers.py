"""The user-facing MIKASA-Robo environment and its debug render overlays.

:class:`MikasaRoboEnv` is what ``gym.make("MIKASA/...")`` returns. It adds as little as possible to the raw
:class:`~membench_envs.robo.base.MemoryTabletopEnv` (which already builds the final observation dict, so the
variants cost nothing here):

- **Single environment** (``num_envs=1``, the CPU path; default): the standard gymnasium API with *unbatched numpy*
  values: observation dict of arrays (``rgb`` uint8 (128, 128, 6), ``joints`` float32 (25,), ``oracle`` int64 (k,),
  or float32 for a continuous oracle, ``state`` float32 (D,)), reward ``float``, ``terminated``/``truncated``
  ``bool``, and info with ``oracle`` (int64 (k,); float32 (k,) for a continuous oracle), ``success`` /
  ``success_once`` (bool), ``phase`` (int, index into ``env.unwrapped.phase_names``),
  ``elapsed_steps`` (int) and the task's evaluation terms.
- **Batched** (``num_envs > 1`` on the GPU, or ``batched=True``): ManiSkill's native format, *torch tensors on the
  simulation device* with a leading ``num_envs`` dimension, no copy through numpy. Actions are accepted as torch or
  numpy (num_envs, A).

Actions are checked: a wrong shape, a non-finite value or a value outside the action space raise ``ValueError``
(mentioning "action"); pass ``clip_actions=True`` for ManiSkill's silent clipping instead.

:class:`RenderOverlay` draws the current step, phase, target (colour / shape / cup), reward and reward terms on
``render()`` frames. It reads them from ``env.unwrapped``, so it works on this wrapper and on the raw ManiSkill env,
e.g. under ManiSkill's own recorder: ``RecordEpisode(RenderOverlay(raw_env), "videos", save_trajectory=False)``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from membench_envs.envs.core.params import check_seed

_FONT_CACHE: dict[int, Any] = {}


def _to_numpy_unbatched(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        arr = value.detach().cpu().numpy()
        arr = arr[0] if arr.ndim >= 1 and arr.shape[0] == 1 else arr
        if arr.ndim == 0:
            return arr.item()
        return arr
    if isinstance(value, dict):
        return {k: _to_numpy_unbatched(v) for k, v in value.items()}
    return value


class MikasaRoboEnv(gym.Wrapper):
    """membench's MIKASA-Robo environment: unbatched numpy for one CPU env, batched torch otherwise."""

    env: Any  # a ManiSkill env (untyped): batched values, a seed per sub-env

    def __init__(self, env: gym.Env, batched: bool | None = None, clip_actions: bool = False):
        super().__init__(env)
        base: Any = env.unwrapped  # ManiSkill's BaseEnv
        self.batched = bool(base.num_envs > 1 if batched is None else batched)
        if not self.batched and base.num_envs != 1:
            raise ValueError(f"batched=False needs num_envs=1, got num_envs={base.num_envs}")
        self.clip_actions = bool(clip_actions)
        self.num_envs = base.num_envs
        self.single_observation_space = base.single_observation_space
        self.single_action_space = base.single_action_space
        if self.batched:
            self.observation_space = base.observation_space
            self.action_space = base.action_space
        else:
            self.observation_space = base.single_observation_space
            self.action_space = base.single_action_space
        self.metadata = {**base.metadata, "render_fps": int(base.control_freq)}
        self._low = np.asarray(self.single_action_space.low, dtype=np.float32)
        self._high = np.asarray(self.single_action_space.high, dtype=np.float32)
        self._low_t: torch.Tensor | None = None

    @property
    def device(self) -> torch.device:
        return self.env.unwrapped.device

    # --- actions --------------------------------------------------------------------------------------------
    def _check_action(self, action: Any):
        shape = self.single_action_space.shape
        if self.batched:
            a = torch.as_tensor(action, device=self.device, dtype=torch.float32)
            expected = (self.num_envs, *shape)
            if tuple(a.shape) != expected and not (self.num_envs == 1 and tuple(a.shape) == shape):
                raise ValueError(f"action has shape {tuple(a.shape)}, expected {expected} for {self.action_space}")
            a = a.reshape(expected)
            if self._low_t is None:
                self._low_t = torch.as_tensor(self._low, device=self.device)
                self._high_t = torch.as_tensor(self._high, device=self.device)
            if self.clip_actions:
                return torch.clamp(torch.nan_to_num(a), self._low_t, self._high_t)
            if not bool(torch.isfinite(a).all()):
                raise ValueError("action contains NaN or inf")
            if bool(((a < self._low_t - 1e-6) | (a > self._high_t + 1e-6)).any()):
                raise ValueError(
                    f"action outside the action space {self.single_action_space} (pass clip_actions=True to clip)"
                )
            return a
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        arr = np.asarray(action, dtype=np.float32)
        if arr.shape != shape:
            raise ValueError(f"action has shape {arr.shape}, expected {shape} for action space {self.action_space}")
        if self.clip_actions:
            return np.clip(np.nan_to_num(arr), self._low, self._high)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"action {arr} contains NaN or inf")
        if np.any(arr < self._low - 1e-6) or np.any(arr > self._high + 1e-6):
            raise ValueError(f"action {arr} is outside the action space {self.action_space} (clip_actions=True clips)")
        return arr

    # --- gymnasium API ----------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        seeds: int | list[int | None] | None
        if isinstance(seed, (list, tuple)):
            seeds = [check_seed(s, "reset") for s in seed]
        else:
            seeds = check_seed(seed, "reset")
        if self.batched and isinstance(seeds, (int, np.integer)) and self.num_envs > 1:
            seeds = [int(seeds) + i for i in range(self.num_envs)]  # gymnasium's convention: env i gets seed + i
        obs, info = self.env.reset(seed=seeds, options=options)
        if self.batched:
            return obs, info
        return _to_numpy_unbatched(obs), self._info(info)

    def step(self, action):
        a = self._check_action(action)
        obs, reward, terminated, truncated, info = self.env.step(a)
        if self.batched:
            return obs, reward.float(), terminated, truncated, info
        return (
            _to_numpy_unbatched(obs),
            float(reward.reshape(-1)[0]),
            bool(terminated.reshape(-1)[0]),
            bool(truncated.reshape(-1)[0]),
            self._info(info),
        )

    @staticmethod
    def _info(info: dict) -> dict:
        out = _to_numpy_unbatched(info)
        for key in ("success", "success_once"):
            if key in out:
                out[key] = bool(out[key])
        if "oracle" in out:  # indices stay int64, continuous oracles (Intercept's velocity) float32
            oracle = np.asarray(out["oracle"])
            dtype = np.float32 if np.issubdtype(oracle.dtype, np.floating) else np.int64
            out["oracle"] = np.atleast_1d(oracle.astype(dtype))
        return out

    def render(self):
        frame = self.env.render()
        if self.batched or not isinstance(frame, torch.Tensor):
            return frame
        return frame.detach().cpu().numpy()[0]


# --------------------------------------------------------------------------------------------------------------
# render overlays
# --------------------------------------------------------------------------------------------------------------
def _font(size: int):
    if size not in _FONT_CACHE:
        from PIL import ImageFont

        try:
            _FONT_CACHE[size] = ImageFont.load_default(size=size)
        except TypeError:  # Pillow < 10.1
            _FONT_CACHE[size] = ImageFont.load_default()
    return _FONT_CACHE[size]


def draw_lines(frame: np.ndarray, lines: list[str], size: int | None = None) -> np.ndarray:
    """Write ``lines`` (white on a translucent black box) in the top-left corner of an (H, W, 3) uint8 frame."""
    from PIL import Image, ImageDraw

    h = frame.shape[0]
    size = size or max(10, h // 32)
    img = Image.fromarray(np.ascontiguousarray(frame[..., :3]).astype(np.uint8))
    draw = ImageDraw.Draw(img, "RGBA")
    font = _font(size)
    width = max((draw.textlength(line, font=font) for line in lines), default=0)
    draw.rectangle([0, 0, int(width) + 8, (size + 3) * len(lines) + 6], fill=(0, 0, 0, 140))
    for i, line in enumerate(lines):
        draw.text((4, 3 + i * (size + 3)), line, fill=(255, 255, 255, 255), font=font)
    out = np.asarray(img)
    if frame.shape[-1] == 4:
        out = np.concatenate([out, frame[..., 3:]], axis=-1)
    return out


class RenderOverlay(gym.Wrapper):
    """Draw step, phase, target, reward and reward terms on every ``render()`` frame (debugging, videos)."""

    def render(self):
        frame = self.env.render()
        if frame is None:
            return frame
        base = self.env.unwrapped
        if isinstance(frame, torch.Tensor):
            arr = frame.detach().cpu().numpy()
            drawn = np.stack([draw_lines(arr[i], base.overlay_lines(i)) for i in range(arr.shape[0])])
            return torch.as_tensor(drawn, device=frame.device)
        arr = np.asarray(frame)
        if arr.ndim == 4:
            return np.stack([draw_lines(arr[i], base.overlay_lines(i)) for i in range(arr.shape[0])])
        return draw_lines(arr, base.overlay_lines(0))
