"""PPO: learning a tiny memory task, continuous / dict / multi-discrete spaces, truncation bootstrapping,
clear errors, torch-tensor environments, determinism and exact resumption; make_vector_env."""

from __future__ import annotations

import dataclasses
import io
import math
import re

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space
from membench_agents.algos.ppo import PPO, PPOConfig
from membench_agents.algos.vector import make_vector_env
from membench_agents.nets.actor_critic import ActorCritic
from membench_agents.nets.memory import CORES, MemoryCore
from membench_agents.runs import envstate
from membench_agents.runs.checkpoint import from_plain, to_plain
from membench_agents.runs.evaluation import evaluate

TMAZE = "MIKASA/TMazePassive-v0"
SAME_STEP = {"autoreset_mode": AutoresetMode.SAME_STEP}


# -- PPO learns a tiny memory task -------------------------------------------------------------------------
#: Passive T-Maze with corridor L = 3 (T = 4: the cue at t = 0, the turn at t = 3). Random play succeeds
#: in 1/128 episodes, so these settings favour many short rollouts and several epochs.
TMAZE_L = 3
TMAZE_PPO = dict(
    num_envs=32,
    num_steps=16,
    total_steps=40_000,
    hidden_size=32,
    learning_rate=3e-3,
    ent_coef=0.05,
    update_epochs=8,
    num_minibatches=2,
)


def _train_tmaze(core: str, seed: int, fast_cpu: str = "auto") -> tuple[float, list]:
    cfg = PPOConfig(core=core, seed=seed, fast_cpu=fast_cpu, **TMAZE_PPO)
    ppo = PPO(make_vector_env(TMAZE, cfg.num_envs, env_kwargs={"corridor_length": TMAZE_L}), cfg)
    if fast_cpu != "auto":
        assert (ppo.fast is not None) == (fast_cpu == "on")
    history = ppo.train()
    res = evaluate(ppo.policy, TMAZE, {"corridor_length": TMAZE_L}, list(range(100)), num_envs=25)
    return res["success_rate"], history


# the fast path (lstm) in the default suite; the readable path, which tests/agents/test_ppo_fast_cpu.py holds equal to
# it, learns in `make test-all`, as do the linear-recurrent cores (their mechanics: tests/agents/test_linear_cores.py)
@pytest.mark.parametrize(
    "core, fast_cpu",
    [("lstm", "on"), pytest.param("gru", "off", marks=pytest.mark.slow)]
    + [pytest.param(c, "auto", marks=pytest.mark.slow) for c in ("ffm", "mingru", "lru")],
)
def test_recurrent_ppo_solves_passive_tmaze(core, fast_cpu):
    # Deterministic on one machine. Measured here: the LSTM solves it with each of seeds 0-4, the GRU with
    # seeds 1-4 (seed 0 stays at 0.47), FFM, minGRU and LRU with seeds 0 and 2 (1.00 each). Seed 2 is run only if
    # seed 0 does not solve it (a guard against float drift across CPUs and against one unlucky seed, not a retry
    # on noise: each run is deterministic). The LSTM trains through the CPU fast path, the others through the
    # readable path (ppo.py alone).
    for seed in (0, 2):
        success, history = _train_tmaze(core, seed, fast_cpu)
        if success >= 0.95:
            break
    assert success >= 0.95, f"PPO-{core} reached only {success:.2f} success on T-Maze L={TMAZE_L}"
    for m in history:
        assert all(math.isfinite(m[k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl"))


def test_memoryless_ppo_stays_at_chance_on_passive_tmaze():
    success, history = _train_tmaze("mlp", 0)
    assert 0.3 <= success <= 0.7, success
    # it did learn the corridor (so the ~50% is the missing memory, not a failure to reach the junction)
    last = [e for m in history[-5:] for e in m["episodes"]]
    assert 0.35 <= np.mean([bool(e[2]) for e in last]) <= 0.65


# -- fake environments -------------------------------------------------------------------------------------
class CountEnv(gym.Env):
    """obs = [t / 10]; reward 1 every step; truncated (never terminated) after ``horizon`` steps."""

    def __init__(self, horizon: int = 3):
        self.observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.horizon = horizon

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t / 10], np.float32), 1.0, False, self.t >= self.horizon, {}


class DictCueEnv(gym.Env):
    """Dict obs (rgb + joints); a cue in the first image; reward for repeating it at the last step."""

    def __init__(self, length: int = 4):
        self.observation_space = gym.spaces.Dict(
            {
                "rgb": gym.spaces.Box(0, 255, (12, 12, 3), np.uint8),
                "joints": gym.spaces.Box(-1, 1, (3,), np.float32),
            }
        )
        self.action_space = gym.spaces.Discrete(2)
        self.length = length

    def _obs(self):
        rgb = np.zeros((12, 12, 3), np.uint8)
        if self.t == 0:
            rgb[..., self.cue] = 255
        return {"rgb": rgb, "joints": np.full(3, self.t / self.length, np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.cue = 0, int(self.np_random.integers(2))
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        done = self.t >= self.length
        reward = float(done and action == self.cue)
        info = {"success": bool(reward)} if done else {}
        return self._obs(), reward, done, False, info


class MultiDiscreteEnv(gym.Env):
    def __init__(self):
        self.observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gym.spaces.MultiDiscrete([3, 2], start=[1, 0])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        assert self.action_space.contains(np.asarray(action)), action
        self.t += 1
        return np.zeros(2, np.float32), float(action[0] == 3), self.t >= 5, False, {}


class TorchVectorEnv(VectorEnv):
    """A batched env that lives in torch (like ManiSkill's GPU simulation): tensors in, tensors out."""

    def __init__(self, num_envs: int = 4, device: str = "cpu", horizon: int = 3):
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.horizon = horizon
        self.single_observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.single_action_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self.action_types: set[type] = set()

    def reset(self, *, seed=None, options=None):
        self.t = torch.zeros(self.num_envs, device=self.device)
        self.goal = torch.ones(self.num_envs, device=self.device)
        return self._obs(), {}

    def _obs(self):
        return torch.stack([self.t / self.horizon, self.goal * (self.t == 0)], 1)

    def step(self, actions):
        self.action_types.add(type(actions))
        assert actions.device == self.device and actions.shape == (self.num_envs, 1)
        self.t += 1
        reward = -(actions[:, 0] - self.goal).abs()
        terminated = self.t >= self.horizon
        info = {}
        if bool(terminated.any()):
            info = {
                "final_obs": self._obs(),
                "_final_obs": terminated.clone(),
                "final_info": {"success": reward > -0.5, "_success": terminated.clone()},
            }
            self.t = torch.where(terminated, torch.zeros_like(self.t), self.t)
        return self._obs(), reward, terminated, torch.zeros_like(terminated), info


def _sync(env_fn, n: int = 2) -> SyncVectorEnv:
    return SyncVectorEnv([env_fn for _ in range(n)], **SAME_STEP)


def _finite(m: dict) -> bool:
    return all(math.isfinite(m[k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"))


# -- spaces --------------------------------------------------------------------------------------------------
def test_continuous_actions_pendulum():
    cfg = PPOConfig(
        num_envs=2,
        num_steps=64,
        total_steps=2 * 64 * 4,
        core="lstm",
        hidden_size=16,
        num_minibatches=2,
        bptt_length=16,
        ent_coef=0.0,
        norm_obs=True,
        norm_reward=True,
    )
    ppo = PPO(make_vector_env("Pendulum-v1", cfg.num_envs), cfg)
    assert ppo.policy.kind == "continuous"
    history = ppo.train()
    assert len(history) == 4 and all(_finite(m) for m in history)
    episodes = [e for m in history for e in m["episodes"]]  # Pendulum truncates at 200 steps
    assert [e[1] for e in episodes] == [200, 200] and all(e[2] is None for e in episodes)
    a, _, _, _ = ppo.policy.act(ppo.next_obs, ppo.next_state, ppo.next_episode_start)
    clipped = ppo.policy.env_action(a * 100)
    assert clipped.abs().max() <= 2.0  # Pendulum's torque bound


def test_init_log_std_sets_the_initial_gaussian_spread():
    """MIKASA-Robo's PPO baselines start the Gaussian policy at log-std -0.5; the option reaches the policy."""
    cfg = PPOConfig(
        num_envs=2, num_steps=8, total_steps=16, core="mlp", hidden_size=8, num_minibatches=1, init_log_std=-0.5
    )
    ppo = PPO(make_vector_env("Pendulum-v1", cfg.num_envs), cfg)
    assert torch.equal(ppo.policy.log_std.detach(), torch.full((1,), -0.5))
    assert torch.equal(
        PPO(make_vector_env("Pendulum-v1", 2), dataclasses.replace(cfg, init_log_std=0.0)).policy.log_std.detach(),
        torch.zeros(1),
    )
    with pytest.raises(ValueError, match="init_log_std"):
        PPOConfig(init_log_std="big").validate()


def test_dict_observations():
    cfg = PPOConfig(num_envs=2, num_steps=8, total_steps=32, core="gru", hidden_size=16, num_minibatches=2)
    ppo = PPO(_sync(DictCueEnv), cfg)
    assert isinstance(ppo.obs_buf, dict) and ppo.obs_buf["rgb"].dtype == torch.uint8
    history = ppo.train()
    assert all(_finite(m) for m in history)
    eps = [e for m in history for e in m["episodes"]]
    assert eps and all(e[1] == 4 and isinstance(e[2], bool) for e in eps)


def test_multidiscrete_actions():
    cfg = PPOConfig(num_envs=2, num_steps=10, total_steps=40, core="lstm", hidden_size=16, num_minibatches=1)
    ppo = PPO(_sync(MultiDiscreteEnv), cfg)
    history = ppo.train()  # the env asserts every action is inside MultiDiscrete([3, 2], start=[1, 0])
    assert all(_finite(m) for m in history)


def test_unknown_core_name():
    with pytest.raises(ValueError, match="unknown memory core 'rnn'; valid names: mlp, lstm, gru"):
        PPOConfig(core="rnn").validate()
    with pytest.raises(ValueError, match="unknown memory core"):
        ActorCritic(gym.spaces.Box(-1, 1, (2,)), gym.spaces.Discrete(2), "rnn", 8)


@pytest.mark.parametrize(
    "space, why",
    [
        (gym.spaces.MultiBinary(3), "MultiBinary actions have no Bernoulli policy head"),
        (gym.spaces.Dict({"a": gym.spaces.Discrete(2)}), r"composite \(Dict\) action spaces"),
        (gym.spaces.Tuple((gym.spaces.Discrete(2),)), r"composite \(Tuple\) action spaces"),
        (gym.spaces.Box(0, 5, (2,), np.int64), "integer-valued Box"),
        (gym.spaces.MultiDiscrete([[2, 2], [2, 2]]), "MultiDiscrete actions must be 1-D"),
    ],
)
def test_unsupported_action_space_says_which_and_why(space, why):
    with pytest.raises(ValueError, match=f"(?s)unsupported action space .*{why}"):
        ActorCritic(gym.spaces.Box(-1, 1, (2,)), space, "lstm", 8)


def test_unsupported_observation_space():
    class TextEnv(CountEnv):
        def __init__(self):
            super().__init__()
            self.observation_space = gym.spaces.Text(4)

    with pytest.raises(ValueError, match=r"unsupported observation space Text.*text observations have no encoder"):
        PPO(SyncVectorEnv([TextEnv], **SAME_STEP), PPOConfig(num_envs=1, num_minibatches=1))


def test_config_and_env_errors():
    envs = make_vector_env(TMAZE, 2)
    with pytest.raises(ValueError, match="num_envs"):
        PPO(envs, PPOConfig(num_envs=3))
    with pytest.raises(ValueError, match=r"bptt_length .* must divide num_steps"):
        PPOConfig(num_steps=10, bptt_length=4).validate()
    with pytest.raises(ValueError, match="num_minibatches"):
        PPO(envs, PPOConfig(num_envs=2, num_steps=8, bptt_length=8, num_minibatches=4))
    next_step = gym.make_vec(TMAZE, num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="SAME_STEP"):
        PPO(next_step, PPOConfig(num_envs=2, num_minibatches=2))


# -- truncation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("core", ["mlp", "lstm"])
@pytest.mark.parametrize("fast_cpu", ["on", "off"])
def test_truncated_episodes_are_bootstrapped_with_the_final_value(core, fast_cpu):
    gamma = 0.9
    cfg = PPOConfig(
        num_envs=2,
        num_steps=8,
        total_steps=16,
        core=core,
        hidden_size=8,
        gamma=gamma,
        num_minibatches=1,
        fast_cpu=fast_cpu,
    )
    ppo = PPO(_sync(lambda: gym.wrappers.TimeLimit(CountEnv(horizon=100), 3)), cfg)
    ppo.fast.rollout() if ppo.fast else ppo._rollout()
    policy = ppo.policy
    done = ppo.done_buf
    assert done[2].all() and done[5].all() and done.sum() == 4
    expected = torch.ones(8, 2)
    with torch.no_grad():
        for t in (2, 5):
            # the state after step t: re-run the stored rollout from its start up to t
            _, _, state = policy(ppo.obs_buf[: t + 1], tuple(s[0] for s in ppo.state_buf), ppo.es_buf[: t + 1])
            final_obs = torch.full((2, 1), 0.3)  # obs after the 3rd step of an episode
            expected[t] += gamma * policy.value(final_obs, state, torch.zeros(2, dtype=torch.bool))
    torch.testing.assert_close(ppo.rew_buf, expected)
    # the next observation starts a new episode and is flagged so
    assert ppo.es_buf[3].all() and ppo.es_buf[6].all() and not ppo.es_buf[4].any()


# -- torch environments ---------------------------------------------------------------------------------------
def test_torch_env_outputs_stay_tensors():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    envs = TorchVectorEnv(4, dev)
    cfg = PPOConfig(num_envs=4, num_steps=6, total_steps=48, core="lstm", hidden_size=8, num_minibatches=2, device=dev)
    ppo = PPO(envs, cfg)
    assert ppo.torch_env
    history = ppo.train()
    assert envs.action_types == {torch.Tensor}  # no detour through numpy
    assert all(_finite(m) for m in history)
    eps = [e for m in history for e in m["episodes"]]
    assert len(eps) == 4 * 6 * 2 // 3 and all(e[1] == 3 for e in eps) and all(isinstance(e[2], bool) for e in eps)


# -- determinism and resumption ---------------------------------------------------------------------------------
def _small_ppo(seed: int = 0, core: str = "lstm", **kw) -> PPO:
    cfg = PPOConfig(
        num_envs=4,
        num_steps=16,
        total_steps=10_000,
        core=core,
        hidden_size=16,
        num_minibatches=2,
        bptt_length=8,
        seed=seed,
        norm_obs=True,
        norm_reward=True,
        **kw,
    )
    return PPO(make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}), cfg)


def _strip(m: dict) -> dict:
    return {k: v for k, v in m.items() if k not in ("sps", "rollout_sps", "time_rollout", "time_update")}


@pytest.mark.parametrize("fast_cpu", ["on", "off"])
def test_same_seed_same_run_and_different_seed_differs(fast_cpu):
    a = [_strip(_small_ppo(0, fast_cpu=fast_cpu).train_iteration()) for _ in range(1)]
    b = [_strip(_small_ppo(0, fast_cpu=fast_cpu).train_iteration()) for _ in range(1)]
    c = [_strip(_small_ppo(1, fast_cpu=fast_cpu).train_iteration()) for _ in range(1)]
    assert a == b
    assert a != c


@pytest.mark.parametrize("core, fast_cpu", [("lstm", "on"), ("lstm", "off"), ("lru", "auto")])
def test_state_dict_resumes_exactly(core, fast_cpu):
    """(LRU: a complex state, kept as real tensors, through the checkpoint.)"""
    ppo = _small_ppo(3, core, fast_cpu=fast_cpu)
    for _ in range(2):
        ppo.train_iteration()
    buf = io.BytesIO()
    # as the run layer saves it: PPO's state plus the environments' state as plain data, loaded without pickle
    torch.save(to_plain({"ppo": ppo.state_dict(), "envs": envstate.capture(ppo.envs)}), buf)
    continued = [_strip(ppo.train_iteration()) for _ in range(2)]

    other = _small_ppo(99, core, fast_cpu=fast_cpu)  # a different seed: everything must come from the checkpoint
    buf.seek(0)
    saved = from_plain(torch.load(buf, weights_only=True))
    other.load_state_dict(saved["ppo"])
    envstate.restore(other.envs, saved["envs"])
    assert other.global_step == 2 * 4 * 16 and other.iteration == 2
    resumed = [_strip(other.train_iteration()) for _ in range(2)]
    assert resumed == continued
    for p, q in zip(ppo.policy.parameters(), other.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


# -- make_vector_env -------------------------------------------------------------------------------------------
def test_make_vector_env_native_and_sync():
    from membench_envs.envs.core.native import NativeVectorEnv

    native = make_vector_env(TMAZE, 3, seed=0, env_kwargs={"corridor_length": 4})
    assert isinstance(native, NativeVectorEnv) and native.unwrapped.core.L == 4
    assert native.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    sync = make_vector_env(TMAZE, 2, vectorization="sync")
    assert isinstance(sync, SyncVectorEnv) and sync.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    # the two give the same episodes for the same seeds
    o1, _ = make_vector_env(TMAZE, 2).reset(seed=5)
    o2, _ = sync.reset(seed=5)
    np.testing.assert_array_equal(o1, o2)
    with pytest.raises(ValueError, match="no native batched implementation"):
        make_vector_env("Pendulum-v1", 2, vectorization="native")
    with pytest.raises(ValueError, match="no native batched implementation"):  # membench's SyncVector fallback
        make_vector_env("POPGym/RepeatPreviousEasy-v0", 2, vectorization="native")
    assert isinstance(make_vector_env("POPGym/RepeatPreviousEasy-v0", 2), SyncVectorEnv)
    with pytest.raises(ValueError, match="unknown vectorization"):
        make_vector_env(TMAZE, 2, vectorization="threads")


# -- configuration ranges and minibatch splits ---------------------------------------------------------------
@pytest.mark.parametrize(
    "field, value, what",
    [
        ("clip_coef", -1.0, "> 0"),
        ("clip_coef", 0.0, "> 0"),
        ("ent_coef", -0.01, ">= 0"),
        ("vf_coef", -0.5, ">= 0"),
        ("max_grad_norm", 0.0, "> 0"),
        ("learning_rate", 0.0, "> 0"),
        ("learning_rate", float("nan"), "a finite number"),
        ("gamma", 1.5, r"in \[0, 1\]"),
        ("gae_lambda", -0.1, r"in \[0, 1\]"),
        ("num_envs", 0, "an integer >= 1"),
        ("num_minibatches", 2.5, "an integer >= 1"),
        ("update_epochs", True, "an integer >= 1"),
        ("encoder_size", -1, "an integer >= 0"),
        ("target_kl", 0.0, "> 0 or None"),
        ("norm_obs", "yes", "true or false"),
        ("num_threads", 0, "an integer >= 1 or None"),
        ("bptt_length", 0, "an integer >= 1 or None"),
        ("fast_cpu", "fast", "one of 'auto', 'on', 'off'"),
    ],
)
def test_config_ranges_are_checked_with_one_clear_error(field, value, what):
    with pytest.raises(ValueError, match=f"^PPOConfig.{field} must be {what}, got {re.escape(repr(value))}$"):
        PPOConfig(**{field: value}).validate()


@pytest.mark.parametrize("fast_cpu", ["on", "off"])
@pytest.mark.parametrize("core, num_minibatches", [("lstm", 5), ("lstm", 3), ("mlp", 7)])
def test_num_minibatches_that_do_not_divide_the_sequences_train(core, num_minibatches, fast_cpu):
    """16 environments (16 training sequences for the LSTM, 16 x 8 one-step sequences for the MLP) in 5, 3
    or 7 minibatches: every sequence is used once per epoch, in minibatches whose sizes differ by at most one."""
    cfg = PPOConfig(
        num_envs=16,
        num_steps=8,
        total_steps=16 * 8 * 2,
        core=core,
        hidden_size=8,
        num_minibatches=num_minibatches,
        update_epochs=2,
        fast_cpu=fast_cpu,
    )
    ppo = PPO(make_vector_env(TMAZE, 16, env_kwargs={"corridor_length": 3}), cfg)
    sizes = []  # the minibatch sizes, seen where both paths encode a minibatch's observations [K, B, ...]
    encode = ppo.policy.encode

    def spy(obs):
        if obs.dim() == 3 and obs.shape[:2] != (1, 16):  # (not the rollout's steps [16, F] nor V(next_obs))
            sizes.append(obs.shape[1])
        return encode(obs)

    ppo.policy.encode = spy
    history = ppo.train()
    assert len(history) == 2 and all(_finite(m) for m in history)
    n_seq = cfg.num_sequences
    assert n_seq == (16 if core == "lstm" else 128)
    per_epoch = [sizes[i : i + num_minibatches] for i in range(0, len(sizes), num_minibatches)]
    assert len(per_epoch) == 2 * cfg.update_epochs
    for epoch in per_epoch:
        assert sum(epoch) == n_seq and max(epoch) - min(epoch) <= 1


def test_too_many_minibatches_is_a_clear_error():
    with pytest.raises(ValueError, match=r"num_minibatches \(17\) exceeds the number of training sequences \(16 "):
        PPOConfig(num_envs=16, num_minibatches=17).validate()
    PPOConfig(num_envs=16, num_minibatches=17, core="mlp").validate()  # 1-step sequences: 16 x 128 of them


# -- the memory-core interface is small: a core with only initial_state and forward trains ---------------------
class StubGRUCore(MemoryCore):
    """A recurrent core written against the bare interface: ``initial_state`` and ``forward`` (a masked
    ``nn.GRUCell`` loop); ``step`` is the base class's default."""

    recurrent = True

    def __init__(self, input_dim: int, hidden_size: int):
        super().__init__()
        self.cell = torch.nn.GRUCell(input_dim, hidden_size)
        self.out_dim = hidden_size
        self.calls: list[tuple[int, int]] = []

    def initial_state(self, batch_size, device=None):
        return (torch.zeros(batch_size, self.out_dim, device=device),)

    def forward(self, x, state, episode_start):
        self.calls.append(tuple(x.shape[:2]))
        h, outs = state[0], []
        for t in range(x.shape[0]):
            h = self.cell(x[t], h * (~episode_start[t].bool()).float().unsqueeze(1))
            outs.append(h)
        return torch.stack(outs), (h,)


def test_a_core_with_only_initial_state_and_forward_trains(monkeypatch):
    monkeypatch.setitem(CORES, "stub", StubGRUCore)
    assert "step" not in StubGRUCore.__dict__ and "frozen" not in dir(StubGRUCore)
    cfg = PPOConfig(
        core="stub", num_envs=4, num_steps=12, total_steps=4 * 12 * 3, hidden_size=8, bptt_length=6, num_minibatches=2
    )
    ppo = PPO(make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}), cfg)
    assert ppo.fast is None  # "auto": the fast path does not know this core
    core = ppo.policy.core
    before = [p.detach().clone() for p in core.parameters()]
    history = ppo.train()
    assert len(history) == 3 and all(_finite(m) for m in history)
    assert (1, 4) in core.calls  # the rollout's steps (the default step: forward on one step)
    assert (6, 4) in core.calls  # the update's minibatches: 2 of the 8 chunks of 6 steps ...
    assert all(not torch.equal(a, b) for a, b in zip(before, core.parameters(), strict=True))  # ... and it learns
    with pytest.raises(
        ValueError,
        match="fast_cpu='on' but the CPU fast path cannot run here: it knows the "
        "memory cores LSTMCore, GRUCore, MLPCore \\(this one is StubGRUCore\\)",
    ):
        PPO(make_vector_env(TMAZE, 4), dataclasses.replace(cfg, fast_cpu="on"))


def test_the_run_layer_takes_the_observation_spaces_the_encoders_take():
    """The pre-flight asks the encoders (MIKASA-Base's Memory Cards observe a MultiDiscrete): one error otherwise."""
    from membench_agents.algos.ppo import check_ppo_spaces
    from membench_agents.errors import ConfigError

    for space in (gym.spaces.MultiDiscrete([7] * 4), gym.spaces.Discrete(3), gym.spaces.MultiBinary(2)):
        check_ppo_spaces("ppo-mlp", space, gym.spaces.Discrete(2))
    with pytest.raises(
        ConfigError, match=r"'ppo-mlp' cannot handle the environment's observation space: .*text observations"
    ):
        check_ppo_spaces("ppo-mlp", gym.spaces.Text(4), gym.spaces.Discrete(2))
