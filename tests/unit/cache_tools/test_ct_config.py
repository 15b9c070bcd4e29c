from __future__ import annotations

from pathlib import Path

import pytest

from cache_tools.config import load_config, parse_config
from cache_tools.errors import ConfigError
from cache_tools.units import GIB, parse_size

REPO_CONFIG = Path(__file__).resolve().parents[3] / "cache_tools.toml"


def test_repository_config_loads() -> None:
    config = load_config(str(REPO_CONFIG))
    zoo = config.get_class("zoo-models")
    assert zoo.shards is not None and zoo.shards.max_shards <= 200
    assert zoo.shards.value_of("models/zoo/resnet50") == 10.0
    assert zoo.shards.value_of("models/zoo/unlisted") == 1.0
    llvm = config.get_class("llvm-mlir")
    assert llvm.heavy and llvm.protected and llvm.save_on == ("default-branch",)
    assert sum(c.max_share for c in config.classes.values()) <= 1.0


def test_repository_config_budget() -> None:
    """The classes the workflows use, with the budget docs/cache_tools.md explains."""
    config = load_config(str(REPO_CONFIG))
    assert set(config.classes) == {
        "pip",
        "iree-artifacts",
        "onnx-data",
        "zoo-models",
        "zoo-smoke",
        "llvm-mlir",
    }
    limit = config.settings.fallback_limit_bytes
    assert limit == 10 * GIB
    # 7 pip download caches (4 ci rows, 3 nightly) of ~1.6 GB in all must fit.
    assert config.get_class("pip").max_share * limit >= 1.6e9
    onnx = config.get_class("onnx-data")
    assert onnx.save_on == ("default-branch",) and onnx.max_share * limit >= 3 * 10e6
    zoo = config.get_class("zoo-models")
    assert zoo.shards is not None and zoo.shards.max_shard_bytes <= zoo.max_share * limit
    assert round(sum(c.max_share for c in config.classes.values()), 2) == 0.98
    smoke = config.get_class("zoo-smoke")  # 3 OS x ~6 MB for the smoke run's two models
    assert smoke.shards is None and smoke.max_share * limit >= 3 * 10e6
    priorities = [config.priority_of(n) for n in ("llvm-mlir", "iree-artifacts", "onnx-data")]
    assert priorities == sorted(priorities, reverse=True)


def test_defaults_for_save_on_follow_heavy() -> None:
    config = parse_config(
        {
            "classes": {
                "a": {"priority": 1, "paths": ["x"], "heavy": True},
                "b": {"priority": 1, "paths": ["y"]},
            }
        }
    )
    assert config.classes["a"].save_on == ("default-branch",)
    assert "pull-request" in config.classes["b"].save_on
    assert not config.classes["a"].config_hash_is_variant  # a newer config supersedes
    assert config.variant_classes == frozenset()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"classes": {"a": {"paths": ["x"]}}}, "'priority' is required"),
        (
            {"classes": {"a": {"priority": "high", "paths": ["x"]}}},
            r"priority: expected an integer",
        ),
        ({"classes": {"a": {"priority": 1, "paths": []}}}, "non-empty list"),
        (
            {"classes": {"a": {"priority": 1, "paths": ["x"], "save_on": ["main"]}}},
            "unknown ref kind",
        ),
        (
            {"classes": {"a": {"priority": 1, "paths": ["x"], "max_share": 1.5}}},
            r"share in \(0, 1\]",
        ),
        ({"classes": {"a": {"priority": 1, "paths": ["x"], "prio": 2}}}, "unknown setting"),
        (
            {"classes": {"a": {"priority": 1, "paths": ["x"], "heavy": "yes"}}},
            "expected true/false",
        ),
        (
            {"classes": {"a": {"priority": 1, "paths": ["x"], "config_hash_is_variant": 1}}},
            r"config_hash_is_variant: expected true/false",
        ),
        (
            {"classes": {"a": {"priority": 1, "paths": ["x"], "shards": {"max_shards": 500}}}},
            "1..200",
        ),
        (
            {
                "classes": {
                    "a": {"priority": 1, "paths": ["x"], "shards": {"max_shard_size": "lots"}}
                }
            },
            "cannot read size",
        ),
        ({"settings": {"fallback_limit": "10 parsecs"}}, "cannot read size"),
        ({"clases": {}}, "unknown top-level"),
    ],
)
def test_bad_config_is_a_clear_error(data, message) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(data, "test.toml")


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found; pass --config"):
        load_config(str(tmp_path / "missing.toml"))
    broken = tmp_path / "broken.toml"
    broken.write_text("[classes.a\npriority = 1\n")
    with pytest.raises(ConfigError, match="broken.toml' is not valid TOML"):
        load_config(str(broken))


def test_unknown_class_names_the_known_ones(tmp_path: Path) -> None:
    config = load_config(str(REPO_CONFIG))
    with pytest.raises(ConfigError, match=r"class 'llvm' is not defined .*llvm-mlir"):
        config.get_class("llvm")


def test_parse_size() -> None:
    assert parse_size("10GiB") == 10 * GIB
    assert parse_size("1.5 GB") == 1_500_000_000
    assert parse_size(42) == 42
    with pytest.raises(ConfigError):
        parse_size(-1)


def test_plan_cli_reports_bad_config(tmp_path: Path, run_cli) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text('[classes.x]\npriority = 1\npaths = ["p"]\nsave_on = ["everywhere"]\n')
    res = run_cli(
        "plan", "--config", str(bad), "--class", "x", "--ref", "refs/heads/main", "--offline"
    )
    assert res.code == 2 and "unknown ref kind" in res.err and "c.toml" in res.err
