"""Fixtures for the cache_tools tests: the loopback GitHub API and a CLI runner."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from cache_tools.cli import main
from tests.support.ct_fake_github import TOKEN, FakeGitHub


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    try:
        yield server
    finally:
        server.stop()


class CliResult:
    def __init__(self, code: int, out: str, err: str, sleeps: list[float]) -> None:
        self.code, self.out, self.err, self.sleeps = code, out, err, sleeps


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):
    """Run ``cache-tools`` in-process with a controlled env and a no-op sleep."""

    def run(*argv: str, env: dict[str, str] | None = None, token: bool = True) -> CliResult:
        full_env = {"GITHUB_TOKEN": TOKEN} if token else {}
        full_env.update(env or {})
        out = io.StringIO()
        sleeps: list[float] = []
        capsys.readouterr()
        code = main(list(argv), env=full_env, out=out, sleep=sleeps.append)
        err = capsys.readouterr().err
        return CliResult(code, out.getvalue(), err, sleeps)

    return run


def make_mixed_tree(root: Path, total: int, seed: int = 7) -> Path:
    """Folders of text-like (compressible) and random (incompressible) files."""
    import random

    rng = random.Random(seed)
    words = [
        bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
        for _ in range(500)
    ]
    made, i = 0, 0
    while made < total:
        folder = root / f"group{i % 4}" / f"sub{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        size = min(int(rng.lognormvariate(9, 1.3)) + 1, 1 << 20)
        if i % 3 == 0:
            data = rng.randbytes(size)
        else:
            data = (b" ".join(rng.choices(words, k=size // 4 + 1)))[:size]
        (folder / f"file{i:04d}.dat").write_bytes(data)
        made += size
        i += 1
    (root / "top-level.txt").write_text("a file directly under the root\n" * 100)
    (root / "link-to-top").symlink_to("top-level.txt")
    return root


@pytest.fixture(scope="session")
def mixed_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mixed_tree(tmp_path_factory.mktemp("mixed") / "data", 6_000_000)


TEST_CONFIG = """
[settings]
default_branch = "main"
near_expiry_days = 1
large_entry_share = 0.25
thrash_per_day = 5

[classes.llvm-mlir]
priority = 90
paths = ["build/llvm"]
heavy = true
save_on = ["default-branch"]
max_share = 0.7
protected = true

[classes.iree-artifacts]
priority = 70
paths = ["build/iree"]
heavy = true
max_share = 0.3

[classes.pip-wheels]
priority = 20
paths = ["wheels"]
save_on = ["default-branch", "pull-request"]
max_share = 0.2

[classes.zoo-models]
priority = 50
paths = ["zoo"]
heavy = true
max_share = 0.5

[classes.zoo-models.shards]
max_shard_size = "64KiB"
max_shards = 8
values = { "vip*" = 10 }
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "cache_tools.toml"
    path.write_text(TEST_CONFIG)
    return path
