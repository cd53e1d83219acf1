"""PPO: learning a tiny memory task, continuous / dict / multi-discrete spaces, truncation bootstrapping,
clear errors, torch-tensor environments, determinism and exact resumption; make_vector_env."""

from __future__ import annotations

import io
import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space
from membench_agents.algos import PPO, PPOConfig
from membench_agents.envs import make_vector_env
from membench_agents.evaluation import evaluate
from membench_agents.policy import ActorCritic

TMAZE = "MIKASA/TMazePassive-v0"
SAME_STEP = {"autoreset_mode": AutoresetMode.SAME_STEP}


# -- PPO learns a tiny memory task -------------------------------------------------------------------------
#: Passive T-Maze with corridor L = 3 (T = 4: the cue at t = 0, the turn at t = 3). Random play succeeds
#: in 1/128 episodes, so these settings favour many short rollouts and several epochs.
TMAZE_L = 3
TMAZE_PPO = dict(num_envs=32, num_steps=16, total_steps=40_000, hidden_size=32, learning_rate=3e-3,
                 ent_coef=0.05, update_epochs=8, num_minibatches=2)


def _train_tmaze(core: str, seed: int) -> tuple[float, list]:
    cfg = PPOConfig(core=core, seed=seed, **TMAZE_PPO)
    ppo = PPO(make_vector_env(TMAZE, cfg.num_envs, env_kwargs={"corridor_length": TMAZE_L}), cfg)
    history = ppo.train()
    res = evaluate(ppo.policy, TMAZE, {"corridor_length": TMAZE_L}, list(range(100)), num_envs=25)
    return res["success_rate"], history


@pytest.mark.parametrize("core", ["lstm", "gru"])
def test_recurrent_ppo_solves_passive_tmaze(core):
    # Deterministic on one machine. Seeds 0 and 2 both solve it here; the second is run only if the first
    # does not (a guard against float drift across CPUs, not a retry on noise: each run is deterministic).
    for seed in (0, 2):
        success, history = _train_tmaze(core, seed)
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
        self.observation_space = gym.spaces.Dict({
            "rgb": gym.spaces.Box(0, 255, (12, 12, 3), np.uint8),
            "joints": gym.spaces.Box(-1, 1, (3,), np.float32),
        })
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
            info = {"final_obs": self._obs(), "_final_obs": terminated.clone(),
                    "final_info": {"success": reward > -0.5, "_success": terminated.clone()}}
            self.t = torch.where(terminated, torch.zeros_like(self.t), self.t)
        return self._obs(), reward, terminated, torch.zeros_like(terminated), info


def _sync(env_fn, n: int = 2) -> SyncVectorEnv:
    return SyncVectorEnv([env_fn for _ in range(n)], **SAME_STEP)


def _finite(m: dict) -> bool:
    return all(math.isfinite(m[k]) for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"))


# -- spaces --------------------------------------------------------------------------------------------------
def test_continuous_actions_pendulum():
    cfg = PPOConfig(num_envs=2, num_steps=64, total_steps=2 * 64 * 4, core="lstm", hidden_size=16,
                    num_minibatches=2, bptt_length=16, ent_coef=0.0, norm_obs=True, norm_reward=True)
    ppo = PPO(make_vector_env("Pendulum-v1", cfg.num_envs), cfg)
    assert ppo.policy.kind == "continuous"
    history = ppo.train()
    assert len(history) == 4 and all(_finite(m) for m in history)
    episodes = [e for m in history for e in m["episodes"]]  # Pendulum truncates at 200 steps
    assert [e[1] for e in episodes] == [200, 200] and all(e[2] is None for e in episodes)
    a, _, _, _ = ppo.policy.act(ppo.next_obs, ppo.next_state, ppo.next_episode_start)
    clipped = ppo.policy.env_action(a * 100)
    assert clipped.abs().max() <= 2.0  # Pendulum's torque bound


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

    with pytest.raises(ValueError, match="unsupported observation space Text.*text observations have no encoder"):
        PPO(SyncVectorEnv([TextEnv], **SAME_STEP), PPOConfig(num_envs=1, num_minibatches=1))


def test_config_and_env_errors():
    envs = make_vector_env(TMAZE, 2)
    with pytest.raises(ValueError, match="num_envs"):
        PPO(envs, PPOConfig(num_envs=3))
    with pytest.raises(ValueError, match="bptt_length .* must divide num_steps"):
        PPOConfig(num_steps=10, bptt_length=4).validate()
    with pytest.raises(ValueError, match="num_minibatches"):
        PPO(envs, PPOConfig(num_envs=2, num_steps=8, bptt_length=8, num_minibatches=4))
    next_step = gym.make_vec(TMAZE, num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="SAME_STEP"):
        PPO(next_step, PPOConfig(num_envs=2))


# -- truncation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("core", ["mlp", "lstm"])
def test_truncated_episodes_are_bootstrapped_with_the_final_value(core):
    gamma = 0.9
    cfg = PPOConfig(num_envs=2, num_steps=8, total_steps=16, core=core, hidden_size=8, gamma=gamma,
                    num_minibatches=1)
    ppo = PPO(_sync(lambda: gym.wrappers.TimeLimit(CountEnv(horizon=100), 3)), cfg)
    ppo._rollout()
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
    cfg = PPOConfig(num_envs=4, num_steps=6, total_steps=48, core="lstm", hidden_size=8, num_minibatches=2,
                    device=dev)
    ppo = PPO(envs, cfg)
    assert ppo.torch_env
    history = ppo.train()
    assert envs.action_types == {torch.Tensor}  # no detour through numpy
    assert all(_finite(m) for m in history)
    eps = [e for m in history for e in m["episodes"]]
    assert len(eps) == 4 * 6 * 2 // 3 and all(e[1] == 3 for e in eps) and all(isinstance(e[2], bool) for e in eps)


# -- determinism and resumption ---------------------------------------------------------------------------------
def _small_ppo(seed: int = 0, **kw) -> PPO:
    cfg = PPOConfig(num_envs=4, num_steps=16, total_steps=10_000, core="lstm", hidden_size=16, num_minibatches=2,
                    bptt_length=8, seed=seed, norm_obs=True, norm_reward=True, **kw)
    return PPO(make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}), cfg)


def _strip(m: dict) -> dict:
    return {k: v for k, v in m.items() if k not in ("sps", "rollout_sps", "time_rollout", "time_update")}


def test_same_seed_same_run_and_different_seed_differs():
    a = [_strip(_small_ppo(0).train_iteration()) for _ in range(1)]
    b = [_strip(_small_ppo(0).train_iteration()) for _ in range(1)]
    c = [_strip(_small_ppo(1).train_iteration()) for _ in range(1)]
    assert a == b
    assert a != c


def test_state_dict_resumes_exactly():
    ppo = _small_ppo(3)
    for _ in range(2):
        ppo.train_iteration()
    buf = io.BytesIO()
    torch.save(ppo.state_dict(), buf)
    continued = [_strip(ppo.train_iteration()) for _ in range(2)]

    other = _small_ppo(99)  # a different seed: everything must come from the checkpoint
    buf.seek(0)
    other.load_state_dict(torch.load(buf, weights_only=False))
    assert other.global_step == 2 * 4 * 16 and other.iteration == 2
    resumed = [_strip(other.train_iteration()) for _ in range(2)]
    assert resumed == continued
    for p, q in zip(ppo.policy.parameters(), other.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


# -- the numpy-env rollout fast path equals the generic rollout ---------------------------------------------------
class StartDiscreteEnv(CountEnv):
    """CountEnv with Discrete(3, start=-1) actions (the action is checked, then ignored)."""

    def __init__(self):
        super().__init__(horizon=5)
        self.action_space = gym.spaces.Discrete(3, start=-1)

    def step(self, action):
        assert self.action_space.contains(action), action
        return super().step(0)


@pytest.mark.parametrize("case", ["tmaze", "dict", "start", "truncation", "continuous"])
def test_numpy_rollout_fast_path_equals_generic_rollout(case):
    """CPU + numpy envs use PPO._rollout_numpy (buffers written in place, Discrete policies via act_into with
    the rollout's noise drawn in one call); it must give the generic per-step path's numbers bit for bit."""
    def make():
        kw = dict(num_envs=4, num_steps=12, total_steps=10_000, hidden_size=8, num_minibatches=2, seed=4)
        if case == "tmaze":
            return PPO(make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}),
                       PPOConfig(core="lstm", bptt_length=6, norm_obs=True, norm_reward=True, **kw))
        if case == "dict":
            return PPO(_sync(DictCueEnv, 4), PPOConfig(core="gru", **kw))
        if case == "start":
            return PPO(_sync(StartDiscreteEnv, 4), PPOConfig(core="lstm", **kw))
        if case == "truncation":
            return PPO(_sync(lambda: gym.wrappers.TimeLimit(CountEnv(horizon=100), 5), 4), PPOConfig(core="mlp", **kw))
        return PPO(make_vector_env("Pendulum-v1", 4), PPOConfig(core="lstm", **kw))

    fast, generic = make(), make()
    assert fast._fast is not None
    generic._rollout_steps = generic._rollout_generic
    for _ in range(2):
        assert _strip(fast.train_iteration()) == _strip(generic.train_iteration())
    for name in ("act_buf", "logp_buf", "val_buf", "rew_buf", "done_buf", "es_buf"):
        assert torch.equal(getattr(fast, name), getattr(generic, name)), name
    obs_f, obs_g = fast.obs_buf, generic.obs_buf
    for k in (obs_f if isinstance(obs_f, dict) else [None]):
        assert torch.equal(obs_f[k] if k else obs_f, obs_g[k] if k else obs_g)
    for p, q in zip(fast.policy.parameters(), generic.policy.parameters(), strict=True):
        assert torch.equal(p, q)
    assert torch.equal(fast.generator.get_state(), generic.generator.get_state())


def test_written_out_lstm_update_equals_the_autograd_update():
    """Discrete LSTM policies on the CPU update without autograd (LSTMCore.forward_rows_manual, the loss's
    written-out gradients straight into the flat buffer): the same parameters as the autograd update, with
    padded minibatches (bptt 6 on T-Maze T = 4) and without; a policy with an encoder MLP, and GRU and MLP
    cores, keep autograd."""
    def make(bptt):
        cfg = PPOConfig(core="lstm", num_envs=4, num_steps=12, total_steps=10_000, hidden_size=8,
                        num_minibatches=2, bptt_length=bptt, seed=5)
        return PPO(make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}), cfg)

    for bptt in (6, 4):  # 4 = T: every chunk is one episode, run as one plain call from the initial state
        manual, autograd = make(bptt), make(bptt)
        assert manual._manual
        autograd._manual = False
        for _ in range(3):
            assert _strip(manual.train_iteration()) == _strip(autograd.train_iteration())
        for (name, p), q in zip(manual.policy.named_parameters(), autograd.policy.parameters(), strict=True):
            assert torch.equal(p, q), name
    cfg = PPOConfig(core="lstm", num_envs=4, num_steps=12, hidden_size=8, num_minibatches=2, encoder_size=8)
    assert not PPO(make_vector_env(TMAZE, 4), cfg)._manual
    for core in ("gru", "mlp"):  # no written-out path: autograd
        assert not PPO(make_vector_env(TMAZE, 4), PPOConfig(core=core, num_envs=4, num_steps=12, hidden_size=8))._manual


# -- make_vector_env -------------------------------------------------------------------------------------------
def test_make_vector_env_native_and_sync():
    from membench_envs.envs._native import NativeVectorEnv

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
    with pytest.raises(ValueError, match="unknown vectorization"):
        make_vector_env(TMAZE, 2, vectorization="threads")


def test_direct_fused_adam_step_equals_optimizer_step():
    """PPO's direct fused-Adam call updates parameters and optimizer state exactly as ``optimizer.step()``."""
    from membench_agents.algos.ppo import _adam, _adam_step

    torch.manual_seed(0)
    nets = [torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    opts = [_adam(n.parameters(), 1e-2, torch.device("cpu")) for n in nets]
    for i in range(4):
        x = torch.randn(9, 5, generator=torch.Generator().manual_seed(i))
        for net, opt, direct in ((nets[0], opts[0], False), (nets[1], opts[1], True)):
            for p in net.parameters():
                p.grad = None
            net(x).square().mean().backward()
            if direct:
                _adam_step(opt)
            else:
                opt.step()
        if i == 0:  # the state exists now: from here on the direct path must be taken, not opt.step()
            opts[1].step = None
    for a, b in zip(nets[0].parameters(), nets[1].parameters(), strict=True):
        assert torch.equal(a, b)
        sa, sb = opts[0].state[a], opts[1].state[b]
        for k in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(sa[k], sb[k])
    assert float(opts[1].state[next(nets[1].parameters())]["step"]) == 4


# -- the PPO objective as one autograd node equals the loss written with tensor ops ---------------------------
def _reference_objective(newlogp, entropy, newv, logp_old, adv, ret, val_old, clip, clip_vloss, ent_coef, vf_coef,
                         norm_adv):
    """CleanRL's PPO loss, op by op (what _PPOObjective must reproduce, value and gradient)."""
    logratio = newlogp - logp_old
    ratio = logratio.exp()
    if norm_adv:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
    if clip_vloss:
        v_clipped = val_old + (newv - val_old).clamp(-clip, clip)
        v = 0.5 * torch.max((newv - ret).square(), (v_clipped - ret).square()).mean()
    else:
        v = 0.5 * (newv - ret).square().mean()
    ent = entropy.mean()
    kl = ((ratio - 1) - logratio).mean()
    clipfrac = ((ratio - 1.0).abs() > clip).float().mean()
    return pg - ent_coef * ent + vf_coef * v, torch.stack([pg, v, ent, kl, clipfrac]).detach()


@pytest.mark.parametrize("clip_vloss", [True, False])
@pytest.mark.parametrize("norm_adv", [True, False])
def test_ppo_objective_matches_the_op_by_op_loss_and_its_gradient(clip_vloss, norm_adv):
    from membench_agents.algos.ppo import _PPOObjective

    g = torch.Generator().manual_seed(0)
    shape = (16, 8)
    logp_old = -torch.rand(shape, generator=g, dtype=torch.float64) * 2
    # new log-probs around the old ones: some ratios inside the clip range, some outside on both sides
    newlogp = (logp_old + (torch.rand(shape, generator=g, dtype=torch.float64) - 0.5) * 0.8).requires_grad_()
    entropy = torch.rand(shape, generator=g, dtype=torch.float64).requires_grad_()
    val_old = torch.randn(shape, generator=g, dtype=torch.float64)
    newv = (val_old + torch.randn(shape, generator=g, dtype=torch.float64) * 0.4).requires_grad_()
    adv = torch.randn(shape, generator=g, dtype=torch.float64)
    ret = torch.randn(shape, generator=g, dtype=torch.float64)
    coefs = (0.2, clip_vloss, 0.01, 0.5, norm_adv)
    out = _PPOObjective.apply(newlogp, entropy, newv, logp_old, adv, ret, val_old, coefs)
    ref_loss, ref_stats = _reference_objective(newlogp, entropy, newv, logp_old, adv, ret, val_old, *coefs)
    torch.testing.assert_close(out[0], ref_loss)
    torch.testing.assert_close(out[1:], ref_stats)
    clipped = ((newlogp - logp_old).exp() - 1).abs() > 0.2
    assert 0 < int(clipped.sum()) < clipped.numel()  # both branches of the surrogate are exercised
    grads = torch.autograd.grad(out[0], (newlogp, entropy, newv), retain_graph=True)
    ref_grads = torch.autograd.grad(ref_loss, (newlogp, entropy, newv))
    for name, a, b in zip(("newlogp", "entropy", "newv"), grads, ref_grads, strict=True):
        torch.testing.assert_close(a, b, msg=name)
    # only the loss carries a gradient; the statistics do not
    g_stats = torch.autograd.grad(out[1:].sum(), (newlogp,), allow_unused=True)[0]
    assert g_stats is None or torch.count_nonzero(g_stats) == 0


@pytest.mark.parametrize("core", ["lstm", "gru", "mlp"])
def test_discrete_fast_loss_equals_the_generic_path(core):
    """The CPU Discrete update (feature rows -> one node for head, categorical and PPO loss, numpy inside)
    gives the loss, statistics and parameter gradients of evaluate_actions + the PPO objective."""
    from membench_agents.algos.ppo import _DiscretePPOLoss, _PPOObjective

    T, B = 12, 5
    g = torch.Generator().manual_seed(1)
    policy = ActorCritic(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(4, start=2), core, 16)
    obs = torch.rand(T, B, 3, generator=g) * 2 - 1
    es = torch.rand(T, B, generator=g) < 0.2  # episode starts inside the chunks: padded segments
    state = tuple(torch.randn(s.shape, generator=g) for s in policy.initial_state(B))
    actions = torch.randint(2, 6, (T, B), generator=g)
    with torch.no_grad():
        logp_old = policy.evaluate_actions(obs, actions, state, es)[0] + torch.randn(T, B, generator=g) * 0.3
    adv, ret, val_old = (torch.randn(T, B, generator=g) for _ in range(3))
    coefs = (0.2, True, 0.01, 0.5, True)
    params = list(policy.parameters())

    generic = _PPOObjective.apply(*policy.evaluate_actions(obs, actions, state, es), logp_old, adv, ret, val_old, coefs)
    ref_grads = torch.autograd.grad(generic[0], params)
    rows, index = policy.features_rows(obs, state, es)
    if core != "mlp":
        assert index is not None and rows.shape[0] > T * B  # the padded layout is exercised
    targets = np.stack([x.reshape(-1).numpy() for x in (logp_old, adv, ret, val_old)])
    fast = _DiscretePPOLoss.apply(rows, policy.head.weight, policy.head.bias, index, (actions - 2).reshape(-1).numpy(),
                                  targets, coefs)
    grads = torch.autograd.grad(fast[0], params)
    torch.testing.assert_close(fast, generic.detach(), rtol=1e-5, atol=1e-6)
    for (name, _), a, b in zip(policy.named_parameters(), grads, ref_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)


def test_flat_parameters_share_storage_and_clip_like_torch():
    """PPO's flat parameter buffer: parameters and gradients are views of two flat tensors, a gradient set
    to None is re-attached, and clipping equals nn.utils.clip_grad_norm_."""
    from membench_agents.algos.ppo import _clip_grad_norm, _FlatParams

    torch.manual_seed(0)
    nets = [torch.nn.LSTM(3, 8), torch.nn.LSTM(3, 8)]
    nets[1].load_state_dict(nets[0].state_dict())
    flat = _FlatParams(list(nets[1].parameters()))
    for p in nets[1].parameters():
        assert p.untyped_storage().data_ptr() == flat.param.untyped_storage().data_ptr()
    x = torch.randn(5, 2, 3)
    for step in range(2):
        if step == 1:
            for p in nets[1].parameters():
                p.grad = None  # what optimizer.zero_grad() does
        flat.zero_grad()
        for p in nets[0].parameters():
            p.grad = None
        for net in nets:
            net(x)[0].square().sum().backward()
        torch.nn.utils.clip_grad_norm_(nets[0].parameters(), 0.1)
        _clip_grad_norm([flat.param], 0.1)  # what PPO clips: the optimizer's one flat parameter
        for a, b in zip(nets[0].parameters(), nets[1].parameters(), strict=True):
            torch.testing.assert_close(a.grad, b.grad)
    assert float(flat.param.grad.norm()) == pytest.approx(0.1, rel=1e-4)
    with torch.no_grad():
        flat.param.add_(1.0)  # an optimizer step on the flat tensor moves the module's parameters
    assert torch.equal(next(nets[1].parameters()), next(nets[0].parameters()) + 1.0)
