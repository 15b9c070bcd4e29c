"""The pytest side: options, parametrization, verdicts turned into outcomes, reports.

This module is a ``pytest11`` entry point (``pyproject.toml``), so every pytest run in an
environment with iree-conformance installed loads it, and it stays inert unless the run
names a conformance folder: a folder whose ``conftest.py`` implements
``pytest_conformance_folder`` (``conformance/conftest.py``). Only then, once the initial
conftests are loaded, are the options added (core ones from ``run_options.py``, then
every registered suite's own), and a ``ConformanceRun`` made and registered in
``pytest_configure``; a run that names no such folder sees hook specifications and
nothing else.

The suites are registered through the ``pytest_conformance_suites`` hook
(``hookspecs.py``; ``suites/builtin.py`` returns the built-in ones), and the one test
function of ``conformance/test_conformance.py`` takes the
``conformance_case``/``conformance_target`` parameters, generated here from every
registered suite for every selected target, each marked with its suite's marker
(``-m stablehlo``). Running and judging a case is the engine's (``engine.py``); this
module turns its verdict into pass, xfail, skip or fail. Outcomes travel to the
controlling process as ``user_properties`` so that ``--report-json`` and
``--update-expectations`` also work under pytest-xdist.
"""

from __future__ import annotations

import datetime
import math
import re
import sys
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from iree_conformance.common import store_events
from iree_conformance.common.errors import EXIT_CONFIGURATION, ConformanceError
from iree_conformance.common.platform_info import cpu_fingerprint, host_os, unsupported_host_reason
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.common.userdirs import DATA_ENV, STORE_ENV, ZOO_CACHE_ENV
from iree_conformance.common.vocabulary import RED_VERDICTS, CaseKey, Status, Verdict
from iree_conformance.engine.attempt import AttemptSettings
from iree_conformance.engine.batching import Batch, plan_batches
from iree_conformance.engine.sharding import ShardError, assign, load_durations, record_durations
from iree_conformance.engine.verdicts import Engine, EngineSettings
from iree_conformance.expectations.lookup import Expectations, ExpectationsError, load_expectations
from iree_conformance.model.cases import Case
from iree_conformance.model.outcome import Outcome
from iree_conformance.model.targets import Target, TargetError, load_targets, select_targets
from iree_conformance.suites.base import SuiteContext
from iree_conformance.suites.registry import (
    SuiteError,
    SuiteRegistry,
    builtin_suites,
    option_values,
)
from iree_conformance.suites.run_options import RunOptions, add_options

if TYPE_CHECKING:
    from iree_conformance.bundles.bundle import BundleWriter

OUTCOME_PROPERTY = "iree_conformance_outcome"
_RUN_KEY = pytest.StashKey["ConformanceRun"]()
_FOLDER_KEY = pytest.StashKey[Path]()
# The message of an expected failure, set by the check; the report hook below turns the
# passed call into pytest's xfail. Not pytest.xfail(): an exception's report formats its
# traceback from the sources (about 50 ms a case; 757 known failures in the main job).
_XFAIL_KEY = pytest.StashKey[str]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    _add_hookspecs(pluginmanager)


def _add_hookspecs(pluginmanager: pytest.PytestPluginManager) -> None:
    """The hook specifications, and the built-in suites' implementation (suites/builtin.py)."""
    from iree_conformance.plugin import hookspecs
    from iree_conformance.suites import builtin

    hook = getattr(pluginmanager.hook, "pytest_conformance_suites", None)
    if hook is None or not hook.has_spec():
        pluginmanager.add_hookspecs(hookspecs)
    if not pluginmanager.is_registered(builtin):
        pluginmanager.register(builtin, "iree-conformance-suites")


def _registry(pluginmanager: pytest.PytestPluginManager) -> SuiteRegistry:
    _add_hookspecs(pluginmanager)
    try:
        return SuiteRegistry.from_hook(pluginmanager.hook)
    except SuiteError as e:
        raise pytest.UsageError(str(e)) from None


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, None, None]:
    """After the initial conftests (and so every suite they add) are loaded: when one of
    them names a conformance folder, adds the core options and every suite's own."""
    yield
    folder = conformance_folder(early_config.pluginmanager)
    if folder is None:
        return  # not a conformance run: nothing is added
    early_config.stash[_FOLDER_KEY] = folder
    add_options(parser, tuple(o for _, o in _registry(early_config.pluginmanager).options()))


def conformance_folder(pluginmanager: pytest.PytestPluginManager) -> Path | None:
    """The folder the loaded conftests name through ``pytest_conformance_folder``; None
    when none does; a usage error when they name two."""
    _add_hookspecs(pluginmanager)
    named = {Path(p).resolve() for p in pluginmanager.hook.pytest_conformance_folder() if p}
    if len(named) > 1:
        raise pytest.UsageError(
            f"one conformance folder per run, but the command line names {len(named)}: "
            f"{', '.join(sorted(map(str, named)))}; run them one at a time"
        )
    return next(iter(named), None)


_CACHE_ENVS = (DATA_ENV, ZOO_CACHE_ENV, STORE_ENV)


def _os_error_line(e: OSError) -> str:
    """One line for a folder the suite cannot create, read or write, with the next step."""
    where = e.filename or "a cache folder"
    return (
        f"{where}: {e.strerror or e}; point the folder at a writable place "
        f"(the suite's option or {', '.join(_CACHE_ENVS)}, else XDG_CACHE_HOME)"
    )


def _stop(error: ConformanceError, prefix: str = "") -> NoReturn:
    """Ends the run with the error's status from the one exit-status table (2 a target or
    durations file, 3 a manifest), not pytest's 4, which stays pytest's own bad option."""
    pytest.exit(f"error: {prefix}{error}", returncode=error.return_code)


class ConformanceRun:
    """Per-process state of a conformance run: options, targets, store, manifests, the
    worker and the collected Outcomes. (Not pytest's Session, nor a compiler Session.)"""

    def __init__(
        self,
        config: pytest.Config,
        conformance_dir: Path,
        options: RunOptions,
        suites: SuiteRegistry | None = None,
    ):
        self.config = config
        self.options = options
        self.conformance_dir = conformance_dir
        self.suites = suites if suites is not None else SuiteRegistry(builtin_suites())
        unsupported = unsupported_host_reason()
        if unsupported:
            raise pytest.UsageError(f"iree-conformance cannot run here: {unsupported}")
        try:
            known = load_targets(conformance_dir / "targets.toml")
            self.targets: list[Target] = select_targets(known, list(options.targets))
        except TargetError as e:
            _stop(e)
        self.os = host_os()
        self.expectations_dir = Path(options.expectations_dir or conformance_dir / "expectations")
        try:
            self.expectations: dict[str, Expectations] = {
                t.name: load_expectations(self.expectations_dir, t.name, self.os)
                for t in self.targets
            }
        except ExpectationsError as e:
            _stop(e, "broken expectations manifest: ")
        self.store = ArtifactStore(
            None if options.no_cache else Path(options.store_dir or default_store_dir())
        )
        try:
            self.durations = load_durations(options.durations_file)
        except ShardError as e:
            _stop(e, "--durations-file: ")
        self.batches: dict[tuple[str, str], Batch] = {}
        self.store_events: Path | None = None  # set by configure() in the controller
        self.write_errors: list[str] = []  # outputs the run could not write, told at its end
        self.engine = Engine(
            self.store.root,
            EngineSettings(
                AttemptSettings(
                    compile_only=options.compile_only,
                    timing_runs=options.timing_runs,
                    timing_budget=options.timing_budget,
                    alone=options.effective_batch_size < 2,
                ),
                retries=options.effective_retries,
                bisect_numerics=options.bisect_numerics,
                benchmark=False if options.no_benchmark else (True if options.benchmark else None),
                fresh_worker=options.fresh_worker,
            ),
            options.stage_timeouts,
        )
        self._cases: dict[str, list[Case]] = {}
        self.outcomes: dict[tuple[str, str], dict[str, Any]] = {}
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.bundle: BundleWriter | None = None

    def close(self) -> None:
        self.engine.close()
        store_events.end(self.store_events)

    def cases(self, suite: str) -> list[Case]:
        if suite not in self._cases:
            found = self.suites.get(suite)
            given = {o.dest: self.config.getoption(o.dest, None) for o in found.options}
            context = SuiteContext(self.conformance_dir, self.options, option_values(found, given))
            self._cases[suite] = self.suites.collect(suite, context)
        return self._cases[suite]

    def selected_suites(self) -> list[str]:
        return suites_selected_by(getattr(self.config.option, "markexpr", ""), self.suites.names)

    def check(self, case: Case, target: Target, item: pytest.Item) -> None:
        """Runs and judges the case (engine.py) and turns the verdict into pytest's."""
        expectations = self.expectations[target.name]
        checked = self.engine.check(
            case, target, expectations, self.batches.get((target.name, case.case_id))
        )
        outcome, message = checked.outcome, checked.judgement.message
        if self.options.compile_only and outcome.status == Status.PASS and self.bundle is not None:
            self.bundle.add(case, target, checked.result, expectations)
        if self.options.repro_dir is not None:
            self._write_repro(case, target, outcome, expectations)
        item.user_properties.append((OUTCOME_PROPERTY, outcome.to_json()))
        if outcome.verdict == Verdict.SKIP:
            pytest.skip(message or outcome.reason)
        if outcome.verdict == Verdict.XFAIL:
            item.stash[_XFAIL_KEY] = message
            return
        if outcome.verdict in RED_VERDICTS:
            pytest.fail(message, pytrace=False)
        # "flaky" returns normally: never red, and pytest_report_teststatus shows it as FLAKY.

    def _write_repro(
        self, case: Case, target: Target, outcome: Outcome, expectations: Expectations
    ) -> None:
        """--repro-dir: a reproducer folder for a red case (and, with --repro-expected, an
        expected failure); what it could not do is a line of the Outcome, never the verdict."""
        from iree_conformance.repro.plugin_hook import write_for_run

        note = write_for_run(
            case, target, outcome, expectations, self.store, self.conformance_dir, self.options
        )
        if note:
            outcome.info["repro"] = note

    # -- hooks and the fixture (this object is registered as a plugin) ---------
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "conformance_case" not in metafunc.fixturenames:
            return
        params = []
        for suite in self.selected_suites():
            problem = None
            try:
                cases = self.cases(suite)
            except OSError as e:  # an unwritable or missing cache folder: say which, and what to do
                problem = f"cannot collect suite {suite}: {_os_error_line(e)}"
            except Exception as e:  # noqa: BLE001 - a broken suite is a collection error with its reason
                problem = f"cannot collect suite {suite}: {e}"
            if problem is not None:  # failed outside the except: no "During handling" chain
                pytest.fail(problem, pytrace=False)
            wanted = self.options.cases
            if (
                wanted is not None
            ):  # --cases-file, before parametrizing: thousands of items cost time
                cases = [case for case in cases if case.case_id in wanted]
            mark = getattr(pytest.mark, suite)
            params += [
                pytest.param(case, target, id=str(CaseKey(target.name, case.case_id)), marks=mark)
                for target in self.targets
                for case in cases
            ]
        metafunc.parametrize(("conformance_case", "conformance_target"), params)

    @pytest.fixture
    def conformance(self, request: pytest.FixtureRequest):
        """Runs a case and turns its Outcome into a pytest verdict."""

        def check(case: Case, target: Target) -> None:
            self.check(case, target, request.node)

        return check

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        # --cases-file is applied in pytest_generate_tests, before parametrizing.
        if self.options.shuffle is not None:
            import random

            random.Random(self.options.shuffle).shuffle(items)
        pairs = [_case_and_target(item) for item in items]
        self.batches = plan_batches(
            [pair for pair in pairs if pair is not None],
            self.options.effective_batch_size,
            alone=lambda case, target: case.case_id in self.expectations[target.name].xfail,
        )
        if self.options.shard is not None:
            self._keep_shard(config, items)
        if getattr(config.option, "loadgroup", False) or getattr(config, "workerinput", {}).get(
            _LOADGROUP_INPUT
        ):
            # pytest-xdist's loadgroup schedules by the "@group" suffix of a node id; its
            # own hook has run before this one (trylast), so the suffix is added here.
            for item in items:
                batch = self.batches.get(_pair_key(_case_and_target(item)))
                if batch is not None and "@" not in item.nodeid:
                    _set_nodeid(item, f"{item.nodeid}@{batch.batch_id}")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The collected cases live as long as the session: moved out of the cyclic
        garbage collector's reach, they are not walked again by every full collection
        (pytest's own at the end included) while the cases run."""
        import gc

        gc.freeze()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """pytest-xdist, controller side: tell each worker whether the run is loadgroup.
        A worker parses the original command line again, so it does not see the switch
        to loadgroup that ``configure`` made, and its own ``loadgroup`` option is False."""
        node.workerinput[_LOADGROUP_INPUT] = (
            getattr(self.config.option, "dist", "no") == "loadgroup"
        )

    def _keep_shard(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Keeps this shard's items; a batch is one unit, weighed by its cases' durations."""
        assert self.options.shard is not None
        index, count = self.options.shard
        labelled = [(self._unit_of(item), item) for item in items]
        units: dict[str, list[pytest.Item]] = {}
        for name, item in labelled:
            units.setdefault(name, []).append(item)
        names = list(units)
        known = {
            name: sum(self.durations.get(_item_key(i) or i.nodeid, math.nan) for i in group)
            for name, group in units.items()
        }
        weights = {name: seconds for name, seconds in known.items() if not math.isnan(seconds)}
        shards = assign(names, weights, count)
        keep_units = {name for name, shard in zip(names, shards) if shard == index - 1}
        keep = [item for name, item in labelled if name in keep_units]
        drop = [item for name, item in labelled if name not in keep_units]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def _unit_of(self, item: pytest.Item) -> str:
        batch = self.batches.get(_pair_key(_case_and_target(item)))
        return batch.batch_id if batch is not None else (_item_key(item) or item.nodeid)

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
        size = self.options.effective_batch_size
        if size > 1:
            scheduling = (
                ", scheduled as units (--dist loadgroup)"
                if getattr(config.option, "dist", "no") == "loadgroup"
                else ""
            )
            lines.append(
                f"iree-conformance: small cases compile in batches of up to {size}{scheduling}; --batch-size 1 compiles each alone"
            )
        return lines

    def pytest_terminal_summary(
        self, terminalreporter, exitstatus: int, config: pytest.Config
    ) -> None:
        for line in self.write_errors:
            terminalreporter.section("results not written", red=True)
            terminalreporter.write_line(f"iree-conformance: error: {line}", red=True)
        problems = store_events.summary(self.store_events)
        if problems:
            terminalreporter.section("artifact store", yellow=True)
            for line in problems:
                terminalreporter.write_line(f"iree-conformance: {line}")
        _not_judged_summary(terminalreporter, list(self.outcomes.values()))
        _preparation_summary(terminalreporter, list(self.outcomes.values()))
        flaky = [o for o in self.outcomes.values() if o.get("verdict") == "flaky"]
        if flaky:
            terminalreporter.section("flaky cases (never red, never a pass)", yellow=True)
            for o in sorted(flaky, key=lambda o: (o["target"], o["case_id"])):
                terminalreporter.write_line(
                    f"FLAKY {CaseKey.of(o)}: {o.get('reason', '').splitlines()[0] if o.get('reason') else ''}"
                )
        # A result in a batch that a solo run then changed: the solo result is the verdict,
        # and the difference is shown, not hidden (a merged module is not the case alone).
        changed = [
            o
            for o in self.outcomes.values()
            if (o.get("info") or {}).get("batch", {}).get("ran_alone")
            and o["info"]["batch"].get("in_batch") != _observed(o)
        ]
        if changed:
            terminalreporter.section(
                "cases whose result in a batch differed from their result alone (verdict: alone)",
                yellow=True,
            )
            for o in sorted(changed, key=lambda o: (o["target"], o["case_id"])):
                terminalreporter.write_line(
                    f"BATCH {CaseKey.of(o)}: {o['info']['batch']['in_batch']} in a batch of {o['info']['batch']['size']}, {_observed(o)} alone"
                )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """An expected failure's call report, as pytest.xfail() would leave it: skipped,
        with ``wasxfail`` (terminal, xdist, junitxml and -rx read that)."""
        report = yield
        message = item.stash.get(_XFAIL_KEY, None)
        if message is not None and call.when == "call" and report.passed:
            report.outcome = "skipped"
            report.wasxfail = message
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in getattr(report, "user_properties", []):
            if name == OUTCOME_PROPERTY and isinstance(value, dict):
                self.outcomes[(value["target"], value["case_id"])] = value

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            return
        outcomes = list(self.outcomes.values())
        options = self.options
        from iree_conformance.report.markdown import run_metadata, write_results

        if options.report_json:
            meta = run_metadata([t.name for t in self.targets], self.started, sys.argv)
            try:
                write_results(options.report_json, meta, outcomes)
            except OSError as e:  # a full disk, a read-only folder: said, not a crash
                self.write_errors.append(
                    f"cannot write --report-json {options.report_json} "
                    f"({e.strerror or e}): the results of this run are not kept; free "
                    "space or give a path you can write"
                )
                session.exitstatus = EXIT_CONFIGURATION
        if options.record_durations:
            measured = {
                str(CaseKey.of(o)): o.get("duration", 0.0)
                for o in outcomes
                if o["status"] != Status.SKIP
            }
            record_durations(options.record_durations, measured)
        mode = options.update_expectations
        if mode:
            self._update_manifests(mode, outcomes)
        if self.bundle is not None:
            self.bundle.finish(outcomes, self.targets)

    def _update_manifests(self, mode: str, outcomes: list[dict[str, Any]]) -> None:
        from iree_conformance.expectations.manifest import update_manifests

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        hosts = {t.name: cpu_fingerprint() for t in self.targets if t.host_specific}
        written = update_manifests(
            self.expectations_dir,
            [Outcome.from_json(o) for o in outcomes],
            self.os,
            overlay=mode == "overlay",
            hosts=hosts,
            targets=[t.name for t in self.targets],
        )
        for path, changed in written:
            if reporter is not None:
                reporter.write_line(
                    f"iree-conformance: {'updated' if changed else 'unchanged'} {path}"
                )


def suites_selected_by(expression: str | None, names: list[str]) -> list[str]:
    """The suites whose cases the -m expression can select: all, unless the expression
    names only suite markers and rules a suite out (then it is not collected at all:
    `-m stablehlo` needs no ONNX data). A conformance item carries only its suite's marker."""
    if not (expression or "").strip():
        return names
    words = set(re.findall(r"[A-Za-z_][\w.-]*", expression or "")) - {"and", "or", "not"}
    if not words <= set(names):
        return names
    try:
        from _pytest.mark.expression import Expression

        compiled = Expression.compile(expression or "")
        return [name for name in names if compiled.evaluate(_only_mark(name))]
    except Exception:  # noqa: BLE001 - pytest's own -m check reports a bad expression
        return names


def _only_mark(name: str):
    """A -m matcher for an item that carries only the marker name."""

    def matches(mark: str, /, **kwargs: object) -> bool:
        return mark == name and not kwargs

    return matches


def _preparation_summary(terminalreporter, outcomes: list[dict]) -> None:
    """Users' programs (models, torch and JAX cases): each step the harness took beyond
    the program as given, and where IREE's tools at their defaults fail what the
    documented flow passes."""
    from iree_conformance.model.preparation import bare_defaults_line

    prepared = [o for o in outcomes if (o.get("info") or {}).get("preparation")]
    if not prepared:
        return
    terminalreporter.section("users' programs: what the harness did beyond the program as given")
    for o in sorted(prepared, key=lambda o: (o["target"], o["case_id"]))[:30]:
        info = o["info"]
        terminalreporter.write_line(
            f"{CaseKey.of(o)} ({o.get('verdict')}): " + "; ".join(info["preparation"])
        )
        bare = bare_defaults_line(info)
        if bare:
            terminalreporter.write_line(f"  {bare}", yellow=True)
    if len(prepared) > 30:
        terminalreporter.write_line(
            f"...and {len(prepared) - 30} more (info.preparation in the results JSON)"
        )


def _not_judged_summary(terminalreporter, outcomes: list[dict]) -> None:
    """How many cases the harness could not judge (skipped "not judged: ..."), loudly when
    they are most of the run: such a run says little about IREE."""
    from iree_conformance.report.model import is_not_judged, mostly_not_judged

    unjudged = [o for o in outcomes if is_not_judged(o)]
    if not unjudged:
        return
    loud = mostly_not_judged(outcomes)
    terminalreporter.section(
        "not judged (neither IREE's failure nor a pass)", red=loud, yellow=not loud
    )
    if loud:
        ran = sum(1 for o in outcomes if o.get("status") != "skip")
        terminalreporter.write_line(
            f"MOST CASES WERE NOT JUDGED ({len(unjudged)} of {ran}): this run says little "
            "about IREE; give their inputs (docs/your-own-model.md)",
            red=True,
            bold=True,
        )
    for o in sorted(unjudged, key=lambda o: (o["target"], o["case_id"]))[:20]:
        terminalreporter.write_line(f"NOT JUDGED {CaseKey.of(o)}: {o.get('reason', '')[:300]}")
    if len(unjudged) > 20:
        terminalreporter.write_line(f"...and {len(unjudged) - 20} more (the results JSON)")


def _verdict_of(report: pytest.TestReport) -> str | None:
    for name, value in getattr(report, "user_properties", []):
        if name == OUTCOME_PROPERTY and isinstance(value, dict):
            return value.get("verdict")
    return None


def _run(config: pytest.Config) -> ConformanceRun:
    return config.stash[_RUN_KEY]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """A conformance run (a folder was named): makes and registers its ConformanceRun."""
    folder = config.stash.get(_FOLDER_KEY, None)
    if folder is not None and _RUN_KEY not in config.stash:
        configure(config, folder)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A conformance test collected from a folder the command line did not name (bare
    ``pytest`` at the checkout's root): a collection error that says what to run."""
    if "conformance_case" in metafunc.fixturenames and _RUN_KEY not in metafunc.config.stash:
        folder = metafunc.definition.path.parent
        pytest.fail(
            f"{metafunc.definition.path.name} is a conformance test, but its folder {folder} "
            f"was not named on the command line, so the iree_conformance plugin did not "
            f"activate; run: pytest {folder}",
            pytrace=False,
        )


def configure(config: pytest.Config, conformance_dir: Path) -> None:
    """Makes the run's ConformanceRun and registers it as a plugin (its hooks, its fixture)."""
    suites = _registry(config.pluginmanager)
    for suite in suites:
        config.addinivalue_line("markers", f"{suite.name}: {suite.description}")
        for opt in suite.options:
            if not hasattr(config.option, opt.dest):
                raise pytest.UsageError(
                    f"suite {suite.name}: its option {opt.flag} was not registered: the plugin or "
                    "conftest.py that adds the suite was loaded during collection, after the "
                    "options were parsed; put it in a conftest.py above the conformance folder, "
                    "or load it with -p (docs/adding-a-suite.md)"
                )
    options = RunOptions.from_config(config)
    run = ConformanceRun(config, conformance_dir, options, suites)
    if (
        options.effective_batch_size > 1
        and getattr(config.option, "dist", "no") == "load"
        and not hasattr(config, "workerinput")
    ):
        # A batch is one unit of scheduling: with the default --dist load, pytest-xdist
        # would spread a batch's cases over workers and each would compile it.
        config.option.dist = "loadgroup"
    # What the store could not do (full, damaged), from every worker, told at the end.
    run.store_events = None if hasattr(config, "workerinput") else store_events.begin()
    config.stash[_RUN_KEY] = run
    config.pluginmanager.register(run, "iree-conformance-run")
    if options.compile_only and options.bundle is not None:
        from iree_conformance.bundles.bundle import BundleWriter

        run.bundle = BundleWriter(options.bundle)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RUN_KEY in config.stash:
        _run(config).close()


_LOADGROUP_INPUT = "iree_conformance_loadgroup"


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    """Renames an item (the "@group" suffix). pytest releases that keep the node id as a
    structured ``_id`` derive ``nodeid`` from it and ignore ``_nodeid``.

    Private on purpose, the one such access in the package (ruff SLF001): pytest has no
    public way to rename a node id, and pytest-xdist's public one, the ``xdist_group``
    marker, writes ``_nodeid`` itself, which pytest 9.2 ignores (measured: pytest 9.2.0,
    xdist 3.8.0, the marker's suffix never reaches the scheduler).
    tests/e2e/core/test_plugin.py::test_xdist_runs_each_batch_on_one_worker fails when
    a pytest release moves the node id again."""
    if hasattr(item, "_id"):
        from _pytest.nodeid import coerce_node_id

        item._id = coerce_node_id(nodeid)  # noqa: SLF001  # see the docstring
    else:
        item._nodeid = nodeid  # type: ignore[attr-defined]  # noqa: SLF001  # older pytest


def _case_and_target(item: pytest.Item) -> tuple[Case, Target] | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "conformance_case" not in callspec.params:
        return None
    return callspec.params["conformance_case"], callspec.params["conformance_target"]


def _pair_key(pair: tuple[Case, Target] | None) -> tuple[str, str]:
    return ("", "") if pair is None else (pair[1].name, pair[0].case_id)


def _observed(outcome: dict[str, Any]) -> str:
    return Outcome.from_json(outcome).observed


def _item_key(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "conformance_case" not in callspec.params:
        return None
    return str(
        CaseKey(
            callspec.params["conformance_target"].name, callspec.params["conformance_case"].case_id
        )
    )
