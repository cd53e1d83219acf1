"""``python -m membench_agents``: the ``membench`` command line."""

import sys

from membench_agents.cli import main

sys.exit(main())
