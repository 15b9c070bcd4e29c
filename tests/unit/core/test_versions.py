"""iree-conformance versions / bisect without building environments: version arguments,
the index, the comparison and its gate, the bad inputs (docs/versions.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iree_conformance.cli import bisect as bisect_command
from iree_conformance.cli import main as cli
from iree_conformance.common import iree_index
from iree_conformance.common.errors import EXIT_CONFIGURATION, ConfigurationError
from iree_conformance.common.tomlio import tomllib
from iree_conformance.report import version_compare as vc

REPO = Path(__file__).resolve().parents[3]
RELEASES = ["3.9.0", "3.10.0", "3.11.0", "3.12.0", "3.13.0"]


def outcome(case: str, status: str = "pass", stage: str = "compare", message: str = "") -> dict:
    return {
        "case_id": case,
        "suite": "onnx_ops",
        "target": "llvm-cpu",
        "status": status,
        "stage": stage,
        "verdict": status if status in ("pass", "skip") else "fail",
        "diagnostics": [message] if message else [],
        "duration": 1.0,
    }


def column(label: str, *outcomes: dict, revision: str = "") -> vc.Column:
    return vc.Column(
        label, {"iree_compiler": label, "revision": revision or label * 3}, list(outcomes)
    )


def test_the_pin_admits_the_documented_minimum():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    for name in iree_index.IREE_PACKAGES:
        assert f"{name}>={iree_index.MINIMUM_IREE}" in deps


def test_an_older_version_names_the_minimum():
    with pytest.raises(iree_index.VersionError, match=r"older than 3\.11\.0"):
        iree_index.resolve("3.10.0", (), False, RELEASES)


def test_a_version_the_index_lacks_lists_the_nearest():
    with pytest.raises(iree_index.VersionError) as info:
        iree_index.resolve("3.12.5", (), False, RELEASES)
    message = str(info.value)
    assert "3.12.5 is not on PyPI" in message and "3.11.0, 3.12.0, 3.13.0" in message


@pytest.mark.parametrize("text", ["3.13", "v3.13.0", "3.13.0.0"])
def test_a_version_written_another_way_is_the_listed_one(text):
    assert iree_index.resolve(text, (), False, RELEASES).version == "3.13.0"


def test_a_custom_index_is_named_not_called_pypi(monkeypatch):
    monkeypatch.setenv(iree_index.INDEX_ENV, "https://me:secret@mirror.example/simple/")
    with pytest.raises(iree_index.VersionError) as info:
        iree_index.resolve("3.12.5", (), False, RELEASES)
    message = str(info.value)
    assert "not on https://mirror.example/simple/" in message
    assert "PyPI" not in message and "secret" not in message


@pytest.mark.parametrize("text", ["3.13.0; rm -rf", "../../x", "-3"])
def test_a_version_of_bad_syntax_is_exit_2_before_the_index_is_read(text, monkeypatch, capsys):
    def offline():
        raise AssertionError("the index was read")

    monkeypatch.setattr(iree_index, "index_versions", offline)
    assert cli.main(["versions", text, "installed"]) == EXIT_CONFIGURATION
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "network" not in err


def test_nearest_keeps_both_sides():
    assert iree_index.nearest("3.12.5", RELEASES, 3) == ["3.11.0", "3.12.0", "3.13.0"]
    assert iree_index.nearest("4.0.0", RELEASES, 2) == ["3.12.0", "3.13.0"]


def fake_wheels(folder: Path, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("iree_base_compiler", "iree_base_runtime"):
        (folder / f"{name}-{version}-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")


def test_find_links_folder_lists_nightlies_only_with_pre(tmp_path):
    fake_wheels(tmp_path, "3.13.0rc20261101")
    fake_wheels(tmp_path, "3.13.0rc20261102")
    links = (str(tmp_path),)
    assert iree_index.available(links, pre=False, use_index=False) == []
    assert iree_index.available(links, pre=True, use_index=False) == [
        "3.13.0rc20261101",
        "3.13.0rc20261102",
    ]


def test_a_wheels_folder_is_a_version(tmp_path):
    fake_wheels(tmp_path / "built", "3.14.0.dev0")
    spec = iree_index.resolve(str(tmp_path / "built"), (), False, None)
    assert (spec.kind, spec.version, spec.pre) == ("wheels", "3.14.0.dev0", True)
    assert spec.find_links[0] == str((tmp_path / "built").resolve())


def test_a_wheels_folder_rebuilt_with_the_same_version_gets_a_store_of_its_own(tmp_path):
    from iree_conformance.cli import versions as versions_command

    fake_wheels(tmp_path / "built", "3.14.0.dev0")
    spec = iree_index.resolve(str(tmp_path / "built"), (), False, None)
    before = versions_command.store_for(spec, str(tmp_path / "stores"))
    wheel = next((tmp_path / "built").glob("iree_base_compiler-*.whl"))
    wheel.write_bytes(b"rebuilt")  # the same version, another build
    after = versions_command.store_for(spec, str(tmp_path / "stores"))
    assert after != before and after.parent == before.parent
    assert versions_command.store_for(spec, str(tmp_path / "stores")) == after


def test_a_wheels_folder_without_runtime_is_refused(tmp_path):
    (tmp_path / "iree_base_compiler-3.13.0-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(iree_index.VersionError, match="one version of both"):
        iree_index.wheels_in(tmp_path)


def test_changes_between_versions():
    old = column(
        "3.12.0",
        outcome("a"),
        outcome("b", "fail", "compare", "mismatch 217 of 729"),
        outcome("c", "error", "compile", "undefined symbol: exp"),
        outcome("d", "error", "compile", "error: x at 1:2"),
        outcome("e"),
    )
    new = column(
        "3.13.0",
        outcome("a", "crash", "compile", "SIGFPE"),
        outcome("b"),
        outcome("c", "crash", "compile", "SIGFPE"),
        outcome("d", "error", "compile", "error: y at 1:2"),
        outcome("e"),
    )
    rows = {r.case_id: r for r in vc.compare([old, new])}
    assert {k: r.change for k, r in rows.items()} == {
        "a": vc.NEWLY_FAILING,
        "b": vc.NEWLY_PASSING,
        "c": vc.OTHER_KIND,
        "d": vc.MESSAGE_CHANGED,
        "e": "",
    }
    assert [k for k, r in rows.items() if r.worse] == ["a"]


def test_the_json_has_the_documented_schema():
    cols = [column("3.12.0", outcome("b", "fail")), column("3.13.0", outcome("b"))]
    data = vc.to_json(cols, vc.compare(cols))
    case = data["cases"][0]
    assert {"case_id", "target", "verdicts", "stages", "change"} <= set(case)
    assert case["verdicts"] == {"3.12.0": "fail", "3.13.0": "pass"}
    assert case["change"] == vc.NEWLY_PASSING
    assert [v["revision"] for v in data["versions"]] == ["3.12.0" * 3, "3.13.0" * 3]


def test_a_skipped_case_is_no_change():
    cols = [column("1", outcome("x", "skip")), column("2", outcome("x", "fail"))]
    assert [r.change for r in vc.compare(cols)] == [""]


def write_results(path: Path, version: str, *outcomes: dict) -> str:
    meta = {"iree_compiler": version, "iree_runtime": version}
    path.write_text(json.dumps({"schema": 1, "metadata": meta, "outcomes": list(outcomes)}))
    return str(path)


def test_results_comparison_gates_on_a_worse_newer_version(tmp_path, capsys):
    older = write_results(tmp_path / "a.json", "3.12.0", outcome("onnx-ops/x"))
    newer = write_results(tmp_path / "b.json", "3.13.0", outcome("onnx-ops/x", "crash", "compile"))
    html, js = tmp_path / "c.html", tmp_path / "c.json"
    argv = ["versions", "--no-step-summary", "--html", str(html), "--json", str(js)]
    # given newest first: the comparison orders the columns by version
    assert cli.main([*argv, "--results", newer, older]) == 1
    assert "newly-failing" in capsys.readouterr().out
    assert json.loads(js.read_text())["cases"][0]["worse"] is True
    assert "onnx-ops/x" in html.read_text() and "version-matrix" in html.read_text()
    fixed = write_results(tmp_path / "c.json", "3.13.0", outcome("onnx-ops/x"))
    broken = write_results(tmp_path / "d.json", "3.12.0", outcome("onnx-ops/x", "fail"))
    assert cli.main(["versions", "--no-step-summary", "--results", broken, fixed]) == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["versions", "3.13.0"], "two or more versions"),
        (["bisect", "--good", "3.12.0", "--bad", "3.12.0", "--", "-k", "x"], "both 3.12.0"),
        (["bisect", "--good", "3.12.0", "--bad", "3.13.0"], "needs a selection"),
        (["versions", "3.12.0", "nope/folder"], "no such folder of wheels"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    assert cli.main(argv) == EXIT_CONFIGURATION
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_pytest_arguments_follow_the_double_dash():
    args = cli.build_parser().parse_args(["versions", "3.12.0", "3.13.0", "--json", "x"])
    assert args.pytest_args == [] and args.json == "x"


def test_bisect_candidates_are_the_versions_between(monkeypatch):
    monkeypatch.setattr(iree_index, "index_versions", lambda: set(RELEASES))
    for good, bad in (("3.11.0", "3.13.0"), ("3.13.0", "3.11.0")):
        specs = bisect_command.candidates_between(good, bad, (), False)
        assert [s.label for s in specs] == ["3.11.0", "3.12.0", "3.13.0"]


def test_bisect_searches_binary_and_reruns_a_flaky_probe(monkeypatch, tmp_path):
    """A fake prober: 3.13.x passes from rc3 on; rc2 is flaky once, then steady."""
    versions = [f"3.13.0rc{i}" for i in range(1, 7)]
    specs = [iree_index.VersionSpec(v, "index", v) for v in versions]
    case = ("llvm-cpu", "onnx-ops/x")
    calls: list[tuple[str, int]] = []

    def run(self, spec, cases, attempt=0):
        calls.append((spec.label, attempt))
        kind = "pass" if versions.index(spec.label) >= 2 else "crash"
        flaky = {case: ["crash", "pass"]} if (spec.label, attempt) == ("3.13.0rc2", 0) else {}
        return bisect_command.Probe({case: kind}, flaky, spec.label)

    monkeypatch.setattr(bisect_command.Bisector, "run", run)
    monkeypatch.setattr(
        bisect_command.Bisector, "env", lambda self, s: type("E", (), {"revision": "r" + s.label})()
    )
    args = cli.build_parser().parse_args(
        [
            "bisect",
            "--good",
            "a",
            "--bad",
            "b",
            "--out",
            str(tmp_path),
            "--conformance-dir",
            str(REPO / "conformance"),
        ]
    )
    found = bisect_command.Bisector(args, specs).search(case, "crash", "pass", [case])
    assert (found.last_old, found.first_new, found.direction) == ("3.13.0rc2", "3.13.0rc3", "fix")
    assert ("3.13.0rc2", 1) in calls  # the flaky probe ran again
    assert len({label for label, _ in calls}) <= 3  # binary: log2(6) probes, not 6


def test_previous_is_the_newest_older_version(monkeypatch):
    monkeypatch.setattr(iree_index, "installed_version", lambda: "3.13.0")
    assert iree_index.resolve("previous", (), False, RELEASES).version == "3.12.0"
    assert iree_index.previous_of("3.14.0rc20261201", RELEASES) == "3.13.0"
    with pytest.raises(iree_index.VersionError, match="no version older"):
        iree_index.previous_of("3.9.0", RELEASES)


def test_a_flaky_cell_is_listed_but_never_worse():
    flaky = outcome("x", "fail", "compare") | {
        "verdict": "flaky",
        "attempts": [{"kind": "pass", "status": "pass", "stage": "compare"}],
    }
    cols = [column("3.12.0", outcome("x")), column("3.13.0", flaky)]
    (row,) = vc.compare(cols)
    assert row.change == vc.FLAKY and not row.worse


def installed_env():
    from iree_conformance.common import version_envs

    spec = iree_index.VersionSpec("installed", "installed", iree_index.installed_version())
    return version_envs.ensure(spec)


def test_a_selection_matching_nothing_is_a_one_line_error(tmp_path):
    from iree_conformance.cli import versions as versions_command

    with pytest.raises(versions_command.SelectionError, match="matches nothing") as info:
        versions_command.run_selection(
            installed_env(),
            REPO / "conformance",
            ["-m", "stablehlo", "-k", "no_case_is_named_like_this", "--offline"],
            tmp_path / "r.json",
            tmp_path / "store",
        )
    assert info.value.return_code == EXIT_CONFIGURATION and "\n" not in str(info.value)


def test_another_version_names_the_manifests_version():
    from dataclasses import replace

    from iree_conformance.cli import versions as versions_command

    env = installed_env()
    other = replace(
        env, info={**env.info, "iree_compiler": "3.12.0"}, spec=replace(env.spec, label="3.12.0")
    )
    assert versions_command.manifest_note(env) is None
    note = versions_command.manifest_note(other) or ""
    assert f"recorded for IREE {iree_index.MANIFESTS_RECORDED_FOR}" in note
    assert iree_index.installed_version() == iree_index.MANIFESTS_RECORDED_FOR


def test_bisect_refuses_ends_that_are_one_version(monkeypatch):
    """--good installed --bad 3.13.0 where 3.13.0 is installed, either way round."""
    monkeypatch.setattr(iree_index, "index_versions", lambda: set(RELEASES))
    monkeypatch.setattr(iree_index, "installed_version", lambda: "3.13.0")
    for good, bad in (("installed", "3.13.0"), ("3.13.0", "installed")):
        with pytest.raises(ConfigurationError, match="are both IREE 3.13.0") as info:
            bisect_command.candidates_between(good, bad, (), False)
        assert info.value.return_code == EXIT_CONFIGURATION


def test_bisect_refuses_a_version_below_the_minimum_before_reading_the_index(monkeypatch):
    def offline():
        raise AssertionError("the index was read")

    monkeypatch.setattr(iree_index, "index_versions", offline)
    with pytest.raises(iree_index.VersionError, match=f"older than {iree_index.MINIMUM_IREE}"):
        bisect_command.candidates_between("3.9.0", "3.13.0", (), False)


def test_bisect_and_versions_write_nothing_into_the_current_folder_unasked(
    tmp_path, monkeypatch, capsys
):
    """Was: bisect-bundle/ and versions-out/ in the current folder (a checkout)."""
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    stores = tmp_path / "stores"
    argv = ["bisect", "--good", "3.12.0", "--bad", "3.13.0", "--stores-dir", str(stores)]
    args = cli.build_parser().parse_args([*argv, "--conformance-dir", str(REPO / "conformance")])
    bisector = bisect_command.Bisector(args, [])
    assert bisector.out.parent == stores / "_runs" and bisector.out.name.startswith("bisect-")
    assert bisector.bundle_dir == bisector.out / "bundle"
    assert f"results and logs: {bisector.out}" in capsys.readouterr().err
    named = cli.build_parser().parse_args([*argv, "--out", "o", "--bundle-dir", ""])
    named.conformance_dir = str(REPO / "conformance")
    bisector = bisect_command.Bisector(named, [])
    assert bisector.out == Path("o") and bisector.bundle_dir is None
    from iree_conformance.cli import versions as versions_command

    args = cli.build_parser().parse_args(["versions", "a", "b", "--stores-dir", str(stores)])
    assert versions_command.out_dir(args, "versions").parent == stores / "_runs"
    assert list(work.iterdir()) == []


def test_a_check_model_probe_that_cannot_load_iree_is_refused(monkeypatch, tmp_path):
    from iree_conformance.common import version_envs
    from iree_conformance.common.errors import EXIT_ENVIRONMENT, EnvironmentBuildError

    spec = iree_index.VersionSpec("3.12.0", "index", "3.12.0")
    env = version_envs.VersionEnv(spec, Path("/e/bin/python"), {}, False, 0.0, Path("/e"))
    broken = outcome("onnx-dir/model.onnx", "error", "compile")
    broken["diagnostics"] = ["ModuleNotFoundError: No module named 'iree.compiler'"]
    monkeypatch.setattr(bisect_command.Bisector, "env", lambda self, s: env)
    monkeypatch.setattr(bisect_command.Bisector, "_check_model", lambda self, e, r, s: [broken])
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    args = cli.build_parser().parse_args(
        ["bisect", "--good", "3.12.0", "--bad", "3.13.0", "--check-model", str(model),
         "--out", str(tmp_path / "out"), "--stores-dir", str(tmp_path / "s")]
    )  # fmt: skip
    with pytest.raises(EnvironmentBuildError, match="delete /e") as info:
        bisect_command.Bisector(args, [spec]).run(spec, None)
    assert info.value.return_code == EXIT_ENVIRONMENT


def with_stats(data: dict, dispatches: int, module_bytes: int, scope: str = "case") -> dict:
    stats = {"dispatches": dispatches, "module_bytes": module_bytes, "scope": scope}
    return {**data, "metrics": {"compile_stats": stats}}


def test_compile_statistics_changes_are_listed_per_version_step(tmp_path, capsys):
    """Growth and shrink, by compare's rules: a dispatch more is a change, a module 500
    bytes bigger is noise (under 1 KiB), a batch's figures are not compared with a case's."""
    older = write_results(
        tmp_path / "a.json",
        "3.11.0",
        with_stats(outcome("onnx-ops/fused"), 1, 10_000),
        with_stats(outcome("onnx-ops/noise"), 2, 10_000),
        with_stats(outcome("onnx-ops/smaller"), 3, 40_000),
        with_stats(outcome("onnx-ops/batched"), 1, 10_000),
    )
    middle = write_results(
        tmp_path / "b.json",
        "3.12.0",
        with_stats(outcome("onnx-ops/fused"), 3, 10_000),
        with_stats(outcome("onnx-ops/noise"), 2, 10_500),
        outcome("onnx-ops/smaller", "skip"),
        with_stats(outcome("onnx-ops/batched"), 9, 90_000, "batch"),
    )
    newer = write_results(
        tmp_path / "c.json",
        "3.13.0",
        with_stats(outcome("onnx-ops/fused"), 3, 10_000),
        with_stats(outcome("onnx-ops/noise"), 2, 10_900),
        with_stats(outcome("onnx-ops/smaller"), 3, 20_000),
        with_stats(outcome("onnx-ops/batched"), 9, 90_000),
    )
    js, html = tmp_path / "v.json", tmp_path / "v.html"
    argv = ["versions", "--no-step-summary", "--json", str(js), "--html", str(html), "--results"]
    # a compile figure's change is reported, never the gate (no verdict changed)
    assert cli.main([*argv, older, middle, newer]) == 0
    out = capsys.readouterr().out
    assert "**Compile statistics: 2 change(s)** over 3 case(s)" in out
    assert (
        "| `onnx-ops/fused` | llvm-cpu | 3.11.0 → 3.12.0 | dispatches 1 -&gt; 3 (+200.0%) |" in out
    )
    # skipped on 3.12.0: 3.13.0 compares with 3.11.0, the last version with figures
    assert "3.11.0 → 3.13.0 | module size 40,000 -&gt; 20,000 bytes (-50.0%)" in out
    assert "noise" not in out.split("Compile statistics")[1]
    cases = {c["case_id"]: c for c in json.loads(js.read_text())["cases"]}
    (fused,) = cases["onnx-ops/fused"]["stat_changes"]
    assert (fused["from"], fused["to"], fused["kind"], fused["grew"]) == (
        "3.11.0", "3.12.0", "dispatches", True,
    )  # fmt: skip
    assert cases["onnx-ops/smaller"]["stat_changes"][0]["grew"] is False
    assert cases["onnx-ops/fused"]["compile_stats"]["3.13.0"]["dispatches"] == 3
    assert cases["onnx-ops/batched"]["stat_changes"] == []
    page = html.read_text()
    assert 'id="compile-stats"' in page and "dispatches 1 -&gt; 3" in page


def test_without_compile_statistics_nothing_is_said_about_them(tmp_path, capsys):
    older = write_results(tmp_path / "a.json", "3.12.0", outcome("onnx-ops/x"))
    newer = write_results(tmp_path / "b.json", "3.13.0", outcome("onnx-ops/x"))
    assert cli.main(["versions", "--no-step-summary", "--results", older, newer]) == 0
    assert "Compile statistics" not in capsys.readouterr().out
