"""The loopback GitHub API of the cache_tools tests; it lives in devtools/fake_github_api.py,
where devtools/act_local.py serves it to workflows run under act."""

from __future__ import annotations

from devtools.fake_github_api import TOKEN, FakeGitHub, entry

__all__ = ["TOKEN", "FakeGitHub", "entry"]
