"""`make bench-perf` section `pobax`: env-steps/s of every native POBAX task (numpy) at N = 1, 64, 1024, against the
authors' JAX implementation on the same CPU in the same run where it is available.

Ours, one process, one thread (``OMP_NUM_THREADS=1``), the default ``partial`` observation, uniformly random actions
drawn before timing, best of 3 repeats after a warm-up:
  - N = 1: the single env (``gym.make(id).unwrapped``: no checker wrappers), ``reset()`` when an episode ends;
  - N > 1: the native batched env, ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``
    (gymnasium's NEXT_STEP autoreset).

The authors' (``taodav/pobax`` run from source, its NAVIX fork ``taodav/navix`` for the mazes), in a subprocess of a
Python that has jax, so jax never enters membench's environment: per task and N, one ``jax.jit`` of a ``lax.scan``
over the steps (``jax.vmap`` over N envs for N > 1; no vmap at N = 1), random actions drawn before timing and fed as
the scan's input, a fresh key per step split per env (as their PPO loop does), each step's observation and reward
summed into the carry (without a consumer XLA would drop the observation's computation). Compile time (trace, lower,
compile) is measured apart and reported in its own column; after one untimed run, the rate is the best of 3 runs of
the compiled scan (with ``block_until_ready``; 1 run where the untimed one took over SLOW_S). XLA is asked for one
CPU thread (``XLA_FLAGS`` below), the same as ours. Both sides report CPU time / wall time of the repeat kept: below
1 the process waited for a core (the 2-core machine is shared), above 1 it used a second thread.
Their envs, as their ``get_env`` builds them, without the agent-side wrappers (``LogWrapper``,
``NamedObservationWrapper``, reward normalisation):
  - ``tmaze_10`` (``TMaze(hallway_length=10)``), ``rocksample_11_11`` / ``rocksample_15_15`` (``RockSample`` from
    their JSON configs, map keys 2025 / 2026): the raw env's ``step_env``, then ``reset_env`` and a select on
    ``done``, i.e. gymnax's auto-reset ``step`` as it was before gymnax 1.0. Their repository's ``step`` cannot run
    (their ``TimeLimitWrapper`` calls gymnax 1.0's ``Environment.step``, which reads a ``state.time`` these states
    lack), so the episode cap of 1000 steps is not applied on their side. Ours truncates at 1000: random actions
    reach it in about 1% of T-Maze episodes and 15% / 38% of RockSample 11x11 / 15x15 ones (measured with ours,
    256 envs x 3000 steps); on their side it would change nothing per step (a reset is computed every step anyway);
  - ``battleship_10`` / ``_5`` / ``_3``: ``Battleship(...).step`` (their own auto-reset step, which runs);
  - ``Navix-DMLab-Maze-0X-v0`` in ``NavixGymnaxWrapper`` and ``MazeFoVWrapper`` (what ``get_env`` makes of it):
    NAVIX's step with its own auto-reset, the (3, 3, 2) first-person view of their HEAD and the field-of-view
    ray cast.
Stubbed in the worker, because importing their modules pulls them in but these envs never call them: ``brax``
(imported by ``pobax.envs.wrappers.gymnax`` for its Brax wrappers), ``rlax``, ``distrax`` and ``wandb`` (imported
by NAVIX's ``agents`` and ``experiment`` modules); ``pobax.envs`` and ``pobax.envs.wrappers`` are loaded as bare
packages (their ``__init__`` imports every env family: Brax, Craftax, Madrona, ...). Their pins are not used: the
worker needs ``jax[cpu] flax gymnax chex pillow six`` (gymnax 1.0.1 imports ``six`` without declaring it; measured
with jax 0.10.2, flax 0.12.8, gymnax 1.0.1).

What differs and bears on speed (beside numpy against XLA):
  - RockSample: their rocks are drawn from the key given (2025 / 2026 here), ours are the constant maps of the
    paper's seeds; same sizes and rock counts, and the positions do not change the work per step.
  - Battleship: random actions ignore the mask on both sides (repeat shots are allowed and cost a step), so random
    episodes last about 340 / 59 / 14 shots at 10 x 10 / 5 x 5 / 3 x 3 (measured with ours) instead of at most
    size²; the per-step work is the same.
  - Mazes: our default observation is the paper-era 2 x 3 window (12 values, no ray cast, no view cone) and our goal
    is drawn every episode (``random_goal_pos=True``, the paper's setting); theirs is HEAD's 3 x 3 window passed
    through NAVIX's view cone and their ray-casting ``MazeFoVWrapper``, with the goal fixed at (1, 1) (their HEAD
    default; their maze IDs take no goal option). Both truncate at T (theirs through NAVIX's ``max_steps``).
  - Under ``vmap`` a ``lax.cond`` on a batched predicate becomes a select that computes both branches: NAVIX's
    auto-reset then computes a reset at every step for N > 1 (not at N = 1), and gymnax-style envs (T-Maze,
    RockSample, Battleship) compute one at every step for any N (their step selects between the two results). Ours
    resets only the envs whose episode ended, so short random episodes (Battleship 5 x 5 and 3 x 3) cost us more
    per step than long ones.
  - Ours returns numpy arrays to Python after every step (what a PyTorch agent consumes); theirs stays inside one
    XLA program, which is how their agents use it (the agent is jitted into the same scan). Their number is an
    upper bound on what a Python/PyTorch agent would see from it.

Usage: python experiments/perf_pobax.py   (ours only: about 30 s)
       POBAX_UPSTREAM=<taodav/pobax checkout> NAVIX_UPSTREAM=<taodav/navix checkout> \\
       POBAX_PYTHON=<python with jax> python experiments/perf_pobax.py   (adds their column: about 10 minutes on the
       shared 2-core machine, 4 of them XLA compiles)
One JAX venv, outside the repository: ``python3.11 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install "jax[cpu]"
flax gymnax chex pillow six``. Without NAVIX_UPSTREAM the mazes' upstream cells say so; without the others the whole
upstream column says why it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

NS = (1, 64, 1024)
# membench ID -> the authors' env name (their get_env's names; NAVIX IDs for the mazes)
TASKS = {
    "POBAX/TMaze10-v0": "tmaze_10",
    "POBAX/RockSample11x11-v0": "rocksample_11_11",
    "POBAX/RockSample15x15-v0": "rocksample_15_15",
    "POBAX/Battleship10-v0": "battleship_10",
    "POBAX/Battleship5-v0": "battleship_5",
    "POBAX/Battleship3-v0": "battleship_3",
    "POBAX/Maze00-v0": "Navix-DMLab-Maze-00-v0",
    "POBAX/Maze01-v0": "Navix-DMLab-Maze-01-v0",
    "POBAX/Maze02-v0": "Navix-DMLab-Maze-02-v0",
    "POBAX/Maze03-v0": "Navix-DMLab-Maze-03-v0",
}
# Timed vector steps per N (N x steps env-steps), both sides; a warm-up of WARMUP vector steps first (ours).
STEPS = {1: 5000, 64: 500, 1024: 60}
WARMUP = {1: 200, 64: 20, 1024: 3}
REPEATS = 3
# JAX cells whose untimed first run takes longer than this are timed once, not REPEATS times (keeps the run short).
SLOW_S = 1.5
XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
STUBBED = ("brax", "rlax", "distrax", "wandb")


# ---------------------------------------------------------------------------------------------------------------
# ours (membench's venv)


def ours_rate(env_id: str, n: int) -> tuple[float, float]:
    """Best of REPEATS env-steps/s of our task at N = n (single env for n = 1, the native batched env otherwise),
    and that repeat's CPU time / wall time."""
    import gymnasium as gym
    import numpy as np

    import membench_envs  # noqa: F401  (registers the IDs)

    steps, warmup = STEPS[n], WARMUP[n]
    rng = np.random.default_rng(0)
    if n == 1:
        env = gym.make(env_id).unwrapped
        actions = [int(a) for a in rng.integers(0, env.action_space.n, size=warmup + steps)]
        env.reset(seed=0)

        def run(chunk) -> None:
            for a in chunk:
                _, _, terminated, truncated, _ = env.step(a)
                if terminated or truncated:
                    env.reset()

    else:
        env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
        actions = rng.integers(0, env.single_action_space.n, size=(warmup + steps, n))
        env.reset(seed=0)

        def run(chunk) -> None:
            for a in chunk:
                env.step(a)

    run(actions[:warmup])
    best, cpu_ratio = 0.0, 0.0
    for _ in range(REPEATS):
        start, cpu = time.perf_counter(), time.process_time()
        run(actions[warmup:])
        wall = time.perf_counter() - start
        if steps * n / wall > best:
            best, cpu_ratio = steps * n / wall, (time.process_time() - cpu) / wall
    env.close()
    return best, cpu_ratio


# ---------------------------------------------------------------------------------------------------------------
# the authors' (runs in POBAX_PYTHON: jax, no membench)


def _install_stubs(pobax_root: str) -> None:
    """Stub modules the authors' env modules import but these envs never use; bare ``pobax.envs`` packages."""
    import importlib.abc
    import importlib.machinery
    import types

    class Dummy:
        def __init__(self, *args, **kwargs):
            pass

    class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in STUBBED:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            module = types.ModuleType(spec.name)
            module.__path__ = []

            def getattr_(attr):
                if attr.startswith("__"):
                    raise AttributeError(attr)
                return Dummy

            module.__getattr__ = getattr_
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, StubFinder())
    for name in ("pobax.envs", "pobax.envs.wrappers"):
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(pobax_root, *name.split("."))]
        sys.modules[name] = module


def _upstream_env(name: str, pobax_root: str):
    """(env, step(key, state, action) -> (obs, state, reward)) for the authors' env ``name``."""
    from pathlib import Path

    import jax

    if name.startswith("tmaze_") or name.startswith("rocksample_"):
        if name.startswith("tmaze_"):
            from pobax.envs.jax.tmaze import TMaze

            env = TMaze(hallway_length=int(name.split("_")[-1]))
        else:
            from pobax.envs.jax.rocksample import RockSample

            config = Path(pobax_root, "pobax", "envs", "configs", f"{name}_config.json")
            env = RockSample(jax.random.PRNGKey(2025 if name == "rocksample_11_11" else 2026), config_path=config)
        params = env.default_params

        def step(key, state, action):
            # gymnax's auto-reset step before 1.0 (their repository's step needs a state.time these states lack)
            key_step, key_reset = jax.random.split(key)
            obs_st, state_st, reward, done, _ = env.step_env(key_step, state, action, params)
            obs_re, state_re = env.reset_env(key_reset, params)
            state = jax.tree.map(lambda x, y: jax.lax.select(done, x, y), state_re, state_st)
            obs = jax.tree.map(lambda x, y: jax.lax.select(done, x, y), obs_re, obs_st)
            return obs, state, reward

        return env, params, step
    if name.startswith("battleship_"):
        from pobax.envs.jax.battleship import Battleship

        size = int(name.split("_")[-1])
        env = Battleship(rows=size, cols=size, ship_lengths={10: (5, 4, 3, 2), 5: (3, 2), 3: (2,)}[size])
        params = env.default_params
    else:
        import navix as nx
        import pobax.envs.jax.navix_mazes  # noqa: F401  (registers the Navix-DMLab-Maze IDs)
        from pobax.envs.wrappers.nx import MazeFoVWrapper, NavixGymnaxWrapper

        env = MazeFoVWrapper(NavixGymnaxWrapper(nx.make(name)))
        params = None  # static in their jitted wrappers; NAVIX ignores it

    def step(key, state, action):
        out = env.step(key, state, action, params)
        return out[0], out[1], out[2]

    return env, params, step


def _upstream_cell(name: str, n: int, pobax_root: str) -> dict:
    import jax
    import jax.numpy as jnp

    env, params, step = _upstream_env(name, pobax_root)
    n_actions = env.action_space(params).n
    key = jax.random.PRNGKey(0)
    actions = jax.random.randint(jax.random.PRNGKey(1), (STEPS[n],) if n == 1 else (STEPS[n], n), 0, n_actions)
    if n == 1:
        _, state = jax.jit(env.reset)(key, params)
        step_fn = step
    else:
        _, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(key, n), params)
        step_fn = jax.vmap(step)

    def total(tree):
        return sum(jnp.sum(leaf) for leaf in jax.tree.leaves(tree))

    def body(carry, action):
        state, key, acc = carry
        key, sub = jax.random.split(key)
        keys = sub if n == 1 else jax.random.split(sub, n)
        obs, state, reward = step_fn(keys, state, action)
        return (state, key, acc + total(obs) + jnp.sum(reward)), None

    def run(state, key, actions):
        return jax.lax.scan(body, (state, key, jnp.float32(0)), actions)[0]

    start = time.perf_counter()
    compiled = jax.jit(run).lower(state, key, actions).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(compiled(state, key, actions))  # first run (allocation), untimed
    slow = time.perf_counter() - start > SLOW_S
    best, cpu_ratio = 0.0, 0.0
    for _ in range(1 if slow else REPEATS):
        start, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(state, key, actions))
        wall = time.perf_counter() - start
        if STEPS[n] * n / wall > best:
            best, cpu_ratio = STEPS[n] * n / wall, (time.process_time() - cpu) / wall
    return {"rate": best, "compile_s": compile_s, "cpu_per_wall": cpu_ratio}


def upstream_worker(names: list[str]) -> None:
    """Print one JSON line per (env, N), an error in place of the numbers where the env cannot run."""
    pobax_root = os.environ["POBAX_UPSTREAM"]
    sys.path.insert(0, pobax_root)
    if os.environ.get("NAVIX_UPSTREAM"):
        sys.path.insert(0, os.environ["NAVIX_UPSTREAM"])
    _install_stubs(pobax_root)
    import jax

    print(json.dumps({"jax": jax.__version__, "device": str(jax.devices()[0])}), flush=True)
    for name in names:
        for n in NS:
            try:
                cell = _upstream_cell(name, n, pobax_root)
            except Exception as exc:  # reported in the table in place of the number
                cell = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
            print(json.dumps({"name": name, "n": n, **cell}), flush=True)


def upstream_results() -> tuple[dict, str]:
    """{(authors' name, N): cell} from the worker, and a line saying what ran (or why nothing did)."""
    root, python = os.environ.get("POBAX_UPSTREAM"), os.environ.get("POBAX_PYTHON")
    if not root or not python:
        return {}, (
            "not measured: set POBAX_UPSTREAM=<taodav/pobax checkout> (NAVIX_UPSTREAM=<taodav/navix checkout> for "
            "the mazes) and POBAX_PYTHON=<a python with jax[cpu] flax gymnax chex pillow six>; the pobax 0.0.1 "
            "wheel on PyPI does not import, so nothing is installed by `make setup`"
        )
    if not os.path.isdir(os.path.join(root, "pobax", "envs", "jax")):
        return {}, f"not measured: POBAX_UPSTREAM={root} holds no pobax/envs/jax (expected a taodav/pobax checkout)"
    names = [v for v in TASKS.values() if not v.startswith("Navix-") or os.environ.get("NAVIX_UPSTREAM")]
    env = {**os.environ, "XLA_FLAGS": XLA_FLAGS, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [python, os.path.abspath(__file__), "--upstream-worker", *names], env=env, capture_output=True, text=True
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"not measured: the worker failed ({tail})"
    head = lines[0]
    note = (
        f"taodav/pobax from {root}"
        + (f" + taodav/navix from {os.environ['NAVIX_UPSTREAM']}" if os.environ.get("NAVIX_UPSTREAM") else "")
        + f"; jax {head['jax']} on {head['device']}, XLA_FLAGS={XLA_FLAGS!r}"
    )
    return {(c["name"], c["n"]): c for c in lines[1:]}, note


# ---------------------------------------------------------------------------------------------------------------


def main() -> int:
    t0 = time.perf_counter()
    upstream, note = upstream_results()
    t_up = time.perf_counter() - t0
    import gymnasium as gym

    print(
        f"env-steps/s, random actions, one process, one thread (python {sys.version.split()[0]}, gymnasium "
        f"{gym.__version__}); timed vector steps per N: {STEPS}"
    )
    print(f"upstream (JAX, jit + vmap + lax.scan, compile excluded): {note}")
    header = f"{'ID':<28}{'N':>6}{'ours':>12}{'cpu/wall':>9}{'JAX':>12}{'cpu/wall':>9}{'ours/JAX':>10}{'compile s':>11}"
    print(header)
    print("-" * len(header))
    notes = []
    for env_id, name in TASKS.items():
        for n in NS:
            ours, ours_cpu = ours_rate(env_id, n)
            cell = upstream.get((name, n))
            if cell is None:
                why = "no NAVIX_UPSTREAM" if upstream and name.startswith("Navix-") else "-"
                rest = f"{why:>12}{'-':>9}{'-':>10}{'-':>11}"
            elif "error" in cell:
                rest = f"{'fails':>12}{'-':>9}{'-':>10}{'-':>11}"
                notes.append(f"{name} N={n}: {cell['error']}")
            else:
                rest = (
                    f"{cell['rate']:>12,.0f}{cell['cpu_per_wall']:>9.2f}{ours / cell['rate']:>9.2f}x"
                    f"{cell['compile_s']:>11.1f}"
                )
            print(f"{env_id:<28}{n:>6}{ours:>12,.0f}{ours_cpu:>9.2f}{rest}", flush=True)
    for line in notes:
        print(f"  {line}")
    print(f"(total {time.perf_counter() - t0:.0f} s, of which the JAX worker {t_up:.0f} s)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--upstream-worker"]:
        upstream_worker(sys.argv[2:])
    else:
        sys.exit(main())
