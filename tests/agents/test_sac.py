"""SAC: learns Pendulum (Box) and CartPole (Discrete); what it writes into the replay; recurrent windows reset at
episode starts and their burn-in gets no gradient; dict and torch-tensor environments; Box bounds; clear
errors; exact resumption (plain-data checkpoint, and through the run layer and the CLI)."""

from __future__ import annotations

import io
import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space
from membench_agents.algos.sac import SAC, SACConfig, check_spaces
from membench_agents.algos.vector import make_vector_env
from membench_agents.config.resolve import resolve
from membench_agents.errors import ConfigError
from membench_agents.runs import envstate, loop
from membench_agents.runs.checkpoint import from_plain, load_checkpoint, to_plain
from membench_agents.runs.evaluation import evaluate

from tests.agents._runs_helpers import membench

SAME_STEP = {"autoreset_mode": AutoresetMode.SAME_STEP}
SMALL = dict(learning_starts=1000, hidden_size=64, batch_size=128, deterministic=True, device="cpu")


def _train(env_id: str, steps: int, seed: int = 0, **kw) -> SAC:
    cfg = SACConfig(total_steps=steps, seed=seed, **{**SMALL, **kw})
    algo = SAC(make_vector_env(env_id, cfg.num_envs), cfg)
    while not algo.finished:
        algo.train_iteration()
    return algo


# -- learning ----------------------------------------------------------------------------------------------
@pytest.mark.slow  # learning; the update rules are unit-tested below
def test_sac_learns_pendulum():
    # Random play returns about -1200. Measured here after 6000 steps (evaluation seeds 0..9, deterministic
    # actions): -290, -132, -133, -327 with training seeds 0..3 (about 15 s each on one free core).
    algo = _train("Pendulum-v1", 6000, seed=1)
    res = evaluate(algo.actor, "Pendulum-v1", None, list(range(10)), num_envs=10)
    assert res["mean_return"] > -400, f"SAC reached only {res['mean_return']:.0f} on Pendulum-v1"


@pytest.mark.slow  # learning; the update rules are unit-tested below
def test_discrete_sac_learns_cartpole():
    # Random play lasts about 22 steps. Measured here after 5000 steps (evaluation seeds 0..9, greedy actions):
    # 199, 238, 306, 199 with training seeds 0..3 (about 12 s each on one free core).
    algo = _train("CartPole-v1", 5000, seed=0)
    assert algo.discrete and algo.target_entropy == pytest.approx(0.89 * np.log(2))  # CleanRL's sac_atari.py
    res = evaluate(algo.actor, "CartPole-v1", None, list(range(10)), num_envs=10)
    assert res["mean_return"] >= 150, f"discrete SAC reached only {res['mean_return']:.0f} on CartPole-v1"


# -- the replay ----------------------------------------------------------------------------------------------
class CountEnv(gym.Env):
    """obs = [t]; reward t + 1; terminated after ``horizon`` steps if ``terminate`` else truncated."""

    def __init__(self, horizon: int = 3, terminate: bool = False, action_space: gym.Space | None = None):
        self.observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
        self.action_space = action_space or gym.spaces.Discrete(2)
        self.horizon, self.terminate = horizon, terminate

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        end = self.t >= self.horizon
        return np.array([self.t], np.float32), float(self.t), end and self.terminate, end and not self.terminate, {}


def _count_sac(core: str = "mlp", n: int = 2, terminate: bool = False, horizon: int = 3, **kw) -> SAC:
    kw = {"learning_starts": 10**6, **kw}
    cfg = SACConfig(
        num_envs=n, total_steps=1000, buffer_size=64 * n, core=core, hidden_size=8, batch_size=8, device="cpu", **kw
    )
    return SAC(SyncVectorEnv([lambda: CountEnv(horizon, terminate=terminate)] * n, **SAME_STEP), cfg)


def test_sac_feeds_the_replay_each_step_then_the_final_observation_from_info():
    """The replay itself: tests/agents/test_replay.py. Here: what SAC writes into it from a numpy vector env."""
    algo = _count_sac()
    for _ in range(7):
        algo._collect()
    r = algo.replay
    assert r.capacity == 64 and r.episode_window is None
    # per environment: steps t = 0, 1, 2, then the final observation (t = 3, from info), then the next episode
    assert r.obs[0, :9, 0].tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert r.is_final[0, :9].tolist() == [False, False, False, True] * 2 + [False]
    assert r.episode_start[0, :9].tolist() == [True, False, False, False] * 2 + [True]
    assert r.rewards[0, :9].tolist() == [1, 2, 3, 0] * 2 + [1]
    assert not r.terminated.any()  # truncated episodes: their next value is bootstrapped


# -- the recurrent variant ---------------------------------------------------------------------------------
def _recurrent_batch(core: str, burn_in: int = 3, seq: int = 4):
    algo = _count_sac(core, n=2, horizon=6, burn_in=burn_in, sequence_length=seq)
    for _ in range(40):
        algo._collect()
    batch = algo.replay.sample_sequences(16, algo.config.window, burn_in, algo.generator)
    return algo, batch


@pytest.mark.parametrize("core", ["lstm", "gru", "ffm"])
def test_recurrent_burn_in_gets_no_gradient(core):
    algo, batch = _recurrent_batch(core)
    b = algo.config.burn_in
    obs = batch["obs"].clone().requires_grad_(True)
    batch["obs"] = obs
    q_loss, _ = algo.critic_loss(batch)
    pi_loss, _, _ = algo.actor_loss(batch)
    (q_loss + pi_loss).backward()
    assert obs.grad is not None
    assert torch.all(obs.grad[:b] == 0), "a burn-in step received a gradient"
    assert torch.all(obs.grad[b:-1].abs().sum((0, 2)) > 0), "a loss step of some window received no gradient"


@pytest.mark.parametrize("core", ["lstm", "gru", "ffm"])
def test_recurrent_burn_in_warms_the_state(core):
    """Features at the first loss step depend on the window's first slot, unless an episode starts between."""
    algo, batch = _recurrent_batch(core)
    b = algo.config.burn_in
    es = batch["episode_start"]
    feats = algo.features(algo.actor.body, batch["obs"], es, "current")
    other = batch["obs"].clone()
    other[0] += 5.0
    feats2 = algo.features(algo.actor.body, other, es, "current")
    warmed = ~es[1 : b + 1].any(0)  # windows whose episode runs through the burn-in into the first loss step
    assert warmed.any() and (~warmed).any()
    moved = (feats[0] - feats2[0]).abs().amax(-1) > 1e-6
    assert torch.equal(moved, warmed)


@pytest.mark.parametrize("core", ["lstm", "gru", "ffm"])
def test_recurrent_state_resets_at_episode_starts(core):
    algo, batch = _recurrent_batch(core, burn_in=2, seq=6)
    es = batch["episode_start"]
    # windows with an episode start at a loss slot: the features from there on ignore everything before it
    W = es.shape[0]
    inside = es[3 : W - 1]
    first = torch.where(inside.any(0), inside.float().argmax(0) + 3, torch.full(es.shape[1:], W))
    assert (first < W).any()
    other = batch["obs"].clone()
    for j in range(es.shape[1]):
        other[: int(first[j]), j] += 7.0  # change every slot before the episode start
    for body in (algo.actor.body, algo.critics[0].body, algo.critic_targets[1].body):
        f1 = algo.features(body, batch["obs"], es, "next")  # slots burn_in + 1 .. W - 1
        f2 = algo.features(body, other, es, "next")
        for j in range(es.shape[1]):
            k = int(first[j]) - (algo.config.burn_in + 1)
            if int(first[j]) < W:
                torch.testing.assert_close(f1[k:, j], f2[k:, j], rtol=0, atol=0)
                assert not torch.allclose(f1[:k, j], f2[:k, j]) or k == 0
    # acting: an episode start resets the actor's state to the initial one
    obs = torch.tensor([[1.0], [2.0]])
    state = tuple(torch.randn_like(s) for s in algo.actor.initial_state(2))
    a_reset = algo.actor.act(obs, state, torch.tensor([True, False]), deterministic=True)[3]
    a_fresh = algo.actor.act(obs, algo.actor.initial_state(2), torch.tensor([True, True]), deterministic=True)[3]
    for s_reset, s_fresh in zip(a_reset, a_fresh, strict=True):
        torch.testing.assert_close(s_reset[0], s_fresh[0], rtol=0, atol=0)
        assert not torch.allclose(s_reset[1], s_fresh[1])


def test_terminal_steps_are_not_bootstrapped_and_truncated_ones_are():
    for terminate in (True, False):
        algo = _count_sac(terminate=terminate, gamma=0.5)
        for _ in range(12):
            algo._collect()
        batch = algo.replay.sample_sequences(64, 2, 0, algo.generator)
        last = batch["obs"][0, :, 0] == 2  # the episode's last step
        assert last.any() and bool(batch["terminated"][0][last].all()) == terminate
        assert not batch["terminated"][0][~last].any()


def test_target_critics_give_the_bootstrap_and_follow_by_polyak_averaging():
    algo = _count_sac(learning_starts=0, tau=0.25)
    for _ in range(12):
        algo._collect()
    batch = algo.replay.sample_sequences(32, 2, 0, algo.generator)
    state = torch.get_rng_state(), algo.generator.get_state()
    loss, _ = algo.critic_loss(batch)
    with torch.no_grad():
        for p in algo.critic_targets.parameters():
            p.add_(0.5)
    torch.set_rng_state(state[0])
    algo.generator.set_state(state[1])
    assert not torch.equal(algo.critic_loss(batch)[0], loss)  # the targets come from the target critics
    before = [p.clone() for p in algo.critic_targets.parameters()]
    algo.update()
    for old, online, target in zip(before, algo.critics.parameters(), algo.critic_targets.parameters(), strict=True):
        torch.testing.assert_close(target, 0.75 * old + 0.25 * online)


@pytest.mark.parametrize("policy_frequency", [1, 2, 3])
def test_the_actor_is_updated_every_policy_frequency_updates_that_many_times(policy_frequency):
    """CleanRL's delayed policy update (policy_frequency=2): updates 0, 2, 4 ... step the actor and alpha twice."""
    algo = _count_sac(learning_starts=0, policy_frequency=policy_frequency)
    for _ in range(12):
        algo._collect()
    actor_steps = []
    for _ in range(7):
        out = algo.update()
        assert ("actor_loss" in out) == (len(actor_steps) % policy_frequency == 0)
        actor_steps.append(int(algo.actor_optimizer.state_dict()["state"][0]["step"]))
    per_update = [policy_frequency if i % policy_frequency == 0 else 0 for i in range(7)]
    assert actor_steps == list(np.cumsum(per_update))
    assert int(algo.critic_optimizer.state_dict()["state"][0]["step"]) == 7
    assert int(algo.alpha_optimizer.state_dict()["state"][0]["step"]) == actor_steps[-1]


# -- spaces: Box bounds, dict observations, torch tensors ----------------------------------------------------
def test_box_actions_are_squashed_onto_the_bounds():
    space = gym.spaces.Box(np.array([0.0, -2.0], np.float32), np.array([4.0, -1.0], np.float32))
    algo = SAC(
        SyncVectorEnv([lambda: CountEnv(5, action_space=space)], **SAME_STEP),
        SACConfig(
            num_envs=1, total_steps=100, buffer_size=100, hidden_size=8, batch_size=4, learning_starts=5, device="cpu"
        ),
    )
    env_action = algo.actor.env_action
    torch.testing.assert_close(
        env_action(torch.tensor([[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0]])),
        torch.tensor([[0.0, -2.0], [4.0, -1.0], [2.0, -1.5]]),
    )
    seen = []
    real_step = algo.envs.step
    algo.envs.step = lambda a: (seen.append(np.array(a)), real_step(a))[1]
    algo.train_iteration()  # random actions, then the actor's
    acts = np.concatenate(seen)
    assert np.all(acts >= space.low) and np.all(acts <= space.high)
    assert acts[:, 0].max() - acts[:, 0].min() > 1.0  # the whole range is used, not [-1, 1]
    stored = algo.replay.actions[0, algo.replay.size[0] - 20 :]
    assert stored.abs().max() <= 1.0  # the critics see the squashed action in [-1, 1]


class TorchDictVectorEnv(VectorEnv):
    """A batched env in torch with ManiSkill-like nested dict observations (uint8 image + joint vector)."""

    def __init__(self, num_envs: int = 3, horizon: int = 4):
        self.num_envs, self.horizon = num_envs, horizon
        self.single_observation_space = gym.spaces.Dict(
            {
                "sensor_data": gym.spaces.Dict({"rgb": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)}),
                "agent": gym.spaces.Dict({"qpos": gym.spaces.Box(-1, 1, (2,), np.float32)}),
            }
        )
        self.single_action_space = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self.action_types: set[type] = set()

    def _obs(self):
        rgb = (self.t.view(-1, 1, 1, 1) * 40).to(torch.uint8).expand(-1, 8, 8, 3).clone()
        qpos = torch.stack([self.t / self.horizon, -self.t / self.horizon], 1)
        return {"sensor_data": {"rgb": rgb}, "agent": {"qpos": qpos}}

    def reset(self, *, seed=None, options=None):
        self.t = torch.zeros(self.num_envs)
        return self._obs(), {}

    def step(self, actions):
        self.action_types.add(type(actions))
        assert actions.shape == (self.num_envs, 2) and bool((actions.abs() <= 2.0).all())
        self.t += 1
        reward = -(actions - 1.0).square().sum(1)
        terminated = self.t >= self.horizon
        info = {}
        if bool(terminated.any()):
            info = {
                "final_obs": self._obs(),
                "_final_obs": terminated.clone(),
                "final_info": {"success": reward > -1.0, "_success": terminated.clone()},
            }
            self.t = torch.where(terminated, torch.zeros_like(self.t), self.t)
        return self._obs(), reward, terminated, torch.zeros_like(terminated), info


@pytest.mark.parametrize("core", ["mlp", "lstm"])
def test_torch_dict_env_trains_on_tensors_without_numpy(core, monkeypatch):
    envs = TorchDictVectorEnv()
    cfg = SACConfig(
        num_envs=3,
        total_steps=60,
        buffer_size=300,
        core=core,
        hidden_size=8,
        batch_size=4,
        learning_starts=24,
        iteration_steps=30,
        burn_in=2 if core == "lstm" else 0,
        sequence_length=3 if core == "lstm" else 1,
        device="cpu",
    )
    algo = SAC(envs, cfg)
    assert algo.torch_env

    converted, real_numpy = [], torch.Tensor.numpy

    def numpy(t, *a, **k):
        converted.append((tuple(t.shape), t.dtype))
        return real_numpy(t, *a, **k)

    monkeypatch.setattr(torch.Tensor, "numpy", numpy)
    history = [algo.train_iteration() for _ in range(2)]
    monkeypatch.undo()
    assert envs.action_types == {torch.Tensor}
    # no observation (float, uint8), action or reward went through numpy: only bool masks (episode starts, for
    # the recurrent cores' segment plan; success flags) and the indices of ended episodes
    bad = [c for c in converted if not (c[1] == torch.bool or (c[1] == torch.int64 and len(c[0]) == 1))]
    assert converted and not bad, bad
    assert algo.replay.obs["sensor_data"]["rgb"].dtype == torch.uint8  # images stay bytes in the replay
    assert algo.updates > 0 and all(np.isfinite(m["value_loss"]) for m in history if "value_loss" in m)
    eps = [e for m in history for e in m["episodes"]]
    assert len(eps) == 3 * 60 // 3 // 4 and all(e[1] == 4 and isinstance(e[2], bool) for e in eps)
    # the final observation of each episode is in the replay (t = horizon)
    assert (algo.replay.obs["agent"]["qpos"][..., 0] == 1.0).sum() == len(eps)


class DictCueEnv(gym.Env):
    """Numpy dict observations (image + vector), Discrete actions with start = 1."""

    def __init__(self):
        self.observation_space = gym.spaces.Dict(
            {"rgb": gym.spaces.Box(0, 255, (10, 10, 3), np.uint8), "joints": gym.spaces.Box(-1, 1, (3,), np.float32)}
        )
        self.action_space = gym.spaces.Discrete(3, start=1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        assert self.action_space.contains(int(action)), action
        self.t += 1
        return self.observation_space.sample(), float(action == 2), self.t >= 5, False, {}


def test_numpy_dict_env_with_discrete_start():
    cfg = SACConfig(
        num_envs=2,
        total_steps=80,
        buffer_size=200,
        core="gru",
        hidden_size=8,
        batch_size=4,
        learning_starts=30,
        burn_in=1,
        sequence_length=2,
        device="cpu",
    )
    algo = SAC(SyncVectorEnv([DictCueEnv] * 2, **SAME_STEP), cfg)
    m = algo.train_iteration()
    assert algo.updates == 80 // 2 - 30 // 2 + 1 and np.isfinite(m["value_loss"]) and np.isfinite(m["entropy"])
    assert set(algo.replay.actions.unique().tolist()) <= {0, 1, 2}  # indices; the env gets index + start
    res = evaluate(algo.actor, "unused", None, [0, 1], envs=SyncVectorEnv([DictCueEnv] * 2, **SAME_STEP))
    assert res["lengths"] == [5, 5]


# -- errors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "space, why",
    [
        (gym.spaces.MultiDiscrete([2, 3]), "categorical policy for Discrete"),
        (gym.spaces.Box(-np.inf, np.inf, (2,), np.float32), "must be finite"),
    ],
)
def test_unsupported_action_spaces_say_why(space, why):
    with pytest.raises(ValueError, match=why):
        check_spaces(gym.spaces.Box(-1, 1, (2,)), space)


@pytest.mark.parametrize(
    "field, value, what",
    [
        ("tau", 0.0, "in \\(0, 1\\]"),
        ("batch_size", 0, "an integer >= 1"),
        ("burn_in", -1, "an integer >= 0"),
        ("core", "tcn", "unknown memory core 'tcn'"),
        ("target_entropy_scale", 1.5, "in \\(0, 1\\]"),
        ("buffer_size", 3, "at least 2 x the window"),
    ],
)
def test_config_ranges_are_checked_with_one_clear_error(field, value, what):
    with pytest.raises(ValueError, match=what):
        SACConfig(**{field: value}).validate()


def test_preflight_names_the_agent_and_the_space():
    from membench_agents.algos.trainer import preflight

    cfg = resolve("MIKASA/TMazePassive-v0", "sac", steps=100, seeds=1).config
    preflight(cfg)  # Discrete actions: fine
    from tests.agents._runs_helpers import register_test_envs

    register_test_envs()
    bad = dict(cfg, env="membench-test/TupleAction-v0")
    with pytest.raises(ConfigError, match="agent 'sac' cannot handle membench-test/TupleAction-v0: unsupported action"):
        preflight(bad)


# -- exact resumption --------------------------------------------------------------------------------------
def _resume_sac(core: str, seed: int) -> SAC:
    cfg = SACConfig(
        total_steps=10_000,
        buffer_size=2000,
        learning_starts=60,
        batch_size=16,
        hidden_size=16,
        iteration_steps=50,
        core=core,
        seed=seed,
        deterministic=True,
        device="cpu",
        burn_in=2 if core != "mlp" else 0,
        sequence_length=4 if core != "mlp" else 1,
    )
    return SAC(make_vector_env("Pendulum-v1", 1), cfg)


def _strip(m: dict) -> dict:
    return {k: v for k, v in m.items() if k not in ("sps", "time")}


@pytest.mark.parametrize("core", ["mlp", "lstm"])
def test_plain_data_checkpoint_resumes_exactly(core):
    algo = _resume_sac(core, 3)
    for _ in range(2):
        algo.train_iteration()
    buf = io.BytesIO()
    torch.save(to_plain({"sac": algo.state_dict(), "envs": envstate.capture(algo.envs)}), buf)
    continued = [_strip(algo.train_iteration()) for _ in range(2)]

    other = _resume_sac(core, 99)  # another seed: everything must come from the checkpoint
    buf.seek(0)
    saved = from_plain(torch.load(buf, weights_only=True))
    other.load_state_dict(saved["sac"])
    envstate.restore(other.envs, saved["envs"])
    assert other.global_step == 100
    resumed = [_strip(other.train_iteration()) for _ in range(2)]
    assert resumed == continued and continued[-1]["updates"] > 0
    for net in ("actor", "critics", "critic_targets"):
        for p, q in zip(getattr(algo, net).parameters(), getattr(other, net).parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=0, atol=0)


def _sac_params(seed_dir) -> dict[str, torch.Tensor]:
    algo = load_checkpoint(seed_dir / "checkpoint.pt")["trainer"]["algo"]
    return {f"{net}.{k}": v for net in ("actor", "critics", "critic_targets") for k, v in algo[net].items()}


def test_run_layer_interrupt_and_resume_equals_uninterrupted(tmp_path):
    cfg = resolve(
        "MIKASA/TMazePassive-v0",
        "sac-lstm",
        steps=240,
        seeds=1,
        overrides=[
            "env_kwargs.corridor_length=2",
            "eval.episodes=10",
            "eval.every_steps=120",
            "checkpoint.every_iterations=1",
            "sac.num_envs=4",  # one update per vector step: 4 environments halve them
            "sac.learning_starts=40",
            "sac.batch_size=8",
            "sac.hidden_size=16",
            "sac.iteration_steps=40",
            "sac.sequence_length=4",
            "sac.burn_in=2",
            "sac.deterministic=true",
        ],
    ).config
    a, b = tmp_path / "a", tmp_path / "b"
    loop.train_seed(cfg, 0, a)
    with pytest.raises(loop.Interrupted, match="checkpoint saved"):
        loop.train_seed(cfg, 0, b, stop_after_iterations=3)
    assert load_checkpoint(b / "checkpoint.pt")["global_step"] == 120
    summary = loop.train_seed(cfg, 0, b, resume=True)
    pa, pb = _sac_params(a), _sac_params(b)
    assert pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)
    rows = [
        [
            {k: v for k, v in json.loads(line).items() if k not in ("sps", "time")}
            for line in (d / "metrics.jsonl").read_text().splitlines()
        ]
        for d in (a, b)
    ]
    assert rows[0] == rows[1] and any("value_loss" in r for r in rows[0])
    assert json.loads((a / "eval.json").read_text())["eval"] == summary["eval"]


def test_membench_train_sac_end_to_end(tmp_path):
    run = tmp_path / "run"
    out = membench(
        "train",
        "--env",
        "Pendulum-v1",
        "--agent",
        "sac",
        "--steps",
        "600",
        "--seeds",
        "0-0",
        "--jobs",
        "1",
        "--no-progress",
        "--run-dir",
        str(run),
        "--set",
        "sac.learning_starts=300",
        "--set",
        "sac.hidden_size=16",
        "--set",
        "sac.batch_size=16",
        "--set",
        "sac.iteration_steps=200",
        "--set",
        "eval.episodes=2",
    )
    assert out.returncode == 0, out.stderr
    assert "sac" in out.stdout and (run / "learning_curve.png").is_file()
    seed_dir = run / "seed_0"
    assert any(seed_dir.glob("events.out.tfevents.*"))
    rows = [json.loads(line) for line in (seed_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["global_step"] for r in rows if "iteration" in r] == [200, 400, 600]
    assert "value_loss" in rows[-1] and "policy_loss" in rows[-1]
    assert json.loads((run / "results.json").read_text())["per_run"]
