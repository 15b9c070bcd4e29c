"""The llvm-mlir size forecast ([classes.NAME.forecast]) and the remote store setting,
and how a changed LLVM pin moves the key while the old entry still restores by prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from cache_tools.config import load_config, parse_config
from cache_tools.errors import ConfigError
from cache_tools.forecast import Forecast, ForecastInputs
from cache_tools.hashing import short_digest
from cache_tools.keys import KeyParts, build_key

GIB = 2**30
REPO_CONFIG = Path(__file__).resolve().parents[3] / "cache_tools.toml"


def llvm_class(**extra: object) -> dict:
    body = {"priority": 90, "paths": ["build/llvm-mlir"], "max_share": 0.35, **extra}
    return {"classes": {"llvm-mlir": body}}


def test_forecast_against_the_class_budget() -> None:
    inputs = ForecastInputs(40_000, {"linux": 5000, "macos": 5000, "windows": 10_000}, "here")
    f = Forecast(inputs, int(0.35 * 10 * GIB), 10 * GIB)
    assert f.per_os() == {"linux": 200_000_000, "macos": 200_000_000, "windows": 400_000_000}
    assert f.total == 800_000_000 and f.fits
    text = "\n".join(f.lines())
    assert "fits the class budget" in text and "windows" in text
    big = Forecast(ForecastInputs(40_000, {"linux": 200_000}), int(0.35 * 10 * GIB), 10 * GIB)
    assert not big.fits and "remote store" in "\n".join(big.lines())


def test_forecast_and_remote_in_config() -> None:
    cfg = parse_config(
        llvm_class(
            forecast={"bytes_per_object": 1234.5, "objects": {"linux": 10}, "measured": "m"},
            remote_storage="redis://cache.internal:6379",
        )
    )
    cls = cfg.get_class("llvm-mlir")
    assert cls.forecast == ForecastInputs(1234.5, {"linux": 10}, "m")
    assert cls.remote_storage == "redis://cache.internal:6379"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"forecast": {"objects": {"linux": 1}}}, "bytes_per_object"),
        ({"forecast": {"bytes_per_object": 5, "objects": {}}}, "objects"),
        ({"forecast": {"bytes_per_object": 5, "objects": {"linux": 1}, "x": 1}}, "unknown"),
        ({"remote_storage": "redis://user:pw@host:1"}, "no credentials"),
        ({"remote_storage": "s3://bucket"}, "redis://"),
    ],
)
def test_bad_forecast_or_remote_is_refused(extra: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(llvm_class(**extra))


def test_repository_config_has_a_measured_forecast() -> None:
    cls = load_config(str(REPO_CONFIG)).get_class("llvm-mlir")
    assert cls.forecast is not None and cls.forecast.bytes_per_object > 0
    assert set(cls.forecast.objects) == {"linux", "macos", "windows"}


def test_plan_prints_the_forecast(run_cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        "[classes.llvm-mlir]\npriority = 90\npaths = ['x']\nmax_share = 0.35\nsave_on = ['default-branch']\n"
        "[classes.llvm-mlir.forecast]\nbytes_per_object = 50000\n"
        "objects = { linux = 4000, windows = 6000 }\nmeasured = 'a test'\n"
    )
    # A pull request may not save a heavy class: the plan stops early and still forecasts.
    r = run_cli(
        "plan",
        "--config",
        str(config),
        "--class",
        "llvm-mlir",
        "--ref",
        "refs/pull/3/merge",
        "--repo",
        "o/r",
    )
    assert r.code == 0, r.err
    assert "forecast: 48.83 KiB per object (a test)" in r.out
    assert "windows     6000 objects -> 286.10 MiB" in r.out
    r = run_cli(
        "plan",
        "--config",
        str(config),
        "--class",
        "llvm-mlir",
        "--ref",
        "refs/pull/3/merge",
        "--repo",
        "o/r",
        "--json",
    )
    assert '"total_bytes": 500000000' in r.out


def test_changed_llvm_pin_moves_the_key_and_restores_by_prefix() -> None:
    def key(pin: str):
        parts = KeyParts(
            "llvm-mlir", "Linux", "X64", config_hash=short_digest(f"llvm={pin};compiler=gcc 12")
        )
        return build_key(parts, variant=False)

    old, new = key("llvm-toolchain-15=15.0.6"), key("llvm-toolchain-15=15.0.7")
    assert old.key != new.key
    saved = old.key + "-h" + "a" * 16  # what run 1 saved under the old pin
    matches = [r for r in new.restore_keys if saved.startswith(r)]
    assert matches == ["llvm-mlir-v1-Linux-X64-"]
