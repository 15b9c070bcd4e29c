"""``iree-conformance bisect --good A --bad B -- SELECTION``: which IREE version changed a
case's verdict.

A and B are two versions in either order; the search runs from the older to the newer, for
every case whose kind (pass, fail-compile, crash, ...) differs between the two ends: a
regression (pass, then a failure), a fix (a failure, then pass) or a change of failure.
The candidates are the versions between the ends on the index (PyPI releases; nightlies with
``--find-links``/``--pre``), each probed in its cached environment and store, by binary
search. A probe whose tries disagreed (the flaky policy: ``--retries`` re-runs an unexpected
result in a fresh worker) is run again up to ``--flaky-reruns`` times; a case still flaky
there is reported as such, never bisected on noise.

It prints, per changed case, the last version with the old verdict and the first with the
new one, their IREE revisions and GitHub's compare link, and writes into ``--bundle-dir``
(default ``<out>/bundle``; ``--out`` defaults to a new folder under the stores' root, never
the current folder)
the case on its failing version (the first new one; for a fix the last old one): a ``--compile-only`` bundle (when it compiles), its
results and log, and ``repro.txt``. Exit status: 0 found, 2 bad arguments (good equal to
bad, an unknown or too old version, no change between the ends, a selection matching
nothing), 10 an environment could not be made or cannot load IREE (docs/versions.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from packaging.version import Version

from iree_conformance.cli import versions as versions_command
from iree_conformance.common import iree_index, version_envs
from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.vocabulary import Status
from iree_conformance.report.version_compare import compare_link

log = versions_command.log
CaseKey = tuple[str, str]  # (target, case_id)


@dataclasses.dataclass
class Probe:
    """What one version did to each case: its kind, and whether its tries disagreed."""

    kinds: dict[CaseKey, str]
    flaky: dict[CaseKey, list[str]]
    revision: str | None


@dataclasses.dataclass
class Found:
    target: str
    case_id: str
    old_kind: str
    new_kind: str
    last_old: str | None
    first_new: str | None
    revisions: tuple[str | None, str | None]
    flaky_at: str | None = None
    bundle: str | None = None

    @property
    def direction(self) -> str:
        if self.old_kind == "pass":
            return "regression"
        return "fix" if self.new_kind == "pass" else "change"


def _kinds(outcomes: list[dict[str, Any]]) -> Probe:
    from iree_conformance.model.outcome import Outcome

    kinds: dict[CaseKey, str] = {}
    flaky: dict[CaseKey, list[str]] = {}
    for data in outcomes:
        outcome = Outcome.from_json(data)
        if outcome.status == Status.SKIP:
            continue
        key = (outcome.target, outcome.case_id)
        kinds[key] = outcome.observed
        seen = [a.get("kind") for a in outcome.attempts] + [outcome.observed]
        if len(set(seen)) > 1:
            flaky[key] = [str(s) for s in seen]
    return Probe(kinds, flaky, None)


class Bisector:
    def __init__(self, args: argparse.Namespace, candidates: list[iree_index.VersionSpec]):
        self.args = args
        self.candidates = candidates
        self.folder = (
            versions_command.conformance_dir(args.conformance_dir) if not args.check_model else None
        )
        self.selection = versions_command.selection_of(args)
        # torch cases (or a .pt2 program): the environments get the running one's torch
        self.torch = (
            Path(args.check_model).suffix == ".pt2"
            if args.check_model
            else versions_command.selects_torch(self.selection)
        )
        self.out = versions_command.out_dir(args, "bisect")
        # --bundle-dir, else <out>/bundle; "" writes none
        self.bundle_dir: Path | None = self.out / "bundle"
        if args.bundle_dir is not None:
            self.bundle_dir = Path(args.bundle_dir) if args.bundle_dir else None
        self.probes: dict[tuple[str, int], Probe] = {}
        self.envs: dict[str, version_envs.VersionEnv] = {}

    def env(self, spec: iree_index.VersionSpec) -> version_envs.VersionEnv:
        if spec.label not in self.envs:
            self.envs[spec.label] = versions_command.prepare_envs(
                [spec], self.args.envs_dir, torch=self.torch
            )[0]
        return self.envs[spec.label]

    def run(
        self, spec: iree_index.VersionSpec, cases: list[CaseKey] | None, attempt: int = 0
    ) -> Probe:
        env = self.env(spec)
        store = versions_command.store_for(spec, self.args.stores_dir)
        report = self.out / f"{spec.slug}{f'.rerun{attempt}' if attempt else ''}.json"
        if self.args.check_model:
            outcomes = self._check_model(env, report, store)
            # a probe whose environment cannot load IREE is no verdict: exit 10
            versions_command.refuse_harness_errors(env, outcomes, report.with_suffix(".log"))
        else:
            assert self.folder is not None
            extra: list[str] = []
            if cases is not None:
                listing = report.with_suffix(".cases")
                listing.parent.mkdir(parents=True, exist_ok=True)
                listing.write_text(
                    "\n".join(sorted({c for _, c in cases})) + "\n", encoding="utf-8", newline="\n"
                )
                extra = ["--cases-file", str(listing)]
            outcomes = versions_command.run_selection(
                env, self.folder, self.selection, report, store, extra
            )
        probe = _kinds(outcomes)
        probe.revision = env.revision
        return probe

    def _check_model(
        self, env: version_envs.VersionEnv, report: Path, store: Path
    ) -> list[dict[str, Any]]:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.unlink(missing_ok=True)
        command = [
            str(env.python), "-m", "iree_conformance.cli.main", "check-model", self.args.check_model,
            "--json", str(report), "--store-dir", str(store), "--timing-runs", "0", "--no-bisect",
            *self.selection,
        ]  # fmt: skip
        with open(report.with_suffix(".log"), "w", encoding="utf-8", newline="\n") as out:
            proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=Path.cwd())
        if not report.exists():
            raise ConfigurationError(
                f"check-model under IREE {env.spec.label} exited {proc.returncode} without a result "
                f"(see {report.with_suffix('.log')})"
            )
        return [json.loads(report.read_text(encoding="utf-8"))]

    def probe(
        self, index: int, case: CaseKey, cases: list[CaseKey]
    ) -> tuple[str | None, list[str] | None]:
        """The case's kind at candidates[index], rerun while its tries disagree."""
        spec = self.candidates[index]
        for attempt in range(self.args.flaky_reruns + 1):
            key = (spec.label, attempt)
            if key not in self.probes:
                log(
                    f"probing IREE {spec.label}" + (f" (rerun {attempt}: flaky)" if attempt else "")
                )
                self.probes[key] = self.run(spec, cases, attempt)
            probe = self.probes[key]
            if case not in probe.flaky:
                return probe.kinds.get(case), None
        return None, self.probes[(spec.label, self.args.flaky_reruns)].flaky[case]

    def search(self, case: CaseKey, old_kind: str, new_kind: str, cases: list[CaseKey]) -> Found:
        lo, hi = 0, len(self.candidates) - 1
        flaky_at = None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            kind, seen = self.probe(mid, case, cases)
            if seen is not None:
                flaky_at = f"{self.candidates[mid].label} ({' then '.join(seen)})"
                break
            if kind == old_kind:
                lo = mid
            else:
                hi = mid
        old, new = self.candidates[lo], self.candidates[hi]
        return Found(
            case[0], case[1], old_kind, new_kind,
            None if flaky_at else old.label, None if flaky_at else new.label,
            (self.env(old).revision, self.env(new).revision), flaky_at,
        )  # fmt: skip

    def bundle(self, found: Found, spec: iree_index.VersionSpec) -> Path:
        """The case on its failing version (the first new one; for a fix the last old one), for
        the bug report."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", found.case_id)
        assert self.bundle_dir is not None
        folder = self.bundle_dir / slug
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        env = self.env(spec)
        store = versions_command.store_for(spec, self.args.stores_dir)
        runs = folder / "results.json"
        if self.args.check_model:
            self._check_model(env, runs, store)
        else:
            assert self.folder is not None
            listing = folder / "case.txt"
            listing.write_text(found.case_id + "\n", encoding="utf-8", newline="\n")
            versions_command.run_selection(
                env, self.folder, self.selection, runs, store, ["--cases-file", str(listing)]
            )
            try:  # a bundle holds what compiles; a compile failure leaves the results and log
                versions_command.run_selection(
                    env, self.folder, self.selection, folder / "bundle-results.json", store,
                    ["--cases-file", str(listing), "--compile-only", "--bundle", str(folder / "bundle")],
                )  # fmt: skip
            except ConfigurationError as e:
                log(f"no compile-only bundle: {e}")
        install = (
            f"pip install iree-base-compiler=={spec.version} iree-base-runtime=={spec.version}"
        )
        links = " ".join(f"--find-links {link}" for link in spec.find_links)
        what = (
            f"iree-conformance check-model {self.args.check_model}"
            if self.args.check_model
            else f"pytest conformance --cases-file case.txt {' '.join(self.selection)}"
        )
        (folder / "repro.txt").write_text(
            f"# {found.case_id} on {found.target}: {found.old_kind} on IREE {found.last_old}, "
            f"{found.new_kind} on IREE {found.first_new}\n"
            f"# IREE revisions: {found.revisions[0]} -> {found.revisions[1]}\n"
            f"# {compare_link(*found.revisions) or ''}\n"
            f"{install} {links}{' --pre' if spec.pre else ''}\n{what}\n",
            encoding="utf-8",
            newline="\n",
        )
        return folder


def candidates_between(
    good: str, bad: str, find_links: tuple[str, ...], pre: bool
) -> list[iree_index.VersionSpec]:
    same = (
        f"--good and --bad are both {good}: give two versions, the one with the old verdict "
        "and the one with the new"
    )
    if good == bad:
        raise ConfigurationError(same)
    for text in (good, bad):  # before the index is read: a version too old needs no network
        iree_index.check_syntax(text)
    offered = iree_index.available(find_links, pre)
    ends = [iree_index.resolve(v, find_links, pre, offered) for v in (good, bad)]
    if None in (ends[0].version, ends[1].version):
        raise ConfigurationError(
            "no IREE is installed here, so installed cannot be an end; name a version"
        )
    if Version(ends[0].version or "0") == Version(ends[1].version or "0"):
        raise ConfigurationError(
            f"--good {good} and --bad {bad} are both IREE {ends[0].version}: give two "
            "versions, the one with the old verdict and the one with the new"
        )
    low, high = sorted(ends, key=lambda s: Version(s.version or "0"))
    between = [
        v
        for v in offered
        if Version(low.version or "0") < Version(v) < Version(high.version or "0")
    ]
    middle = [iree_index.resolve(v, find_links, pre, None) for v in between]
    return [low, *middle, high]


def cmd_bisect(args: argparse.Namespace) -> int:
    if args.check_model and not Path(args.check_model).is_file():
        raise ConfigurationError(f"--check-model {args.check_model}: no such file")
    if not args.check_model and not versions_command.selection_of(args):
        raise ConfigurationError(
            "bisect needs a selection after --, e.g. -- -m onnx_ops -k test_reduce_l2_empty_set"
        )
    if args.flaky_reruns < 0:
        raise ConfigurationError("--flaky-reruns must be 0 or more")
    candidates = candidates_between(args.good, args.bad, tuple(args.find_links), args.pre)
    log(f"{len(candidates)} candidate versions: {' '.join(c.label for c in candidates)}")
    bisector = Bisector(args, candidates)
    log(f"probing the ends: IREE {candidates[0].label} and {candidates[-1].label}")
    old_end = bisector.probes.setdefault(
        (candidates[0].label, 0), bisector.run(candidates[0], None)
    )
    new_end = bisector.probes.setdefault(
        (candidates[-1].label, 0), bisector.run(candidates[-1], None)
    )
    changed = sorted(
        key
        for key, kind in old_end.kinds.items()
        if key in new_end.kinds and new_end.kinds[key] != kind
    )
    flaky_ends = sorted(set(old_end.flaky) | set(new_end.flaky))
    changed = [c for c in changed if c not in flaky_ends]
    if flaky_ends:
        log("flaky at an end, not bisected: " + ", ".join(c for _, c in flaky_ends))
    if not changed:
        raise ConfigurationError(
            f"no case of the selection changed between IREE {candidates[0].label} and "
            f"{candidates[-1].label} ({len(old_end.kinds)} compared); nothing to bisect"
        )
    results = []
    for case in changed:
        found = bisector.search(case, old_end.kinds[case], new_end.kinds[case], changed)
        if found.first_new and bisector.bundle_dir is not None:
            # the failing end: the first new version, or for a fix the last old one
            failing = found.last_old if found.direction == "fix" else found.first_new
            spec = next(c for c in candidates if c.label == failing)
            found.bundle = str(bisector.bundle(found, spec))
        results.append(found)
    print(render(results))
    if args.json:
        data = {
            "candidates": [c.label for c in candidates],
            "cases": [
                dataclasses.asdict(f)
                | {"direction": f.direction, "compare": compare_link(*f.revisions)}
                for f in results
            ],
        }
        Path(args.json).write_text(
            json.dumps(data, indent=1) + "\n", encoding="utf-8", newline="\n"
        )
    if not args.no_step_summary:
        from iree_conformance.report.markdown import append_step_summary

        append_step_summary(render(results) + "\n")
    return 0


def render(results: list[Found]) -> str:
    lines = []
    for f in results:
        head = f"{f.case_id} on {f.target}: {f.direction} ({f.old_kind} -> {f.new_kind})"
        if f.flaky_at:
            lines.append(f"{head}: flaky at IREE {f.flaky_at}; not bisected further")
            continue
        lines.append(
            f"{head}\n  last {f.old_kind}: IREE {f.last_old} ({f.revisions[0]})\n"
            f"  first {f.new_kind}: IREE {f.first_new} ({f.revisions[1]})\n"
            f"  changes: {compare_link(*f.revisions) or '?'}"
            + (f"\n  bundle: {f.bundle}" if f.bundle else "")
        )
    return "\n".join(lines)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bisect",
        help="find the IREE version that changed a case's verdict (a regression or a fix), by binary search over the index's versions",
        description=(__doc__ or "").split("\n\n")[-1].strip()
        + " The selection follows --, e.g. -- -m onnx_ops -k test_reduce_l2_empty_set --offline.",
    )
    p.add_argument("--good", required=True, help="one end: a version with the old verdict")
    p.add_argument("--bad", required=True, help="the other end: a version with the new verdict")
    versions_command.add_index_arguments(p)
    p.add_argument(
        "--check-model",
        metavar="MODEL.onnx",
        help="bisect `iree-conformance check-model MODEL.onnx` instead of a pytest selection (options for check-model follow --)",
    )
    p.add_argument(
        "--flaky-reruns",
        type=int,
        default=2,
        help="rerun a probe whose tries disagreed up to N times (default 2)",
    )
    p.add_argument(
        "--bundle-dir",
        help="write the case on its failing version here (default: <out>/bundle, where --out "
        "defaults to a new folder under the stores' root; empty: none)",
    )
    p.add_argument("--json", help="also write the findings as JSON here")
    p.add_argument(
        "--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY"
    )
    p.set_defaults(func=cmd_bisect, pytest_args=[])
