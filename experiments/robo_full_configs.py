"""Write the MIKASA-Robo `full` (state) cells shipped with the package:
membench_agents/config/cells/MIKASA/<Task>-v0/{ppo-mlp,sac}.full.yaml.

The `full` variant makes every robot task an MDP; the MIKASA-Robo paper uses it as the solvability check
("PPO-MLP in state mode with dense reward reaches 100% success on all 32 tasks", its Figures 4, 10 and 11).
These cells carry the settings of the authors' PPO baselines (their ``ppo_memtasks.py`` defaults and run-script
overrides) at the published budgets, with two CPU-scale changes written into every file:

* ``num_envs`` 16 instead of 1024 (one ManiSkill process per environment on a CPU) and ``num_minibatches`` 4
  instead of 32; on a GPU, ``--set ppo.num_envs=1024 --set ppo.num_minibatches=32`` restores the published
  batch shape;
* actor and critic share one 256-256-256 tanh trunk (membench's ActorCritic) where the baselines use two.

Episodes run the full T steps (``terminate_on_success: false``), as in the baselines (ManiSkill's vector env with
``ignore_terminations=True``), and success is read at the last step. With episodes that end on success and a dense
reward, success is a bad deal for the agent: at gamma 0.8, hovering next to the right cube earns about 1 per step
(a value near 5) while touching it earns the maximum once and ends the episode. Measured on RememberColor3 (full,
the settings below with episodes ending on success): the evaluated return rose from 9.7 (0 steps) to 12.3
(750k) while the evaluated success fell from 0.17 (250k steps) to 0.03 (750k).

SAC: the paper reports SAC only as "more sample-efficient than PPO-MLP, weak on complex tasks" and publishes no
budget or hyperparameters, so the SAC cells are our choice (stated in each file): 1M steps, gamma 0.8 as the
baselines' Remember* runs, 4 environments, one gradient step per two environment steps, batch 256.

Run ``python experiments/robo_full_configs.py`` after adding a MIKASA-Robo ID (``--check`` only reports files
that differ, for the tests).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

CONFIGS = Path(__file__).resolve().parents[1] / "membench_agents" / "src" / "membench_agents" / "config" / "cells"
M = 1_000_000


def ppo_budget(name: str) -> tuple[int, dict, str]:
    """(total_steps, extra ppo fields, where the numbers come from) of one task, from the baselines' run scripts."""
    if name.startswith("Remember"):
        steps = 10 * M if name == "RememberShapeAndColor5x3" else 5 * M
        return steps, {"gamma": 0.8, "gae_lambda": 0.9}, "run scripts: Remember* 5M (5x3: 10M), gamma 0.8, lambda 0.9"
    for family in ("BunchOfColors", "SeqOfColors", "ChainOfColors"):
        if name.startswith(family):
            n = int(name[len(family) :])
            source = "run scripts: colours 50M / 75M / 100M for 3 / 5 / 7, gamma 0.9"
            return {3: 50, 5: 75, 7: 100}[n] * M, {"gamma": 0.9}, source
    shell = {"ShellGameTouch": 20, "ShellGamePush": 10, "ShellGamePick": 100}
    if name in shell:
        return shell[name] * M, {}, "run scripts: ShellGame Touch 20M, Push 10M, Pick 100M"
    if name.startswith("Rotate"):
        return 50 * M, {}, "run scripts: Rotate 50M"
    if name.startswith("InterceptGrab"):
        return 35 * M, {}, "run scripts: InterceptGrab 35M"
    if name == "TakeItBack":
        return 200 * M, {"target_kl": 0.1}, "run scripts: TakeItBack 200M (4096 envs), target KL 0.1"
    return 50 * M, {}, "no run-script override published: the baseline's default total_timesteps 50M"


#: Dense reward normalised to [0, 1] and fixed-length episodes, as the baselines (both agents). normalized_dense is
#: also the IDs' default reward_mode; it is written into every cell anyway, so a cell never depends on a default.
ENV_KWARGS = {"reward_mode": "normalized_dense", "terminate_on_success": False}


def _cell(comments: list[str], body: dict) -> str:
    """One config file: the comment lines, then ``body`` as YAML (keys in the order given)."""
    header = "".join(f"# {line}\n" for line in [*comments, "Written by experiments/robo_full_configs.py."])
    return header + yaml.safe_dump(body, sort_keys=False)


def ppo_cell(env_id: str, name: str) -> str:
    steps, extra, source = ppo_budget(name)
    ppo = {
        "num_envs": 16,
        "num_steps": 90,
        "learning_rate": 3.0e-4,
        "anneal_lr": False,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "clip_coef": 0.2,
        "ent_coef": 0.0,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "update_epochs": 4,
        "num_minibatches": 4,
        "target_kl": 0.2,
        "hidden_size": 256,
        "encoder_size": 256,
        "init_log_std": -0.5,
        "norm_obs": False,
        "norm_reward": False,
    }
    ppo.update(extra)
    return _cell(
        [
            f"{env_id}, full (state) variant, PPO-MLP: the paper's solvability check (100% success in state mode).",
            f"Budget and overrides: the authors' baselines ({source}).",
            "Other fields: their ppo_memtasks.py defaults (lr 3e-4, no annealing, 4 epochs, clip 0.2, ent 0,",
            "vf 0.5, grad norm 0.5, target KL 0.2, MLP 256x3 tanh, log-std -0.5, normalized_dense reward, no",
            "observation/reward normalisation). CPU scale: 16 envs and 4 minibatches instead of 1024 and 32",
            "(on a GPU: --set ppo.num_envs=1024 --set ppo.num_minibatches=32). Fixed-length episodes as the",
            "baselines' (terminate_on_success false; success is read at the last step).",
        ],
        {
            "env": env_id,
            "agent": "ppo-mlp",
            "obs_variant": "full",
            "env_kwargs": ENV_KWARGS,
            "total_steps": steps,
            "ppo": ppo,
        },
    )


def sac_cell(env_id: str, name: str) -> str:
    sac = {
        "num_envs": 4,
        "buffer_size": 1_000_000,
        "learning_starts": 4000,
        "batch_size": 256,
        "gradient_steps": 2,
        "gamma": 0.8,
        "tau": 0.005,
        "policy_lr": 3.0e-4,
        "q_lr": 3.0e-4,
        "autotune": True,
        "hidden_size": 256,
    }
    return _cell(
        [
            f"{env_id}, full (state) variant, SAC. The paper publishes no SAC budget or hyperparameters; these are",
            "membench's choice: 1M steps, gamma 0.8 (as the baselines' Remember* PPO runs), 4 envs with 2 gradient",
            "steps per vector step (one update per two env steps), batch 256, networks 256-256, normalized_dense "
            "reward.",
        ],
        {
            "env": env_id,
            "agent": "sac",
            "obs_variant": "full",
            "env_kwargs": ENV_KWARGS,
            "total_steps": 1_000_000,
            "sac": sac,
        },
    )


def cells() -> dict[Path, str]:
    from membench_envs.catalogue.robo import PRESETS

    out = {}
    for p in PRESETS:
        folder = CONFIGS / p.id
        out[folder / "ppo-mlp.full.yaml"] = ppo_cell(p.id, p.name)
        out[folder / "sac.full.yaml"] = sac_cell(p.id, p.name)
    return out


def main(argv: list[str]) -> int:
    stale = []
    for path, text in cells().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if "--check" not in argv:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    verb = "differ" if "--check" in argv else "written"
    print(f"{len(stale)} file(s) {verb}" + "".join(f"\n  {p.relative_to(CONFIGS.parent)}" for p in stale))
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
