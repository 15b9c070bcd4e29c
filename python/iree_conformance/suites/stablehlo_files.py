"""Cases from a ``--stablehlo-dir`` tree: self-checking files and lit RUN/FileCheck files.

Every ``.mlir`` file is one of:

- self-checking: each public argument-less function that holds or calls check ops is a
  case (``CheckCase``); its checks are recorded as they run;
- lit: each IREE RUN line piped into FileCheck is a case (``LitCase``) on the targets of
  its backend; the results are printed as ``iree-run-module`` prints them and matched;
- neither: a ``skip`` case that names the file and says why.

A folder whose files hold no test at all is an ``error`` case that names the folder;
the other folders collect as usual.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iree_conformance.common import errors
from iree_conformance.frontends.stablehlo.checks import (
    CheckRewriteError,
    list_test_functions,
    parse_module,
)
from iree_conformance.frontends.stablehlo.lit_runs import (
    RunLine,
    parse_input,
    parse_run_lines,
    target_backend,
)
from iree_conformance.model.cases import Case, CaseInvalid, Check, ChecksFailed
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import CaseResult
from iree_conformance.suites.check_pairs import checks_from_records

SUITE = "stablehlo"
# Part of the store key of instrumented modules: bump it when stablehlo_checks changes
# what the instrumentation produces (the check sites are cached with the module).
REWRITE_VERSION = 3
_CHECK_OPTIONS = {"rewrite_checks": True, "rewrite_version": REWRITE_VERSION}
_MAX_OUTPUT_LINES = 20


class CorpusError(errors.CorpusError):
    pass


@dataclasses.dataclass
class CheckCase(Case):
    """A test function of a self-checking file: every check it executed is a comparison."""

    batchable: ClassVar[bool] = True
    expected_from: ClassVar[str] = "the values its author wrote"  # what the checks hold

    def checks(self, input_sets, output_sets, worker_result: CaseResult) -> list[Check]:
        sites, records = worker_result.check_sites, worker_result.check_records
        if sites is None or not records:
            raise ValueError(f"the module reported no checks for function {self.entry_function!r}")
        return checks_from_records(
            sites, records[0], self.source_path.name if self.source_path else ""
        )

    def bisect(self, run_candidate) -> str:
        """``--bisect-numerics`` says plainly why no op of a self-checking function is
        judged: its reference values exist for the checked values only."""
        return (
            f"not bisected: no reference reaches the ops of @{self.entry_function}: its "
            f"expected values are {self.expected_from}, for the checked values only, written "
            "into the program as constants of its check ops"
        )

    def source_line(self) -> int:
        """The line of the test function's ``func.func @name`` (1 if not found)."""
        if self.source_path is None or not self.entry_function:
            return 1
        try:
            text = self.source_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return 1
        pattern = re.compile(rf"func\.func\b[^@\n]*@{re.escape(self.entry_function)}\b")
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                return number
        return 1


@dataclasses.dataclass
class LitCase(Case):
    """One RUN line: compiled and run by our pipeline, printed as iree-run-module prints, FileChecked."""

    run: RunLine | None = None
    bundle_unsupported: str = "FileCheck runs in the suite; run-bundle has no FileCheck step"

    def skip_reason_for(self, target: Any) -> str | None:
        assert self.run is not None
        if self.run.problem:
            return f"{self.source_path}: {self.run.problem}"
        backend = target_backend(target.compile_flags)
        if backend != self.run.backend:
            return f"{self.source_path}: {self.run.label} compiles for {self.run.backend}; target {target.name} compiles for {backend}"
        return None

    def source_line(self) -> int:
        """The RUN line's own line."""
        return self.run.line if self.run is not None else 1

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        assert self.run is not None
        return [*target_flags, *self.run.compile_flags, f"--iree-input-type={self.input_type}"]

    def input_sets(self) -> list[list[np.ndarray]]:
        assert self.run is not None
        return [[parse_input(spec) for spec in self.run.inputs]]

    def checks(self, input_sets, output_sets, worker_result: CaseResult) -> list[Check]:
        from iree_conformance.frontends.stablehlo.iree_output import filecheck, format_results

        assert self.run is not None and self.source_path is not None
        output = format_results(self.entry_function or "main", output_sets[0])
        matched, diagnostic = filecheck(str(self.source_path), output, self.run.filecheck_args)
        if not matched:
            shown = output.splitlines()
            lines = [
                f"{self.run.label}: FileCheck found no match in the output",
                *diagnostic.rstrip().splitlines(),
            ]
            lines += ["the output was:", *shown[:_MAX_OUTPUT_LINES]]
            if len(shown) > _MAX_OUTPUT_LINES:
                lines.append(f"... {len(shown) - _MAX_OUTPUT_LINES} more lines")
            raise ChecksFailed(lines)
        # FileCheck matched: one comparison that says so, so that the case is judged.
        return [
            Check(
                [np.array(True)],
                [np.array(True)],
                Tolerance(0.0, 0.0),
                f"{self.run.label} FileCheck",
            )
        ]


@dataclasses.dataclass
class InvalidCase(Case):
    """A broken part of the corpus (a folder without tests), reported as an error case."""

    problem: str = ""

    def input_sets(self) -> list[list[np.ndarray]]:
        raise CaseInvalid(self.problem)


def _entry_of(text: str, run: RunLine) -> str:
    """The function a RUN line runs: --function, else the module's only public function, else main."""
    if run.function:
        return run.function
    try:
        module = parse_module(text)
    except CheckRewriteError:
        return "main"
    names = []
    for op in module.body.operations:
        attrs = op.operation.attributes
        visibility = (
            str(attrs["sym_visibility"]).strip('"') if "sym_visibility" in attrs else "public"
        )
        if op.operation.name == "func.func" and visibility == "public":
            names.append(str(attrs["sym_name"]).strip('"'))
    return names[0] if len(names) == 1 else "main"


def file_cases(path: Path, case_stem: str) -> list[Case]:
    """The cases of one file; a file in no supported form gives one skip case saying why."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise CorpusError(f"{path}: cannot read: {e.strerror or e}") from None
    cases: list[Case] = []
    try:
        functions = list_test_functions(text)
        parse_error = None
    except CheckRewriteError as e:
        # The file has check ops but does not parse: one case, which fails at import.
        functions, parse_error = [], str(e)
    if parse_error:
        cases.append(_check_case(path, f"stablehlo-ext/{case_stem}", None))
    for func in functions:
        case_id = (
            f"stablehlo-ext/{case_stem}"
            if functions == ["main"]
            else f"stablehlo-ext/{case_stem}:{func}"
        )
        cases.append(_check_case(path, case_id, func))
    # In a self-checking file, RUN lines without FileCheck (IREE's own check tests) and
    # other projects' RUN lines (openxla's stablehlo-opt) are not cases: the functions are.
    for run in parse_run_lines(text, other_tools=not cases):
        if cases and run.problem and "FileCheck" in run.problem:
            continue
        cases.append(
            LitCase(
                case_id=f"stablehlo-ext/{case_stem}:run{run.line}",
                suite=SUITE,
                kind="mlir",
                source_path=path,
                entry_function=None if run.problem else _entry_of(text, run),
                input_type=run.input_type,
                reference_name="filecheck",
                run=run,
            )
        )
    if not cases:
        why = (
            "no check op (check.expect_* or stablehlo.custom_call @check.expect_*) and no RUN line"
        )
        cases.append(
            Case(
                case_id=f"stablehlo-ext/{case_stem}",
                suite=SUITE,
                kind="mlir",
                source_path=path,
                skip_reason=f"{path}: not a test: {why}",
            )
        )
    return cases


def _check_case(path: Path, case_id: str, func: str | None) -> CheckCase:
    return CheckCase(
        case_id=case_id,
        suite=SUITE,
        kind="mlir",
        source_path=path,
        entry_function=func,
        input_type="stablehlo",
        import_options=dict(_CHECK_OPTIONS),
        reference_name="checks",
    )


def _is_test(case: Case) -> bool:
    return not (type(case) is Case and case.skip_reason)


def external_cases(root: Path) -> list[Case]:
    """Every case of every .mlir file under root (recursively), plus an error case for
    each folder without any test."""
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"--stablehlo-dir {root}: not a directory")
    cases: list[Case] = []
    tests_under: dict[Path, int] = {root: 0}
    for folder in sorted(
        p
        for p in root.rglob("*")
        if p.is_dir() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ):
        tests_under[folder] = 0
    for path in sorted(root.rglob("*.mlir")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if not path.is_file():  # a FIFO (reading it would block), a folder, a socket
            continue
        found = file_cases(path, path.relative_to(root).with_suffix("").as_posix())
        cases += found
        count = sum(1 for c in found if _is_test(c))
        for folder in [path.parent, *path.parent.parents]:
            if folder in tests_under:
                tests_under[folder] += count
    for folder, count in sorted(tests_under.items()):
        if count == 0:
            rel = folder.relative_to(root).as_posix()
            others = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
            holds = (
                f"it holds {', '.join(others[:8])}{' ...' if len(others) > 8 else ''}"
                if others
                else "it is empty"
            )
            problem = (
                f"--stablehlo-dir folder {folder} holds no test ({holds}): add self-checking or lit RUN/FileCheck "
                ".mlir files, or point --stablehlo-dir elsewhere"
            )
            cases.append(
                InvalidCase(
                    case_id=f"stablehlo-ext/{rel}:folder", suite=SUITE, kind="mlir", problem=problem
                )
            )
    return cases
