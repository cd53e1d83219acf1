# membench: one command for the main job (`make bench`), one for the tests (`make test`).
# Both run `setup` first when needed: a .venv with torch==2.13.0 installed FIRST (the local CPU wheel;
# an unpinned torch would pull a multi-GB CUDA build), both packages editable with the extras the tests
# use, and, as root on Debian, the system packages (Vulkan software renderer for ManiSkill/SAPIEN).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.membench-setup
TORCHRL_VENV  := .venv-torchrl
TORCHRL_STAMP := $(TORCHRL_VENV)/.membench-setup

# Versions measured together on the 2-core CPU reference machine (see docs in README). moviepy: the tests of
# gymnasium's RecordVideo on our IDs (membench-envs itself does not depend on it).
PINS := gymnasium==1.4.0 mani-skill==3.0.1 popgym==1.0.7 mazelib==0.9.16 minigrid==3.2.0 \
        stable-baselines3==2.9.2 sb3-contrib==2.9.2 tensorboard==2.21.0 moviepy==2.2.1 \
        ale-py==0.12.1 vizdoom==1.3.2 mujoco==3.17.0 dm-control==1.0.50 memory-maze==1.0.3 pygame-ce==2.5.8 \
        wandb==0.31.0
# The reference the native MemoryGym tasks are tested against, step for step. Its own pins (gymnasium 0.29,
# pygame 2.4) conflict with gymnasium 1.x, so it is installed without them; pygame-ce above provides `pygame`.
REFERENCE_NODEPS := memory-gym==1.0.2
# The checks `make lint` (and CI, and the pre-commit hooks) run, at the versions they were made clean with.
LINT_PINS := ruff==0.17.6 mypy==2.4.1 types-PyYAML==6.0.12.20261122

# Small nets on 2 cores: 1 thread is faster than 2 and does not collapse under contention.
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

ENV    ?=
AGENT  ?=
SEEDS  ?=
STEPS  ?=
PYTEST_ARGS ?=
# pytest worker processes (pytest-xdist): one per core of the 2-core reference machine; 0 runs in this process.
TEST_WORKERS ?= 2

.PHONY: setup system-deps test test-all bench bench-perf lint docs pictures readme clean

setup: $(STAMP)

$(STAMP): Makefile membench_envs/pyproject.toml membench_agents/pyproject.toml
	@$(MAKE) --no-print-directory system-deps
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q $(PINS) $(LINT_PINS) pytest pytest-xdist==3.8.0
	$(PIP) install -q --no-deps $(REFERENCE_NODEPS)
	$(PIP) install -q -e './membench_envs[popgym,minigrid,robo,atari,vizdoom,memory-maze,numpad,mujoco]' -e './membench_agents[sb3,wandb,video,ray,slurm]'
	touch $(STAMP)

# Debian, as root: Vulkan (lavapipe) from bookworm-backports: SAPIEN needs Mesa >= 24.3, even in state mode.
# MuJoCo (Numpad images, Memory Maze) renders headless through Mesa's EGL, or OSMesa (libosmesa6) without it.
system-deps:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "system-deps: not root on Debian; skipping (ManiSkill needs Mesa >= 24.3 Vulkan drivers; MuJoCo needs libegl-mesa0 or libosmesa6)"; exit 0; fi; \
	if dpkg-query -W -f='$${Version}' mesa-vulkan-drivers 2>/dev/null | grep -q bpo && \
	   dpkg-query -W -f='$${Status}' libosmesa6 2>/dev/null | grep -q 'ok installed'; then exit 0; fi; \
	set -e; export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq; \
	if grep -q bookworm /etc/os-release; then \
	  eval "$$(apt-config shell SP Dir::Etc::sourceparts/d)"; \
	  if [ ! -f "$${SP}backports.sources" ] && [ -f "$${SP}debian.sources" ]; then \
	    URI=$$(grep -m1 '^URIs:' "$${SP}debian.sources" | awk '{print $$2}'); \
	    KR=$$(dpkg -L debian-archive-keyring | grep -m1 'debian-archive-keyring.gpg$$'); \
	    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' "$$URI" "$$KR" > "$${SP}backports.sources"; \
	    apt-get update -qq; \
	  fi; \
	  apt-get install -y -qq --no-install-recommends libvulkan1 libegl1 libgl1 libosmesa6 >/dev/null; \
	  apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libegl-mesa0 >/dev/null; \
	else \
	  apt-get install -y -qq --no-install-recommends libvulkan1 libegl1 libgl1 libosmesa6 libegl-mesa0 mesa-vulkan-drivers >/dev/null; \
	fi

# The default suite (CI). Heavier checks are marked `slow` and run with `make test-all`.
test: setup
	$(PY) -m pytest -n $(TEST_WORKERS) -m "not slow" $(PYTEST_ARGS)

test-all: setup
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Main job. Without ENV/AGENT: the memory-improvability demonstration on the Passive T-Maze.
bench: setup
	$(PY) -m membench_agents.cli bench $(if $(ENV),--env $(ENV)) $(if $(AGENT),--agent $(AGENT)) \
	  $(if $(SEEDS),--seeds $(SEEDS)) $(if $(STEPS),--steps $(STEPS))

bench-perf: setup $(TORCHRL_STAMP)
	$(PY) experiments/perf.py

# TorchRL, for the "cores" section's reference rows only: its own venv on top of .venv's packages (a .pth adds them),
# the same torch (a constraint keeps pip from fetching another).
$(TORCHRL_STAMP): $(STAMP)
	test -x $(TORCHRL_VENV)/bin/python || $(PYTHON) -m venv $(TORCHRL_VENV)
	echo "import site; site.addsitedir('$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')')" \
		> "$$($(TORCHRL_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/membench-venv.pth"
	$(PY) -c "import torch; print('torch==' + torch.__version__)" > $(TORCHRL_VENV)/constraints.txt
	$(TORCHRL_VENV)/bin/pip install -q torchrl==0.14.1 tensordict==0.14.3 -c $(TORCHRL_VENV)/constraints.txt
	touch $(TORCHRL_STAMP)

# Lint (ruff: pyflakes, pycodestyle, isort, bugbear, pyupgrade, complexity <= 15, ruff's own rules), the format,
# and the types of both packages (mypy, default strictness). The same as .pre-commit-config.yaml.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The task pages (docs/tasks/) and the README's suites table, generated from the catalogue and the docstrings
# (`make test` checks both). `make pictures` re-renders docs/images/ (minutes: the robot scenes), then the pages.
docs: setup
	$(VENV)/bin/membench-envs readme README.md
	$(VENV)/bin/membench-envs docs docs

pictures: setup
	$(PY) docs/pictures.py
	$(VENV)/bin/membench-envs docs docs

readme: docs

clean:
	rm -rf $(VENV) $(TORCHRL_VENV) .pytest_cache .ruff_cache
