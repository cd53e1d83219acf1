"""The episodic replay SAC and DTQN share (membench_agents.algos.replay): each environment's stream of steps in
order with every episode's final observation, SAC's sequences (only stored rows, first loss row a step, uniform),
DTQN's episode windows (exactly the authors' starts, inside one episode, masked after a short episode's end,
uniform), the ring's wrap-around, and a plain-data checkpoint that resumes exactly or is refused with one error."""

from __future__ import annotations

import copy
import io
from collections import Counter

import pytest
import torch
from membench_agents.algos.replay import EpisodicReplay

K = 4


class Script:
    """``N`` environments whose episodes have the lengths ``lengths[n]`` (cycled); even episodes terminate, odd ones
    are truncated. Observation ``[env, episode, step, row]`` (row: how many rows the environment wrote before this
    one, final observations and the observation being acted on included); action ``step % 3``; reward ``step + 1``.
    """

    def __init__(self, replay: EpisodicReplay, lengths: list[list[int]]):
        self.replay, self.lengths = replay, lengths
        self.N = len(lengths)
        self.ep, self.t, self.row = [0] * self.N, [0] * self.N, [0] * self.N
        replay.start(self._obs(range(self.N)))

    def length(self, n: int) -> int:
        return self.lengths[n][self.ep[n] % len(self.lengths[n])]

    def _obs(self, envs) -> torch.Tensor:
        out = []
        for n in envs:
            out.append([n, self.ep[n], self.t[n], self.row[n]])
            self.row[n] += 1
        return torch.tensor(out, dtype=torch.float32)

    def step(self, steps: int = 1) -> None:
        for _ in range(steps):
            action = torch.tensor([t % 3 for t in self.t])
            reward = torch.tensor([t + 1.0 for t in self.t])
            self.t = [t + 1 for t in self.t]
            done = torch.tensor([self.t[n] >= self.length(n) for n in range(self.N)])
            terminated = done & torch.tensor([e % 2 == 0 for e in self.ep])
            ended = [n for n in range(self.N) if done[n]]
            final = self._obs(ended) if ended else None
            for n in ended:
                self.ep[n], self.t[n] = self.ep[n] + 1, 0
            self.replay.add(action, reward, terminated, done, final, self._obs(range(self.N)))


def _replay(N: int = 2, capacity: int = 40, window: int | None = K) -> EpisodicReplay:
    return EpisodicReplay(N, capacity, torch.zeros(4), episode_window=window)


def test_each_environment_keeps_its_steps_in_order_then_the_final_observation():
    r = _replay(N=2, capacity=40)
    Script(r, [[3], [2]]).step(7)
    # env 0: steps t = 0, 1, 2, the final observation (t = 3), the next episode; the row being acted on last
    assert r.obs[0, :10, 2].tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert r.is_final[0, :10].tolist() == [False, False, False, True] * 2 + [False, False]
    assert r.episode_start[0, :10].tolist() == [True, False, False, False] * 2 + [True, False]
    assert r.rewards[0, :9].tolist() == [1, 2, 3, 0, 1, 2, 3, 0, 1]  # a final observation has no step
    assert r.actions[0, :9].tolist() == [0, 1, 2, 0, 0, 1, 2, 0, 0]
    assert r.terminated[0, :8].tolist() == [False, False, True, False] + [False] * 4  # episode 1 was truncated
    assert r.pos.tolist() == [9, 10] and r.size.tolist() == [9, 10]  # env 1: 7 steps + 3 final observations
    assert r.obs[0, 9, 2] == 1 and r.obs[1, 10, 2] == 1  # pos: the observation about to be acted on


def test_the_ring_keeps_the_newest_rows():
    r = _replay(N=1, capacity=20)
    s = Script(r, [[5]])
    s.step(40)  # 40 steps + 8 final observations + 1 observation being acted on: 49 rows into a ring of 21
    assert r.rows == 21 and r.size.tolist() == [20] and r.pos.tolist() == [48 % 21]
    assert sorted(r.obs[0, :, 3].tolist()) == list(range(49 - 21, 49))  # the 21 newest rows, nothing older


@pytest.mark.parametrize("first_loss", [0, 2])
def test_sequences_are_consecutive_stored_rows_whose_first_loss_row_is_a_step(first_loss):
    r = _replay(N=3, capacity=30, window=None)
    s = Script(r, [[3, 5], [2], [7, 1]])
    s.step(50)  # the rings have wrapped
    W = 5
    assert r.can_sample(W)
    b = r.sample_sequences(4000, W, first_loss, torch.Generator().manual_seed(0))
    assert b["obs"].shape == (W, 4000, 4) and b["is_final"].shape == (W, 4000)
    env, row = b["obs"][..., 0].long(), b["obs"][..., 3].long()
    assert (env == env[0]).all() and (row.diff(dim=0) == 1).all()  # consecutive rows of one environment
    newest = torch.tensor(s.row)[env[0]] - 1  # the row being acted on, not yet a step: never in a window
    assert ((row < newest) & (row >= newest - r.size[env[0]])).all()  # ... nor a row the ring lost
    assert not b["is_final"][first_loss].any()
    # windows cross episodes: an episode start where the step count starts again at 0
    t = b["obs"][..., 2]
    assert torch.equal(b["episode_start"][1:], (t[1:] == 0) & ~b["is_final"][1:]) and b["episode_start"][1:].any()
    # uniform: every environment equally often, then every admissible start of it equally often
    counts = Counter(zip(env[0].tolist(), row[0].tolist(), strict=True))
    per_env = Counter(env[0].tolist())
    assert set(per_env) == {0, 1, 2} and max(per_env.values()) < 1.15 * min(per_env.values())
    for n in range(3):
        rows_n = r.obs[n, :, 3].long()
        finals_n = {int(x) for x in rows_n[r.is_final[n]]}
        lo, hi = s.row[n] - 1 - int(r.size[n]), s.row[n] - 1 - W  # the window's last row is before the newest
        admissible = [g for g in range(lo, hi + 1) if g + first_loss not in finals_n]
        seen = [c for (e, g), c in counts.items() if e == n]
        assert len(seen) == len(admissible)
        expected = per_env[n] / len(admissible)
        assert max(seen) < 2 * expected and min(seen) > expected / 2


def _authors_starts(s: Script, n: int) -> set[tuple[int, int]]:
    """(episode, step) of every window the DTQN authors' buffer holds for environment n, the ring's size aside."""
    starts = set()
    for ep in range(s.ep[n] + 1):
        L = s.lengths[n][ep % len(s.lengths[n])]
        if ep < s.ep[n]:  # ended: the windows starting at steps 0 .. L-K, or the one from step 0
            starts |= {(ep, j) for j in range(L - K + 1)} if L >= K else {(ep, 0)}
        else:  # running: the windows whose K steps are taken
            starts |= {(ep, j) for j in range(s.t[n] - K + 1)}
    return starts


@pytest.mark.parametrize("steps", [12, 150])
def test_episode_windows_start_where_the_authors_buffer_starts_them(steps):
    r = _replay(N=3, capacity=40)
    s = Script(r, [[2, 7, 4], [1, 3], [9, 5, 6]])
    s.step(steps)  # 12: nothing lost yet; 150: the rings have wrapped several times
    for n in range(3):
        newest = s.row[n] - 1  # the row being acted on; the rows before it, back to size of them, are held
        held = {
            (int(o[1]), int(o[2]))
            for o, f in zip(r.obs[n], r.is_final[n], strict=True)
            if not f and newest - int(r.size[n]) <= o[3] <= newest
        }
        marked = {(int(r.obs[n, i, 1]), int(r.obs[n, i, 2])) for i in torch.nonzero(r.window_start[n]).flatten()}
        assert marked == _authors_starts(s, n) & held
    assert r.num_windows() == int(r.window_start.sum()) > 0


def test_episode_windows_stay_inside_one_episode_masked_after_its_end():
    r = _replay(N=3, capacity=40)
    s = Script(r, [[2, 7, 4], [1, 3], [9, 5, 6]])
    s.step(150)
    b = r.sample_episode_windows(3000, torch.Generator().manual_seed(0))
    obs, mask = b["obs"], b["mask"]
    assert obs.shape == (3000, K + 1, 4) and mask.shape == b["actions"].shape == b["rewards"].shape == (3000, K)
    for i in range(3000):
        n, ep, t0 = (int(x) for x in obs[i, 0, :3])
        L = s.lengths[n][ep % len(s.lengths[n])]
        real = min(K, L - t0)  # the steps of this episode in the window
        assert mask[i].tolist() == [True] * real + [False] * (K - real)
        assert (obs[i, : real + 1, 1] == ep).all() and obs[i, : real + 1, 2].tolist() == list(range(t0, t0 + real + 1))
        assert b["rewards"][i, :real].tolist() == [t + 1.0 for t in range(t0, t0 + real)]
        assert b["actions"][i, :real].tolist() == [t % 3 for t in range(t0, t0 + real)]
        ends_here = t0 + real == L
        assert b["terminated"][i, :real].tolist() == [False] * (real - 1) + [ends_here and ep % 2 == 0]
        assert real == K or t0 == 0  # a window shorter than K is an episode shorter than K, from its start
    # uniform among the stored windows
    counts = Counter(map(tuple, obs[:, 0, :3].long().tolist()))
    assert len(counts) == r.num_windows()
    expected = 3000 / r.num_windows()
    assert max(counts.values()) < 2 * expected and min(counts.values()) > expected / 3


def _save(r: EpisodicReplay) -> dict:
    buf = io.BytesIO()
    torch.save(r.state_dict(), buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def test_a_saved_replay_resumes_exactly():
    r = _replay(N=2, capacity=30)
    s = Script(r, [[3, 6], [5]])
    s.step(50)
    saved = _save(r)  # plain data: tensors, numbers, strings
    other = _replay(N=2, capacity=30)
    Script(other, [[1], [2]]).step(7)  # other contents, to be replaced
    other.load_state_dict(saved)
    twin = copy.copy(s)  # the same environments, stepping the loaded replay
    twin.replay, twin.ep, twin.t, twin.row = other, list(s.ep), list(s.t), list(s.row)
    for _ in range(3):
        for name in ("sample_sequences", "sample_episode_windows"):
            args = (64, 5, 1) if name == "sample_sequences" else (64,)
            a = getattr(r, name)(*args, torch.Generator().manual_seed(1))
            b = getattr(other, name)(*args, torch.Generator().manual_seed(1))
            assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        s.step(9)
        twin.step(9)
    for name in ("obs", "window_start", "pos", "size", "episode_steps", *EpisodicReplay.FIELDS):
        assert torch.equal(getattr(r, name), getattr(other, name)), name


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("format"), r"the saved replay is in another layout \(None;"),
        (lambda d: d.update(rows=41), r"has 2 environments x 41 rows; this config's has 2 x 31"),
        (lambda d: d.update(episode_window=5), r"windows of 5 steps; this config's, of 4"),
        (
            lambda d: d.update(obs=d["obs"][..., :3]),
            r"a saved replay array has shape \(2, 31, 3\); this config's "
            r"replay needs \(2, 31, 4\)",
        ),
    ],
)
def test_a_saved_replay_that_does_not_fit_is_one_clear_error(change, message):
    r = _replay(N=2, capacity=30)
    Script(r, [[3], [4]]).step(40)
    saved = _save(r)
    change(saved)
    with pytest.raises(ValueError, match=message):
        _replay(N=2, capacity=30).load_state_dict(saved)
