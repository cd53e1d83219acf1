"""POBAX's no-inventory Crafter (``craftax_pixels`` of ``pobax/envs/__init__.py``) on ``craftax`` (full Craftax, the JAX
re-implementation of Crafter; not Craftax-Classic and not the ``crafter`` package) with CPU jax: ``POBAX/Crafter-v0``.
Extra ``[craftax]``.

Game. Craftax's own dynamics (``craftax_step``), world generation (``generate_world``) and rewards, at its default
``EnvParams``: 43 actions (``Discrete(43)``; an action that cannot be taken is a no-op), +1 / +3 / +5 / +8 the first
time each of the 65 achievements (basic / intermediate / advanced / very advanced) is reached, and +-0.1 per point of
health gained or lost. The episode terminates when the agent dies or has beaten the final boss
(``info["success"]`` at the end: the boss was beaten) and is truncated after T = 100000 steps (``max_steps``), the
authors' ``max_steps_in_episode`` and craftax's own ``max_timesteps`` (which craftax reports as a termination; here it
is a truncation).

Partial observation (uint8 (27, 33, 3)): the top 27 pixel rows of Craftax's picture rendered at 3 x 3 pixels per
block: the 9 x 11 blocks around the agent, without the 4 inventory rows below them (inventory counts, health, food,
drink, energy, mana, xp, attributes, potions, armour). The authors' ``PixelCraftaxVecEnvWrapper`` keeps rows
``[:27]`` and declares the shape (27, 33, 3); the paper says the 10 x 10 pixel blocks were "downscaled to 3 x 3" and
the inventory masked. The picture craftax ships (``Craftax-Pixels-v1``, ``BLOCK_PIXEL_SIZE_AGENT = 10`` since craftax's
April 2024 commit) is (130, 110, 3): rows ``[:27]`` of it would be 2.7 block rows of a 110 pixel wide picture, which
the authors' network (built for the declared (27, 33, 3)) could not take, and their code resizes nothing. So their
craftax rendered 3 pixels per block; here craftax's own renderer (``make_craftax_pixel_renderer``) draws with its own
textures resized to 3 pixels (``load_all_textures_given_size(3)``, what ``BLOCK_PIXEL_SIZE_AGENT = 3`` gives), and
rows ``[:27]`` hold exactly the 9 map rows. At 3 pixels per block the 12 inventory rows show which items are held (a
2 x 2 icon each) but not how many, nor the levels of health, food, drink and energy: craftax draws digits
int(0.4 x 3) = 1 pixel wide (measured: health 9 -> 2 or food 9 -> 1 changes no pixel of the picture; holding 1 or 5
wood changes the same 5 pixels). Values: craftax's [0, 1] picture times 255 (the authors feed those floats,
0-255, ``normalize_image=False``), rounded to uint8 here.

Variants:

- ``partial``: the cropped picture above (POBAX's ``craftax_pixels``);
- ``oracle``: the whole picture, uint8 (39, 33, 3): ``partial`` with the 12 inventory pixel rows below it. The authors'
  code has no perfect-memory observation for Crafter (``get_env`` ignores ``perfect_memory`` there); this is the
  paper's §6.2 ceiling input, "regular Crafter with the inventory included in the observations", at the authors'
  3 pixels per block (so it adds which items are held, not the counts or the intrinsics: use ``full`` for those).
  ``info["oracle"]`` is the inventory rows, uint8 (12, 33, 3), in every variant;
- ``full``: ``Craftax-Symbolic-v1``'s observation of the same state, float32 (8268,) (map, items, mobs and light of the
  9 x 11 view, one-hot; inventory, potions, intrinsics, direction, armour, special values): the code's ceiling
  (``craftax_ppo_observable_best.py``: a memoryless PPO on ``craftax``) and the paper's App. B.7. craftax declares
  it in [0, 1], but xp / 10 exceeds 1 and the health of a dead agent is below 0, so the space is unbounded.

Seeding. Environment i's jax PRNG key is built from membench's 64-bit key of its gymnasium seed
(:func:`membench_envs.envs.core.rng.key_from_seed`; its high and low 32-bit words, as ``jax.random.PRNGKey`` lays out
a 64-bit seed); episode e's world comes from ``fold_in(fold_in(key, e), 0)`` and step t's randomness from
``fold_in(fold_in(key, e), t + 1)``, so a batched env reset with seed s plays, in environment i, exactly the episodes
of a single env reset with seed s + i. The authors draw keys by splitting one run key; their worlds differ.

Speed. Every batched step is one jitted ``vmap`` of ``craftax_step`` over the N environments; a finished episode's new
world is generated for that environment only (a jitted loop over the environments to reset), never for all N, and
never at every step (the authors' ``AutoResetEnvWrapper``, and craftax's ``auto_reset=True``, generate a world at
every step and select it when an episode ends: 10-50 times slower on a CPU). The first reset and step of a batch size
compile for 2-3 minutes on a CPU (craftax's step is a large program); later environments of the same size reuse the
compiled code within the process, and jax's persistent compilation cache (``JAX_COMPILATION_CACHE_DIR``) keeps it
across processes. Measured on a loaded 2-core CPU (jax 0.10.2, craftax 1.6.1, random actions, pictures drawn every
step, episode ends included): one environment about 260 steps/s; 64 environments about 1.4k steps/s (compiling:
about 60 s for the reset and 60 s for the step). Generating one world costs about 15-30 ms (0.9 s for 64 at once),
some 20 steps' worth, which is what generating worlds at every step would add. The POBAX budget (5e8 steps, 4 days
at 1.4k steps/s) is out of reach on a CPU.

``render_mode="rgb_array"``: the whole (39, 33, 3) picture enlarged 8 times, (312, 264, 3); ``"ansi"``: the step,
health, food, drink, energy and floor as a line of text.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.pobax_crafter import (
    BLOCK_PIXELS,
    COLUMNS,
    EPISODE_STEPS,
    INVENTORY_ROWS,
    MAP_ROWS,
    NUM_ACTIONS,
    PARAMS,
    SYMBOLIC_DIM,
)
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv

ENV_ID = "POBAX/Crafter-v0"
#: Pixel rows kept by the crop (the 9 map rows) and those of the whole picture.
CROP_ROWS = MAP_ROWS * BLOCK_PIXELS
PICTURE_SHAPE = ((MAP_ROWS + INVENTORY_ROWS) * BLOCK_PIXELS, COLUMNS * BLOCK_PIXELS, 3)
RENDER_SCALE = 8


@functools.lru_cache(maxsize=1)
def _kernels() -> SimpleNamespace:
    """The jitted functions (built once per process, compiled once per batch size): world generation for the
    environments to reset, the batched step, the pictures and the symbolic observation."""
    import jax
    import jax.numpy as jnp
    from craftax.craftax import constants, renderer
    from craftax.craftax.craftax_state import EnvParams, StaticEnvParams
    from craftax.craftax.game_logic import craftax_step, has_beaten_boss
    from craftax.craftax.world_gen.world_gen import generate_world

    params, static = EnvParams(), StaticEnvParams()
    textures = constants.load_all_textures_given_size(BLOCK_PIXELS)
    loader = renderer.load_all_textures  # craftax's renderer takes its textures from a table of 10, 16 and 64 px
    renderer.load_all_textures = lambda: {BLOCK_PIXELS: textures}
    try:
        render = renderer.make_craftax_pixel_renderer(BLOCK_PIXELS)
    finally:
        renderer.load_all_textures = loader

    def episode_key(keydata, episode):
        return jax.random.fold_in(keydata, episode)  # keydata: a raw threefry key, as jax.random.PRNGKey makes

    def rows(mask, a):
        return mask.reshape((-1,) + (1,) * (a.ndim - 1))

    def reset_rows(state, keydata, episode, mask):
        """A new world for each environment where ``mask`` is True, one at a time (the others keep theirs)."""
        order = jnp.nonzero(mask, size=mask.shape[0], fill_value=0)[0]

        def one(j, st):
            i = order[j]
            world = generate_world(jax.random.fold_in(episode_key(keydata[i], episode[i]), 0), params, static)
            return jax.tree.map(lambda a, b: a.at[i].set(b), st, world)

        return jax.lax.fori_loop(0, mask.sum(), one, state)

    def step(state, actions, keydata, episode, t, active):
        keys = jax.vmap(lambda k, e, s: jax.random.fold_in(episode_key(k, e), s + 1))(keydata, episode, t)
        new, reward = jax.vmap(lambda k, s, a: craftax_step(k, s, a, params, static))(keys, state, actions)
        terminated = (new.player_health <= 0) | jax.vmap(lambda s: has_beaten_boss(s, static))(new)
        new = jax.tree.map(lambda a, b: jnp.where(rows(active, a), a, b), new, state)
        return new, reward, terminated & active

    def pictures(state):
        return jnp.clip(jnp.round(jax.vmap(render)(state)), 0, 255).astype(jnp.uint8)

    def template(n):
        one = jax.eval_shape(lambda k: generate_world(k, params, static), jax.random.PRNGKey(0))
        return jax.tree.map(lambda s: jnp.zeros((n, *s.shape), s.dtype), one)

    return SimpleNamespace(
        jnp=jnp,
        template=template,
        reset_rows=jax.jit(reset_rows, donate_argnums=0),
        step=jax.jit(step, donate_argnums=0),
        pictures=jax.jit(pictures),
        symbolic=jax.jit(jax.vmap(renderer.render_craftax_symbolic)),
    )


class CrafterCore(BatchedCore):
    """N Craftax games as one batched jax state (the numpy arrays of :class:`BatchedCore` hold the seeds' keys,
    episode and step counters)."""

    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, max_steps: int = EPISODE_STEPS):
        super().__init__(num_envs)
        self.T = int(max_steps)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        inventory = (PICTURE_SHAPE[0] - CROP_ROWS, *PICTURE_SHAPE[1:])
        self.obs_spaces = {
            "partial": gym.spaces.Box(0, 255, (CROP_ROWS, *PICTURE_SHAPE[1:]), np.uint8),
            "oracle": gym.spaces.Box(0, 255, PICTURE_SHAPE, np.uint8),
            "full": gym.spaces.Box(-np.inf, np.inf, (SYMBOLIC_DIM,), np.float32),
        }
        self.oracle_dim = int(np.prod(inventory))
        require("jax", "craftax", env_id=ENV_ID)  # (here, not in the cached _kernels: checked at every make)
        require("craftax", "craftax", env_id=ENV_ID)
        self._k = _kernels()
        self.state: Any = None
        self._pictures: np.ndarray | None = None
        self._symbolic: np.ndarray | None = None

    # --- exact resume (membench_agents.runs.envstate) -----------------------------------------------------------------
    #: The games are one batched jax state (a pytree of device arrays, outside the plain-data walk): saved through the
    #: two methods below as its leaves, numpy arrays in the order of the template's tree. The jitted kernels are code
    #: and the pictures caches, so neither is saved; the seeds' keys and the counters are plain attributes.
    membench_external_state = ("_k", "state", "_pictures", "_symbolic")

    def membench_get_external(self) -> dict[str, Any]:
        import jax

        if self.state is None:
            return {"leaves": None}
        return {"leaves": [np.array(leaf) for leaf in jax.tree_util.tree_leaves(self.state)]}

    def membench_set_external(self, saved: dict[str, Any]) -> None:
        import jax

        self._changed()
        leaves = saved["leaves"]
        if leaves is None:
            self.state = None
            return
        template = self._k.template(self.num_envs)
        want = jax.tree_util.tree_leaves(template)
        if len(leaves) != len(want) or any(
            np.shape(a) != w.shape or np.asarray(a).dtype != w.dtype for a, w in zip(leaves, want, strict=False)
        ):
            raise ValueError(
                f"{ENV_ID}: the saved Craftax state does not fit {self.num_envs} environments of this craftax "
                "version; it was saved from another configuration"
            )
        treedef = jax.tree_util.tree_structure(template)
        self.state = jax.tree_util.tree_unflatten(treedef, [self._k.jnp.asarray(a) for a in leaves])

    def _keydata(self) -> np.ndarray:
        """Each environment's key as jax's threefry key data: the high and low 32-bit words of its 64-bit key."""
        keys = self.keys.astype(np.uint64)
        return np.stack([keys >> np.uint64(32), keys & np.uint64(0xFFFFFFFF)], axis=1).astype(np.uint32)

    def _changed(self) -> None:
        self._pictures = self._symbolic = None

    def _mask(self, idx) -> np.ndarray:
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[idx] = True
        return mask

    def _new_episodes(self, idx):
        if self.state is None:
            self.state = self._k.template(self.num_envs)
        episode = self.episode.astype(np.int32)
        self.state = self._k.reset_rows(self.state, self._keydata(), episode, self._mask(idx))
        self._changed()

    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        a = np.zeros(self.num_envs, dtype=np.int32)
        a[sl] = actions
        active = np.ones(self.num_envs, dtype=bool) if idx is None else self._mask(idx)
        self.state, reward, terminated = self._k.step(
            self.state, a, self._keydata(), self.episode.astype(np.int32), self.t.astype(np.int32), active
        )
        self._changed()
        t = self.t[sl] + 1
        self.t[sl] = t
        terminated = np.asarray(terminated)[sl]
        if terminated.any():
            self.success[sl] = terminated & (np.asarray(self.state.player_health)[sl] > 0)
        return np.asarray(reward, dtype=np.float64)[sl], terminated, ~terminated & (t >= self.T)

    def pictures(self) -> np.ndarray:
        """Every environment's whole picture, uint8 (N, 39, 33, 3)."""
        if self._pictures is None:
            self._pictures = np.asarray(self._k.pictures(self.state))
        return self._pictures

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        if variant == "full":
            if self._symbolic is None:
                self._symbolic = np.asarray(self._k.symbolic(self.state), dtype=np.float32)
            return self._symbolic[sl]
        pictures = self.pictures()[sl]
        return pictures[:, :CROP_ROWS] if variant == "partial" else pictures

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.pictures()[sl, CROP_ROWS:]

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        if self.state is None:
            return np.zeros((PICTURE_SHAPE[0] * RENDER_SCALE, PICTURE_SHAPE[1] * RENDER_SCALE, 3), dtype=np.uint8)
        picture = self.pictures()[i]
        return np.repeat(np.repeat(picture, RENDER_SCALE, axis=0), RENDER_SCALE, axis=1)

    def render_ansi(self, i: int) -> str:
        if self.state is None:
            return f"Craftax: not reset yet (T={self.T})\n"
        s = self.state
        values = [float(np.asarray(getattr(s, f"player_{name}"))[i]) for name in ("health", "food", "drink", "energy")]
        floor = int(np.asarray(s.player_level)[i])
        return (
            f"Craftax t={self.t[i]}/{self.T} health={values[0]:g} food={values[1]:g} drink={values[2]:g} "
            f"energy={values[3]:g} floor={floor}\n"
        )


class POBAXCrafter(NativeEnv):
    """POBAX's no-inventory Crafter (single environment). Kwargs: ``PARAMS`` of
    :mod:`membench_envs.catalogue.pobax_crafter`."""

    core_cls = CrafterCore


class POBAXCrafterVector(NativeVectorEnv):
    """POBAX's no-inventory Crafter, N environments in one jitted step."""

    core_cls = CrafterCore
