"""The pytest side: options, case parametrization, verdicts, results and manifests.

``conformance/conftest.py`` imports this module. Each test module there names its suite
(``SUITE = "stablehlo"``) and takes the ``conformance_case``/``conformance_target``
parameters, which are generated here from the suite's provider for every selected
target. Outcomes travel to the controlling process as ``user_properties`` so that
``--report-json`` and ``--update-expectations`` also work under pytest-xdist.
"""

from __future__ import annotations

import datetime
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from .cases import Case
from .expectations import (
    Expectations,
    ExpectationsError,
    load_expectations,
)
from .outcome import Outcome
from .platform_info import cpu_fingerprint, host_os, unsupported_host_reason
from .sharding import ShardError, assign, load_durations, parse_shard, record_durations
from .store import ArtifactStore, default_store_dir
from .targets import (
    Target,
    TargetError,
    load_targets,
    select_targets,
    unavailable_reason,
    uncompilable_reason,
)
from .tomlio import load_toml
from .worker import DEFAULT_STAGE_TIMEOUTS, WorkerClient

OUTCOME_PROPERTY = "iree_conformance_outcome"
_SESSION_KEY = pytest.StashKey["ConformanceSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("iree-conformance")
    g.addoption("--target", action="append", default=[], metavar="NAME", help="target from conformance/targets.toml (repeatable; default llvm-cpu)")
    g.addoption("--report-json", metavar="PATH", help="write every Outcome and the run metadata to PATH")
    g.addoption("--store-dir", metavar="DIR", help="artifact store folder (default: $IREE_CONFORMANCE_STORE or the user cache dir)")
    g.addoption("--no-cache", action="store_true", help="neither read nor write the artifact store")
    g.addoption("--update-expectations", nargs="?", const="base", choices=["base", "overlay"], help="rewrite the target's manifest from this run (overlay: the per-OS file, differences only)")
    g.addoption("--expectations-dir", metavar="DIR", help="folder of <target>.toml manifests (default conformance/expectations)")
    g.addoption("--stablehlo-dir", action="append", default=[], metavar="PATH", help="also run every self-checking .mlir file under PATH (repeatable)")
    g.addoption("--reference", choices=["shipped", "interpreter"], default="shipped", help="bundled StableHLO expected values: shipped (default) or recomputed by the StableHLO reference interpreter")
    g.addoption("--stage-timeout", action="append", default=[], metavar="STAGE=SECONDS", help=f"per-stage time limit, e.g. compile=600 (defaults {DEFAULT_STAGE_TIMEOUTS})")
    g.addoption("--timing-runs", type=int, default=0, metavar="N", help="time each passing case's function N times after a warm-up (median; onnxruntime beside it for models); informative, never pass/fail")
    g.addoption("--compile-only", action="store_true", help="stop after compile (no device needed); with --bundle, write a bundle")
    g.addoption("--bundle", metavar="DIR", help="with --compile-only: write a self-contained bundle of the compiled cases to DIR")
    g.addoption("--cases-file", metavar="PATH", help="run only the case ids listed in PATH (one per line, '#' comments)")
    g.addoption("--shard", metavar="I/N", help="run the I-th of N shards, balanced by --durations-file")
    g.addoption("--durations-file", metavar="PATH", help="recorded durations used to balance --shard")
    g.addoption("--record-durations", metavar="PATH", help="merge this run's per-case durations into PATH")
    g.addoption("--onnx-ops-sample", type=int, metavar="N", help="run a fixed, deterministic sample of N ONNX operator tests (the PR smoke run) instead of all")
    g.addoption("--onnx-data-dir", metavar="DIR", help="where generated ONNX operator test data lives (default: $IREE_CONFORMANCE_DATA or the user cache dir)")
    g.addoption("--zoo-manifest", metavar="PATH_OR_URL", help="ONNX Model Zoo manifest (onnx.hub ONNX_HUB_MANIFEST.json format)")
    g.addoption("--zoo-models", metavar="NAMES", help="comma-separated zoo model names to select")
    g.addoption("--zoo-tags", metavar="TAGS", help="comma-separated zoo tags to select")
    g.addoption("--zoo-max-bytes", type=int, metavar="N", help="select zoo models of at most N bytes")
    g.addoption("--zoo-mirror", metavar="TEMPLATE", help="URL template for zoo downloads (default: $IREE_CONFORMANCE_ZOO_MIRROR)")
    g.addoption("--offline", action="store_true", help="never download; cases that need a download are skipped with reason 'offline'")
    g.addoption("--retries", type=int, default=1, metavar="N", help="retry an unexpected result up to N times in a fresh worker, compiling afresh (default 1; 0: off); a case whose result then changes is reported flaky with every try, never as a pass")
    g.addoption("--fresh-worker", action="store_true", help="run every case in a new worker process (slower; for flake hunting: no state shared between cases)")
    g.addoption("--shuffle", type=int, metavar="SEED", help="run the selected cases in an order shuffled by SEED (for flake hunting: order-dependent failures)")
    g.addoption("--bisect-numerics", action="store_true", help="on a model numerics failure, report the first diverging node")


def _parse_timeouts(values: list[str]) -> dict[str, float]:
    result = {}
    for value in values:
        stage, _, seconds = value.partition("=")
        if stage not in DEFAULT_STAGE_TIMEOUTS:
            raise pytest.UsageError(f"--stage-timeout {value!r}: stage must be one of {', '.join(DEFAULT_STAGE_TIMEOUTS)}")
        try:
            result[stage] = float(seconds)
        except ValueError:
            raise pytest.UsageError(f"--stage-timeout {value!r}: SECONDS must be a number") from None
        if not math.isfinite(result[stage]) or result[stage] <= 0:
            raise pytest.UsageError(f"--stage-timeout {value!r}: SECONDS must be a finite number above 0")
    return result


def _read_case_list(path: Path) -> set[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise pytest.UsageError(f"--cases-file {path}: cannot read: {e.strerror or e}") from None
    return {line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()}


class ConformanceSession:
    """Per-process state: targets, store, manifests, the worker and the collected Outcomes."""

    def __init__(self, config: pytest.Config, conformance_dir: Path):
        self.config = config
        self.dir = conformance_dir
        opt = config.getoption
        unsupported = unsupported_host_reason()
        if unsupported:
            raise pytest.UsageError(f"iree-conformance cannot run here: {unsupported}")
        try:
            known = load_targets(conformance_dir / "targets.toml")
            self.targets: list[Target] = select_targets(known, opt("--target") or ["llvm-cpu"])
        except TargetError as e:
            raise pytest.UsageError(str(e)) from None
        self.os = host_os()
        self.expectations_dir = Path(opt("--expectations-dir") or conformance_dir / "expectations")
        try:
            self.expectations: dict[str, Expectations] = {
                t.name: load_expectations(self.expectations_dir, t.name, self.os) for t in self.targets
            }
        except ExpectationsError as e:
            raise pytest.UsageError(f"broken expectations manifest: {e}") from None
        store_dir = None if opt("--no-cache") else Path(opt("--store-dir") or default_store_dir())
        self.store = ArtifactStore(store_dir)
        self.timeouts = _parse_timeouts(opt("--stage-timeout"))
        self.compile_only = bool(opt("--compile-only"))
        if opt("--bundle") and not self.compile_only:
            raise pytest.UsageError("--bundle needs --compile-only")
        if self.compile_only and opt("--update-expectations"):
            raise pytest.UsageError("--update-expectations needs a full run: with --compile-only, run-stage failures would be dropped")
        if opt("--timing-runs") < 0:
            raise pytest.UsageError("--timing-runs must be 0 or more")
        if opt("--retries") < 0:
            raise pytest.UsageError("--retries must be 0 or more")
        self.retries = 0 if self.compile_only else opt("--retries")
        self.fresh_worker = bool(opt("--fresh-worker"))
        if opt("--onnx-ops-sample") is not None and opt("--onnx-ops-sample") < 1:
            raise pytest.UsageError("--onnx-ops-sample must be 1 or more")
        try:
            self.shard = parse_shard(opt("--shard")) if opt("--shard") else None
            self.durations = load_durations(Path(opt("--durations-file"))) if opt("--durations-file") else {}
        except ShardError as e:
            raise pytest.UsageError(str(e)) from None
        self.case_filter = _read_case_list(Path(opt("--cases-file"))) if opt("--cases-file") else None
        self._worker: WorkerClient | None = None
        self._cases: dict[str, list[Case]] = {}
        self.outcomes: dict[tuple[str, str], dict[str, Any]] = {}
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.bundle = None

    @property
    def worker(self) -> WorkerClient:
        if self._worker is None:
            self._worker = WorkerClient(self.store.root, self.timeouts)
        return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def cases(self, suite: str) -> list[Case]:
        if suite not in self._cases:
            from . import suites as _  # noqa: F401
            from .suites.registry import collect

            self._cases[suite] = collect(suite, self)
        return self._cases[suite]

    def check(self, case: Case, target: Target, item: pytest.Item) -> None:
        from .pipeline import run_case

        reason = (None if self.compile_only else unavailable_reason(target)) or uncompilable_reason(target)
        expectations = self.expectations[target.name]
        if reason:
            outcome = Outcome(case.case_id, case.suite, target.name, status="skip", reason=reason)
            result: dict[str, Any] = {}
        else:
            if self.fresh_worker:
                self.close()
            outcome, result = run_case(
                case, target, self.worker, expectations.tolerance_for(case.case_id), self.compile_only, self.config.getoption("--timing-runs")
            )
        if outcome.status == "fail" and self.config.getoption("--bisect-numerics") and hasattr(case, "bisect"):
            outcome.diagnostics.append(self._bisect(case, target))
        if self.compile_only:
            if outcome.status == "pass" and self.bundle is not None:
                self.bundle.add(case, target, result, expectations)
            verdict = _compile_only_verdict(expectations, outcome)
            outcome.verdict, outcome.expected, message = verdict.name, verdict.expected, verdict.message
        else:
            verdict = expectations.judge(outcome)
            if verdict.name in ("fail", "xpass") and self.retries:
                outcome, verdict = self._retry(case, target, expectations, outcome, verdict)
            outcome.verdict, outcome.expected, message = verdict.name, verdict.expected, verdict.message
            if verdict.name in ("skip", "xfail", "flaky"):
                outcome.reason = message
        item.user_properties.append((OUTCOME_PROPERTY, outcome.to_json()))
        if outcome.verdict == "skip":
            pytest.skip(message or outcome.reason)
        if outcome.verdict == "xfail":
            pytest.xfail(message)
        if outcome.verdict in ("fail", "xpass"):
            pytest.fail(message, pytrace=False)
        # "flaky" returns normally: never red, and pytest_report_teststatus shows it as FLAKY.


    def _retry(self, case: Case, target: Target, expectations: Expectations, outcome: Outcome, verdict):
        """Tries an unexpected result again in a fresh worker, compiling afresh.

        The same unexpected result again confirms it. Any other result makes the case
        flaky: the verdict names every try, and flaky never counts as a pass.
        """
        from .expectations import Verdict
        from .pipeline import run_case

        tries = [outcome]
        for _ in range(self.retries):
            self.close()  # a fresh worker: no state (or heap) left over from other cases
            again, _ = run_case(case, target, self.worker, expectations.tolerance_for(case.case_id), retry=True)
            tries.append(again)
            if again.observed != outcome.observed:
                break
        last = tries[-1]
        last.attempts = [t.as_attempt() for t in tries[:-1]]
        if all(t.observed == outcome.observed for t in tries):
            return last, expectations.judge(last)
        seen = " then ".join(t.observed for t in tries)
        return last, Verdict("flaky", f"flaky: {seen} (retried in a fresh worker); first try: {outcome.summary()}", verdict.expected)

    def _bisect(self, case: Case, target: Target) -> str:
        """Runs the model with every node output exposed; names the first diverging node."""
        from .pipeline import build_job

        def run_candidate(model, inputs):
            probe = Case(case_id=f"{case.case_id}#bisect", suite=case.suite, kind="onnx", source_bytes=model.SerializeToString())
            result = self.worker.execute(build_job(probe, target, [list(inputs)]))
            if result.get("status") != "pass":
                raise RuntimeError(f"the widened model did not run: {result.get('diagnostics')}")
            return dict(zip([o.name for o in model.graph.output], result["outputs"][0]))

        try:
            return "bisect-numerics: " + case.bisect(run_candidate)
        except Exception as e:  # noqa: BLE001 - triage must not hide the failure itself
            return f"bisect-numerics could not run: {type(e).__name__}: {e}"

    # -- hooks (this object is registered as a plugin) -------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        if config.getoption("--shuffle") is not None:
            import random

            random.Random(config.getoption("--shuffle")).shuffle(items)
        if self.case_filter is not None:
            wanted = self.case_filter
            drop = [item for item in items if (_item_key(item) or "").split(":", 1)[-1] not in wanted]
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = [item for item in items if (_item_key(item) or "").split(":", 1)[-1] in wanted]
        if self.shard is None:
            return
        index, count = self.shard
        keys = [_item_key(item) or item.nodeid for item in items]
        shards = assign(keys, self.durations, count)
        keep = [item for item, shard in zip(items, shards) if shard == index - 1]
        drop = [item for item, shard in zip(items, shards) if shard != index - 1]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        """A flaky verdict is its own category in pytest's summary line, not a pass."""
        if report.when == "call" and report.passed and _verdict_of(report) == "flaky":
            return "flaky", "K", ("FLAKY", {"yellow": True})
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        for target in self.targets:
            recorded = self.expectations[target.name].recorded_on
            if target.host_specific and recorded and recorded != cpu_fingerprint():
                lines.append(
                    f"iree-conformance: WARNING: the {target.name} manifest was recorded on {recorded}; this host is "
                    f"{cpu_fingerprint()}: its verdicts may differ here (record them with --update-expectations)"
                )
        return lines

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        flaky = [o for o in self.outcomes.values() if o.get("verdict") == "flaky"]
        if flaky:
            terminalreporter.section("flaky cases (never red, never a pass)", yellow=True)
            for o in sorted(flaky, key=lambda o: (o["target"], o["case_id"])):
                terminalreporter.write_line(f"FLAKY {o['target']}:{o['case_id']}: {o.get('reason', '').splitlines()[0] if o.get('reason') else ''}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in getattr(report, "user_properties", []):
            if name == OUTCOME_PROPERTY and isinstance(value, dict):
                self.outcomes[(value["target"], value["case_id"])] = value

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = self.config
        if hasattr(config, "workerinput"):
            return
        outcomes = list(self.outcomes.values())
        from .report import run_metadata, write_results

        if config.getoption("--report-json"):
            meta = run_metadata([t.name for t in self.targets], self.started, sys.argv)
            write_results(Path(config.getoption("--report-json")), meta, outcomes)
        if config.getoption("--record-durations"):
            measured = {f"{o['target']}:{o['case_id']}": o.get("duration", 0.0) for o in outcomes if o["status"] != "skip"}
            record_durations(Path(config.getoption("--record-durations")), measured)
        mode = config.getoption("--update-expectations")
        if mode:
            self._update_manifests(mode, outcomes)
        if self.bundle is not None:
            self.bundle.finish(outcomes, self.targets)

    def _update_manifests(self, mode: str, outcomes: list[dict[str, Any]]) -> None:
        from .manifest import update_manifests

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        hosts = {t.name: cpu_fingerprint() for t in self.targets if t.host_specific}
        written = update_manifests(
            self.expectations_dir, [Outcome.from_json(o) for o in outcomes], self.os,
            overlay=mode == "overlay", hosts=hosts, targets=[t.name for t in self.targets],
        )
        for path, changed in written:
            if reporter is not None:
                reporter.write_line(f"iree-conformance: {'updated' if changed else 'unchanged'} {path}")


_COMPILE_STAGE_KINDS = ("fail-prepare", "fail-import", "fail-compile")


def _compile_only_verdict(expectations: Expectations, outcome: Outcome):
    """Like judge, but a listed run-stage failure says nothing about a compile-only pass."""
    from .expectations import Verdict

    entry = expectations.xfail.get(outcome.case_id)
    if outcome.status == "pass" and entry is not None and entry.stage not in _COMPILE_STAGE_KINDS:
        return Verdict("pass", "", entry.stage)
    return expectations.judge(outcome)


def _verdict_of(report: pytest.TestReport) -> str | None:
    for name, value in getattr(report, "user_properties", []):
        if name == OUTCOME_PROPERTY and isinstance(value, dict):
            return value.get("verdict")
    return None


def _session(config: pytest.Config) -> ConformanceSession:
    return config.stash[_SESSION_KEY]


def configure(config: pytest.Config, conformance_dir: Path) -> None:
    """Called from conformance/conftest.py's pytest_configure."""
    for name, text in load_toml(Path(__file__).resolve().parent / "markers.toml").get("markers", {}).items():
        config.addinivalue_line("markers", f"{name}: {text}")
    session = ConformanceSession(config, conformance_dir)
    config.stash[_SESSION_KEY] = session
    config.pluginmanager.register(session, "iree-conformance-session")
    if session.compile_only and config.getoption("--bundle"):
        from .bundle import BundleWriter

        session.bundle = BundleWriter(Path(config.getoption("--bundle")))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_KEY in config.stash:
        _session(config).close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_case" not in metafunc.fixturenames:
        return
    session = _session(metafunc.config)
    suite = getattr(metafunc.module, "SUITE", None)
    if suite is None:
        pytest.fail(f"{metafunc.module.__name__} uses conformance_case but names no SUITE", pytrace=False)
    try:
        cases = session.cases(suite)
    except Exception as e:  # noqa: BLE001 - a broken provider is a collection error with its reason
        pytest.fail(f"cannot collect suite {suite}: {e}", pytrace=False)
    if session.case_filter is not None:  # before parametrize: thousands of items cost time
        cases = [case for case in cases if case.case_id in session.case_filter]
    params = [pytest.param(case, target, id=f"{target.name}:{case.case_id}") for target in session.targets for case in cases]
    metafunc.parametrize(("conformance_case", "conformance_target"), params)


def _item_key(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "conformance_case" not in callspec.params:
        return None
    return f"{callspec.params['conformance_target'].name}:{callspec.params['conformance_case'].case_id}"


@pytest.fixture
def conformance(request: pytest.FixtureRequest):
    """Runs a case and turns its Outcome into a pytest verdict."""
    session = _session(request.config)

    def check(case: Case, target: Target) -> None:
        session.check(case, target, request.node)

    return check
