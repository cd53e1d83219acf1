"""Render the pictures of the task pages: ``docs/images/<family>-partial.png`` and ``-full.png``.

    python docs/pictures.py                      # every family of every page (minutes: the robot scenes are slow)
    python docs/pictures.py t-maze ballet        # only these families (slugs of membench_envs.docgen.PAGES)

For each family of :data:`membench_envs.docgen.PAGES` its representative ID is made twice, in the ``partial`` and
the ``full`` variant, both reset with the shot's seed and stepped with the same actions
(:class:`~membench_envs.docgen.Shot`):

- ``partial``: what the agent observes at the last step: the observation's picture (``image`` / ``rgb``; a 6-channel
  ``rgb`` shows its two cameras side by side), or, for a vector observation, every observation of the episode so
  far as one row of cells (row t = observation t; grey 0, orange positive, blue negative, each column scaled by its
  largest value);
- ``full``: ``env.render()`` of the ``full`` variant (``render_mode="rgb_array"``, with the shot's ``full_kwargs``:
  MIKASA-Robo's overlay, Memory Maze's top camera).

Pictures are scaled to at most 256 px (small ones enlarged by whole pixels) and saved as optimised palette PNGs.
A family whose backend cannot render here gets a line in ``docs/images/missing.json`` instead, which the page shows.
Then run ``membench-envs docs docs`` to update the pages. Needs every extra of membench-envs and Pillow.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

import membench_envs  # noqa: F401  (registers the IDs)
from membench_envs import catalogue, docgen

IMAGES = Path(__file__).resolve().parent / "images"
MAX_SIDE = 256


def _action(env: gym.Env, shot: docgen.Shot) -> Any:
    space = env.action_space
    if shot.action == "random":
        return space.sample()
    if shot.action == "zero":
        return np.zeros(space.shape, dtype=space.dtype) if space.shape else 0
    return shot.action


def _image(x: Any) -> np.ndarray | None:
    """The picture in an observation: an (H, W, 3|6|1) uint8 array, directly or under ``image`` / ``rgb``."""
    if isinstance(x, dict):
        for key in ("image", "rgb"):
            if key in x:
                return _image(x[key])
        return None
    a = np.asarray(x)
    if a.dtype == np.uint8 and a.ndim == 3 and a.shape[-1] in (1, 3, 6) and min(a.shape[:2]) >= 3:
        if a.shape[-1] == 6:
            return np.concatenate([a[..., :3], np.full((a.shape[0], 4, 3), 255, np.uint8), a[..., 3:]], axis=1)
        return np.repeat(a, 3, axis=-1) if a.shape[-1] == 1 else a
    return None


def _vector(x: Any) -> np.ndarray:
    if isinstance(x, dict):
        return np.concatenate([_vector(v) for _, v in sorted(x.items())])
    return np.asarray(x, dtype=np.float64).ravel()


def _cells(history: list[np.ndarray]) -> np.ndarray:
    """Observation vectors as rows of coloured cells (grey 0, orange > 0, blue < 0, per-column scale)."""
    m = np.stack(history)
    scale = np.abs(m).max(axis=0)
    v = np.divide(m, scale, out=np.zeros_like(m), where=scale > 0)
    grey, pos, neg = np.array([200, 200, 200.0]), np.array([230, 120, 20.0]), np.array([30, 80, 200.0])
    rgb = grey + np.clip(v, 0, 1)[..., None] * (pos - grey) + np.clip(-v, 0, 1)[..., None] * (neg - grey)
    rows, cols = m.shape
    cw, ch = max(2, min(24, MAX_SIDE // cols)), max(2, min(24, MAX_SIDE // rows))
    big = np.repeat(np.repeat(rgb, ch, axis=0), cw, axis=1).astype(np.uint8)
    if cw >= 6:
        big[:, ::cw] = 90
    if ch >= 6:
        big[::ch, :] = 90
    return big


def _save(picture: np.ndarray, path: Path) -> None:
    img = Image.fromarray(np.ascontiguousarray(picture[..., :3]))
    pixel_art = img.getcolors(256) is not None  # few colours: enlarge by whole pixels, shrink by area
    w, h = img.size
    if max(w, h) < 160:
        k = max(1, MAX_SIDE // max(w, h))
        img = img.resize((w * k, h * k), Image.Resampling.NEAREST)
    if max(img.size) > MAX_SIDE:
        scale = MAX_SIDE / max(img.size)
        size = (max(1, round(img.size[0] * scale)), max(1, round(img.size[1] * scale)))
        img = img.resize(size, Image.Resampling.BOX if pixel_art else Image.Resampling.LANCZOS)  # BOX keeps 1-px lines
    img.quantize(colors=256 if pixel_art else 96, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def _play(env_id: str, variant: str, shot: docgen.Shot, extra: dict[str, Any]) -> tuple[list[Any], gym.Env]:
    kwargs = {**shot.kwargs, **extra, "obs_variant": variant}
    env = gym.make(env_id, render_mode="rgb_array" if variant == "full" else None, **kwargs)
    obs, _ = env.reset(seed=shot.seed)
    env.action_space.seed(shot.seed)
    seen = [obs]
    for _ in range(shot.steps):
        obs, _, terminated, truncated, _ = env.step(_action(env, shot))
        seen.append(obs)
        if terminated or truncated:
            break
    return seen, env


def render_family(page: docgen.Page, family: docgen.Family) -> None:
    spec = catalogue.get(family.representative or next(s.id for s in catalogue.all_tasks() if _member(page, family, s)))
    seen, env = _play(spec.id, "partial", family.shot, {})
    env.close()
    picture = _image(seen[-1])
    if picture is not None and family.shot.upright:
        picture = picture.transpose(1, 0, 2)
    _save(picture if picture is not None else _cells([_vector(o) for o in seen]), IMAGES / f"{family.slug}-partial.png")
    _, env = _play(spec.id, "full", family.shot, dict(family.shot.full_kwargs))
    frame = env.render()
    env.close()
    if frame is None:
        raise RuntimeError(f"{spec.id}: render() returned None")
    _save(np.asarray(frame), IMAGES / f"{family.slug}-full.png")


def _member(page: docgen.Page, family: docgen.Family, spec: catalogue.TaskSpec) -> bool:
    try:
        return page.key(spec) in family.keys
    except (KeyError, IndexError):
        return False


def main(argv: list[str]) -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    missing_path = IMAGES / "missing.json"
    missing: dict[str, str] = json.loads(missing_path.read_text()) if missing_path.is_file() else {}
    wanted = set(argv)
    known = {f.slug for p in docgen.PAGES for f in p.families}
    if wanted - known:
        print(f"unknown families: {sorted(wanted - known)}; valid: {sorted(known)}", file=sys.stderr)
        return 2
    for page in docgen.PAGES:
        for family in page.families:
            if wanted and family.slug not in wanted:
                continue
            start = time.perf_counter()
            names = [f"{family.slug}-{v}.png" for v in ("partial", "full")]
            try:
                render_family(page, family)
            except Exception as exc:  # a backend that cannot render here: say so on the page
                reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
                for name in names:
                    (IMAGES / name).unlink(missing_ok=True)
                    missing[name] = f"the renderer failed where the pictures were made ({reason})"
                print(f"{family.slug}: FAILED {reason}")
                continue
            for name in names:
                missing.pop(name, None)
            print(f"{family.slug}: {time.perf_counter() - start:.1f} s")
    missing_path.write_text(json.dumps(dict(sorted(missing.items())), indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
