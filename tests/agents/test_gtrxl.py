"""GTrXL core: memory hygiene at episode starts, causality and the receptive field, gradients in the window,
rollout-time (step by step) = update-time (chunk) outputs, PPO on the Passive T-Maze, and a CLI run with exact
resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from membench_agents.algos.ppo import PPO, PPOConfig
from membench_agents.algos.registry import AGENTS
from membench_agents.algos.trainer import preflight
from membench_agents.algos.vector import make_vector_env
from membench_agents.nets.memory import CORES, GTrXLCore, make_core
from membench_agents.nets.memory.gtrxl import GRUGate, RelativeAttention, sinusoid_table
from membench_agents.runs import cell, checkpoint, loop
from membench_agents.runs.evaluation import evaluate

from membench_agents import errors
from tests.agents._runs_helpers import TMAZE, assert_same_params, final_params, history, membench, tiny_config

F, D = 5, 16


def _core(n_layers: int = 2, window: int = 3, seed: int = 0) -> GTrXLCore:
    torch.manual_seed(seed)
    core = make_core("gtrxl", F, D, n_layers=n_layers, n_heads=4, window=window)
    with torch.no_grad():  # larger gate openings than at initialisation, so every path carries signal
        for block in core.blocks:
            block.gate_attn.bias.fill_(-1.0)
            block.gate_ff.bias.fill_(-1.0)
    return core


def _x(t: int, b: int, seed: int = 1) -> torch.Tensor:
    return torch.randn(t, b, F, generator=torch.Generator().manual_seed(seed))


def _no_starts(t: int, b: int) -> torch.Tensor:
    es = torch.zeros(t, b, dtype=torch.bool)
    es[0] = True
    return es


def _steps(core, x, es, state=None):
    """Run ``x [T, B, F]`` one step at a time (the rollout path); returns (outputs [T, B, D], state)."""
    state = core.initial_state(x.shape[1]) if state is None else state
    outs = []
    for t in range(x.shape[0]):
        o, state = core.step(x[t], state, es[t])
        outs.append(o)
    return torch.stack(outs), state


def test_registered_with_its_options():
    assert CORES["gtrxl"] is GTrXLCore and AGENTS["ppo-gtrxl"].core == "gtrxl"
    core = make_core("gtrxl", F, D, n_layers=3, n_heads=2, window=5)
    assert (core.out_dim, len(core.blocks), core.context_length, core.effective_context) == (D, 3, 5, 13)
    memory, valid = core.initial_state(4)
    assert memory.shape == (4, 3, 4, D) and valid.shape == (4, 4) and not valid.any()
    with pytest.raises(ValueError, match=r"n_heads \(3\) must divide .* hidden_size \(16\)"):
        make_core("gtrxl", F, D, n_heads=3)
    with pytest.raises(ValueError, match="window must be an integer >= 1, got 0"):
        make_core("gtrxl", F, D, window=0)


def test_attention_scores_are_transformer_xl_relative():
    """One attention layer against the formula written out per (query i, key j): score = ((q_i + u) . k_j +
    (q_i + v) . W_R R_{i-j}) / sqrt(d_head), softmax over the allowed keys."""
    torch.manual_seed(0)
    M, T, dim, H = 3, 2, 8, 2
    attn = RelativeAttention(dim, H, max_distance=M)
    with torch.no_grad():
        attn.u.normal_()
        attn.v.normal_()
    x, keys = torch.randn(1, T, dim), torch.randn(1, M + T, dim)
    keys[:, M:] = x
    dist = (torch.arange(T).unsqueeze(1) + M) - torch.arange(M + T).unsqueeze(0)
    allowed = ((dist >= 0) & (dist <= M)).unsqueeze(0)
    out = attn(x, keys, torch.nn.functional.one_hot(dist.clamp(0, M), M + 1).float(), allowed)

    dh = dim // H
    q, k, v = attn.q(x)[0], attn.kv(keys)[0, :, :dim], attn.kv(keys)[0, :, dim:]
    r = attn.r(sinusoid_table(M + 1, dim))
    expected = torch.zeros(T, dim)
    for h in range(H):
        sl = slice(h * dh, (h + 1) * dh)
        for i in range(T):
            js = [j for j in range(M + T) if allowed[0, i, j]]
            scores = torch.stack(
                [((q[i, sl] + attn.u[h]) @ k[j, sl] + (q[i, sl] + attn.v[h]) @ r[M + i - j, sl]) / dh**0.5 for j in js]
            )
            expected[i, sl] = torch.softmax(scores, 0) @ v[js, sl]
    torch.testing.assert_close(out[0], attn.o(expected), rtol=0, atol=1e-5)


def test_gru_gate_formula_and_identity_at_a_large_bias():
    """g(x, y) = (1 - z) x + z h with r = s(W_r y + U_r x), z = s(W_z y + U_z x - b_g), h = tanh(W_g y + U_g (r x))
    (Parisotto et al. 2020, eq. for the GRU-type gate); a large b_g makes it the identity on x."""
    torch.manual_seed(0)
    gate, x, y = GRUGate(D, gate_bias=2.0), torch.randn(4, D), torch.randn(4, D)
    W_r, W_z, W_g = gate.w.weight.chunk(3, 0)
    U_r, U_z = gate.u.weight.chunk(2, 0)
    r = torch.sigmoid(y @ W_r.T + x @ U_r.T)
    z = torch.sigmoid(y @ W_z.T + x @ U_z.T - 2.0)
    h = torch.tanh(y @ W_g.T + (r * x) @ gate.u_g.weight.T)
    torch.testing.assert_close(gate(x, y), (1 - z) * x + z * h)
    with torch.no_grad():
        gate.bias.fill_(30.0)
    torch.testing.assert_close(gate(x, y), x)


@pytest.mark.parametrize("path", ["step", "chunk"])
def test_memory_is_cleared_at_an_episode_start(path):
    """What follows an episode start equals a fresh run of the new episode, whatever came before (in the
    carried memory and earlier in the same sequence)."""
    core, B = _core(), 3
    before, after = _x(6, B, seed=2), _x(5, B, seed=3)
    es_after = _no_starts(5, B)
    fresh, _ = core(after, core.initial_state(B), es_after)
    # the episode boundary inside one sequence, and between a carried memory and a new sequence
    es = torch.cat([_no_starts(6, B), es_after])
    if path == "step":
        out, _ = _steps(core, torch.cat([before, after]), es)
        _, carried = _steps(core, before, _no_starts(6, B))
        out2, _ = _steps(core, after, es_after, carried)
    else:
        out, _ = core(torch.cat([before, after]), core.initial_state(B), es)
        _, carried = core(before, core.initial_state(B), _no_starts(6, B))
        out2, _ = core(after, carried, es_after)
    torch.testing.assert_close(out[6:], fresh, rtol=0, atol=1e-5)
    torch.testing.assert_close(out2, fresh, rtol=0, atol=1e-5)
    # without the episode start the past does matter (so the equality above is not vacuous)
    cont, _ = core(after, carried, torch.zeros(5, B, dtype=torch.bool))
    assert (cont - fresh).abs().max() > 1e-3


@pytest.mark.parametrize("n_layers, window", [(1, 4), (2, 3)])
def test_output_depends_exactly_on_the_receptive_field(n_layers, window):
    """out[t] changes when x[s] changes iff t - n_layers * (window - 1) <= s <= t, through the carried memory
    (step by step) and inside one sequence alike."""
    core, T, B, t = _core(n_layers, window), 12, 2, 9
    field = n_layers * (window - 1)
    x, es = _x(T, B), _no_starts(T, B)
    base_seq, _ = core(x, core.initial_state(B), es)
    base_step, _ = _steps(core, x, es)
    for s in range(T):
        y = x.clone()
        y[s] += 1.0
        seq, _ = core(y, core.initial_state(B), es)
        step, _ = _steps(core, y, es)
        expected = t - field <= s <= t
        for out, base in ((seq, base_seq), (step, base_step)):
            changed = bool((out[t] - base[t]).abs().max() > 1e-5)
            assert changed == expected, f"x[{s}] {'should' if expected else 'should not'} change out[{t}]"


def test_gradients_reach_the_window_and_nothing_else():
    """d out[t] / d x[s] is nonzero exactly in the receptive field of the same episode inside the sequence;
    the memory carried in is a constant (its gradient path is cut)."""
    core, T, B = _core(2, 3), 10, 2
    x = _x(T, B).requires_grad_(True)
    es = torch.zeros(T, B, dtype=torch.bool)
    es[6, 0] = True  # column 0: a new episode at step 6
    _, memory = core(_x(4, B, seed=5), core.initial_state(B), _no_starts(4, B))
    memory = tuple(m.requires_grad_(m.is_floating_point()) for m in memory)
    t = 8
    out, new_state = core(x, memory, es)
    assert not new_state[0].requires_grad
    w = torch.randn(D, generator=torch.Generator().manual_seed(6))  # (the sum of a layer norm's output is constant)
    grad_x, grad_mem = torch.autograd.grad((out[t] * w).sum(), [x, memory[0]], allow_unused=True, retain_graph=True)
    reach = grad_x.abs().sum(-1) > 0  # [T, B]
    for s in range(T):
        assert bool(reach[s, 1]) == (t - 4 <= s <= t), s  # column 1: one episode, window field 4
        assert bool(reach[s, 0]) == (6 <= s <= t), s  # column 0: nothing before its episode start
    assert grad_mem is None or not grad_mem.any()
    # and the parameters of every block get gradient
    loss = (out * torch.randn(out.shape, generator=torch.Generator().manual_seed(7))).sum()
    params = torch.autograd.grad(loss, list(core.parameters()), allow_unused=True)
    names = [
        n for n, g in zip((n for n, _ in core.named_parameters()), params, strict=True) if g is None or not g.any()
    ]
    assert names == [], f"no gradient reaches {names}"


def test_step_by_step_and_chunked_outputs_agree():
    """The rollout (one step at a time) and the update (chunks re-run from the memory stored at their start)
    compute the same outputs, with episode starts inside chunks and at chunk borders."""
    core, T, B, K = _core(2, 4), 24, 3, 6
    x = _x(T, B)
    es = torch.rand(T, B, generator=torch.Generator().manual_seed(4)) < 0.15
    es[0] = True
    es[12, 1] = True  # an episode start at a chunk border
    rollout, stored, state = [], [], core.initial_state(B)
    for t in range(T):
        if t % K == 0:
            stored.append(state)
        o, state = core.step(x[t], state, es[t])
        rollout.append(o)
    rollout = torch.stack(rollout)
    for c, chunk_state in enumerate(stored):
        out, _ = core(x[c * K : (c + 1) * K], chunk_state, es[c * K : (c + 1) * K])
        torch.testing.assert_close(out, rollout[c * K : (c + 1) * K], rtol=0, atol=1e-5)
    whole, final = core(x, core.initial_state(B), es)
    torch.testing.assert_close(whole, rollout, rtol=0, atol=1e-5)
    torch.testing.assert_close(final[0], state[0], rtol=0, atol=1e-5)
    assert torch.equal(final[1], state[1])


def test_ppo_update_re_runs_each_chunk_from_its_stored_memory():
    """Inside PPO: the log-probabilities and values the update computes for every chunk, before any parameter
    changes, equal those the rollout recorded (chunks start with a non-empty memory)."""
    cfg = PPOConfig(
        core="gtrxl",
        gtrxl=dict(n_layers=2, n_heads=2, window=4),
        num_envs=4,
        num_steps=24,
        bptt_length=6,
        hidden_size=16,
        total_steps=10_000,
        num_minibatches=2,
        seed=3,
    )
    # episodes of 5 steps (L = 4), chunks of 6: most chunks begin inside an episode, with a non-empty memory
    ppo = PPO(make_vector_env(TMAZE, cfg.num_envs, env_kwargs={"corridor_length": 4}), cfg)
    assert ppo.fast is None  # the CPU fast path knows the built-in recurrent cores only
    ppo._rollout()
    states = tuple(s.reshape(-1, *s.shape[2:]) for s in ppo.state_buf)
    assert int((states[1].any(1) & ~ppo.chunks(ppo.es_buf)[0]).sum()) >= 4
    with torch.no_grad():
        logp, _, value = ppo.policy.evaluate_actions(
            ppo.chunks(ppo.obs_buf), ppo.chunks(ppo.act_buf), states, ppo.chunks(ppo.es_buf)
        )
    torch.testing.assert_close(logp, ppo.chunks(ppo.logp_buf), rtol=0, atol=1e-5)
    torch.testing.assert_close(value, ppo.chunks(ppo.val_buf), rtol=0, atol=1e-5)
    ppo.envs.close()


def test_config_errors_name_the_option():
    with pytest.raises(ValueError, match=r"unknown PPOConfig.gtrxl option 'layers'; valid: n_layers, n_heads"):
        PPOConfig(core="gtrxl", gtrxl={"layers": 2}).validate()
    with pytest.raises(ValueError, match=r"PPOConfig.gtrxl.n_heads \(5\) must divide .* hidden_size \(128\)"):
        PPOConfig(core="gtrxl", gtrxl={"n_heads": 5}).validate()
    with pytest.raises(ValueError, match=r"PPOConfig\.gtrxl configures the gtrxl core, but core is 'lstm'"):
        PPOConfig(core="lstm", gtrxl={"window": 4}).validate()
    with pytest.raises(ValueError, match=r"fast path cannot run here: .* \(this one is GTrXLCore\)"):
        PPO(
            make_vector_env(TMAZE, 2),
            PPOConfig(core="gtrxl", num_envs=2, num_steps=4, hidden_size=8, num_minibatches=1, fast_cpu="on"),
        )
    with pytest.raises(errors.ConfigError, match=r"ppo.gtrxl must be a mapping, got 3"):
        tiny_config("ppo-gtrxl", **{"ppo.gtrxl": 3})
    # the pre-flight check builds the policy with the run's GTrXL options (here 2 heads of width 3, which the
    # default of 4 heads would not allow)
    preflight(tiny_config("ppo-gtrxl", **{"ppo.hidden_size": 6, "ppo.gtrxl.n_heads": 2}))
    with pytest.raises(errors.ConfigError, match=r"ppo\.gtrxl\.n_heads \(4\) must divide the model width hidden_size"):
        tiny_config("ppo-gtrxl", **{"ppo.hidden_size": 6, "ppo.gtrxl.n_heads": 4})


#: Passive T-Maze L = 3, as in test_ppo.py's learning test, with a one-layer GTrXL over 8 steps.
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


@pytest.mark.slow  # learning; attention, gate, memory and chunked update are unit-tested
def test_ppo_gtrxl_solves_passive_tmaze():
    # Deterministic on one machine; measured here: seeds 0 and 1 both reach 1.0 (about 5 s each). Seed 1 runs
    # only if seed 0 does not solve it (a guard against float drift across CPUs, not a retry on noise).
    for seed in (0, 1):
        cfg = PPOConfig(core="gtrxl", gtrxl=dict(n_layers=1, n_heads=2, window=8), seed=seed, **TMAZE_PPO)
        ppo = PPO(make_vector_env(TMAZE, cfg.num_envs, env_kwargs={"corridor_length": 3}), cfg)
        ppo.train()
        success = evaluate(ppo.policy, TMAZE, {"corridor_length": 3}, list(range(100)), num_envs=25)["success_rate"]
        ppo.envs.close()
        if success >= 0.95:
            break
    assert success >= 0.95, f"PPO-GTrXL reached only {success:.2f} success on T-Maze L=3"


def test_membench_train_ppo_gtrxl_checkpoints_and_resumes_exactly(tmp_path):
    """`membench train --agent ppo-gtrxl` runs end to end (run folder, TensorBoard, checkpoint, the GTrXL options
    in config.yaml); an interrupted run of the same config, continued by `membench train --resume` in a new
    process, ends with the same parameters, logged metrics and evaluation."""
    sets = {"ppo.gtrxl.window": 4, "ppo.bptt_length": 8}
    cfg = tiny_config("ppo-gtrxl", iterations=5, **sets)
    straight = tmp_path / "straight"
    cli_sets = [
        "env_kwargs.corridor_length=2",
        "eval.episodes=20",
        "eval.num_envs=10",
        "checkpoint.every_iterations=2",
        "ppo.num_envs=8",
        "ppo.num_steps=16",
        "ppo.num_minibatches=2",
        "ppo.update_epochs=2",
        "ppo.hidden_size=16",
        "ppo.learning_rate=0.001",
        "ppo.deterministic=true",
        *(f"{k}={v}" for k, v in sets.items()),
    ]  # the overrides of tiny_config
    out = membench(
        "train",
        "--env",
        TMAZE,
        "--agent",
        "ppo-gtrxl",
        "--steps",
        str(5 * 8 * 16),
        "--seeds",
        "1",
        "--run-dir",
        str(straight),
        "--jobs",
        "1",
        "--no-progress",
        *(a for s in cli_sets for a in ("--set", s)),
    )
    assert out.returncode == 0, out.stderr
    recorded = yaml.safe_load((straight / "config.yaml").read_text())
    assert recorded["agent"] == "ppo-gtrxl" and recorded["ppo"]["gtrxl"]["window"] == 4
    assert recorded["ppo"]["gtrxl"]["n_layers"] == 2  # the defaults file's other options are spelled out
    events = list((straight / "seed_0").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0

    run = tmp_path / "resumed"
    (job,) = cell.prepare_run(cfg, run)
    with pytest.raises(loop.Interrupted):
        loop.train_seed(job.cfg, job.seed, job.seed_dir, stop_after_iterations=2)
    assert checkpoint.load_checkpoint(Path(job.seed_dir, "checkpoint.pt"))["global_step"] == 2 * 8 * 16
    out = membench("train", "--resume", str(run), "--jobs", "1", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert_same_params(final_params(straight / "seed_0"), final_params(run / "seed_0"))
    assert history(straight / "seed_0") == history(run / "seed_0")
    ra, rb = (json.loads((d / "results.json").read_text()) for d in (straight, run))
    assert ra["per_run"] == rb["per_run"]
