"""The loopback GitHub API of the cache_tools tests; it lives in ci/fake_github_api.py,
where ci/act_local.py serves it to workflows run under act."""

from __future__ import annotations

import sys
from pathlib import Path

_CI = str(Path(__file__).resolve().parents[2] / "ci")
if _CI not in sys.path:
    sys.path.insert(0, _CI)

from fake_github_api import TOKEN, FakeGitHub, entry  # noqa: E402

__all__ = ["TOKEN", "FakeGitHub", "entry"]
