"""The GitHub Action's one way to run its own Python (action.yml, ci/user_action.py).

  python -I <action path>/action_run.py MODULE [ARGS...]

runs MODULE (`ci`, `cache_tools`, `pytest`, `iree_conformance.cli.main`) as `python -m
MODULE ARGS` would, but from the action's own folder and the interpreter's installed
packages only. The action's steps run with the user's checkout as the working directory,
where `python -m ci` would import the checkout's own `ci/` package (or a root
`cache_tools.py`) in place of the action's (issue 47). `-I` keeps the working directory,
the script's folder, PYTHONPATH and the user's site-packages out of `sys.path`; this file
then puts the action's folder first and its `python/` folder (the library before it is
installed) last. Python 3.11 and later also get `PYTHONSAFEPATH` from the action, so the
processes these start (pytest's workers, the IREE worker) do not put the working
directory on their path either.
"""

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -I action_run.py MODULE [ARGS...]")
    module = sys.argv[1]
    sys.path.insert(0, str(ROOT))
    sys.path.append(str(ROOT / "python"))
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
