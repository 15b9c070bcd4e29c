"""``python -m ci COMMAND [args]`` (ci/cli.py)."""

import sys

from ci.cli import main

if __name__ == "__main__":
    sys.exit(main())
