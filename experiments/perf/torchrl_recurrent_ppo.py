"""TorchRL's recurrent PPO on the matched T-Maze cell, built from TorchRL's own modules (the reference row of
`make bench-perf`'s "cores" section; experiments/perf_cores.py runs it in a Python that has torchrl).

The cell is experiments/perf/tmaze-matched/ppo-lstm.yaml's: 16 environments x 128 steps per rollout, 4 epochs x 4
minibatches (each minibatch: whole 128-step rollouts of 4 environments, the hidden state reset at episode starts),
a one-layer LSTM or GRU of width 128 on the raw observation shared by a linear policy head and a linear value head,
Adam at 2.5e-4, clip 0.2, entropy 0.01, value 0.5, gradient norm 0.5, gamma 0.99, lambda 0.95. TorchRL's standard
pieces: ``GymWrapper`` around one gymnasium vector env of the 16 T-Mazes (autoreset off: TorchRL resets ended
environments itself; a ``SerialEnv`` of 16 wrapped envs collected at half the speed here), ``InitTracker`` and the
RNN's state primer, ``LSTMModule`` / ``GRUModule``, ``ProbabilisticActor`` and ``ValueOperator`` over the shared
RNN, ``Collector``, ``GAE`` and ``ClipPPOLoss`` in recurrent mode. Its losses run the shared RNN once for the
actor and once for the critic (the library's way with two operators); membench runs it once for both heads.

Prints one JSON line: steps, training seconds (collection + updates), SPS, the updates' share of the seconds
(advantages, epochs), peak memory (max RSS, MiB).

    python experiments/perf/torchrl_recurrent_ppo.py --core lstm --steps 32768
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import torch

CELL = dict(num_envs=16, num_steps=128, epochs=4, minibatches=4, hidden=128, lr=2.5e-4, clip=0.2, ent=0.01,
            vf=0.5, max_grad_norm=0.5, gamma=0.99, lmbda=0.95)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--core", choices=("lstm", "gru"), default="lstm")
    ap.add_argument("--steps", type=int, default=32_768)
    ap.add_argument("--corridor-length", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    import gymnasium as gym
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.envs import GymWrapper, InitTracker, TransformedEnv
    from torchrl.modules import GRUModule, LSTMModule, ProbabilisticActor, ValueOperator, set_recurrent_mode
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    import membench_envs  # noqa: F401  (registers the T-Maze ID with gymnasium)

    c = CELL
    kwargs = {"corridor_length": args.corridor_length, "penalty": True}  # the dense shaping, as perf_agents.py

    # one gymnasium vector env of num_envs T-Mazes (TorchRL wants DISABLED autoreset and resets ended envs itself)
    vector = gym.make_vec(
        "MIKASA/TMazePassive-v0",
        c["num_envs"],
        "sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.DISABLED},
        **kwargs,
    )
    env = TransformedEnv(
        GymWrapper(vector, categorical_action_encoding=True),
        InitTracker(),
    )
    env.set_seed(args.seed)
    n_obs = env.observation_spec["observation"].shape[-1]
    n_act = int(env.action_spec.space.n)
    rnn_cls = LSTMModule if args.core == "lstm" else GRUModule
    rnn = rnn_cls(input_size=n_obs, hidden_size=c["hidden"], in_key="observation", out_key="embed")
    env.append_transform(rnn.make_tensordict_primer())
    logits = TensorDictModule(torch.nn.Linear(c["hidden"], n_act), in_keys=["embed"], out_keys=["logits"])
    actor = ProbabilisticActor(
        TensorDictSequential(rnn, logits),
        in_keys=["logits"],
        distribution_class=torch.distributions.Categorical,
        return_log_prob=True,
    )
    critic = TensorDictSequential(rnn, ValueOperator(torch.nn.Linear(c["hidden"], 1), in_keys=["embed"]))
    advantage = GAE(gamma=c["gamma"], lmbda=c["lmbda"], value_network=critic, average_gae=True, deactivate_vmap=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=c["clip"], entropy_coeff=c["ent"], critic_coeff=c["vf"])
    params = list(loss.parameters())
    optim = torch.optim.Adam(params, lr=c["lr"])
    per_rollout = c["num_envs"] * c["num_steps"]
    collector = Collector(
        env, actor, frames_per_batch=per_rollout, total_frames=-(-args.steps // per_rollout) * per_rollout
    )

    t0, steps, update_s = time.perf_counter(), 0, 0.0
    for data in collector:  # [num_envs, num_steps]
        steps += data.numel()
        t_update = time.perf_counter()
        with torch.no_grad(), set_recurrent_mode(True):
            advantage(data)
        for _ in range(c["epochs"]):
            for idx in torch.randperm(c["num_envs"]).chunk(c["minibatches"]):
                with set_recurrent_mode(True):
                    out = loss(data[idx])
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(params, c["max_grad_norm"])
                optim.step()
        collector.update_policy_weights_()
        update_s += time.perf_counter() - t_update
    seconds = time.perf_counter() - t0
    collector.shutdown()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"agent": f"torchrl-ppo-{args.core}", "steps": steps, "train_time_s": seconds,
                      "sps": steps / seconds, "update_s": update_s, "peak_rss_mib": peak}))  # fmt: skip


if __name__ == "__main__":
    main()
