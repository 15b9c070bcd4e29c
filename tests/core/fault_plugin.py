"""Test-only pytest plugin (`-p tests.core.fault_plugin`): makes chosen cases crash.

FAULT_ONCE names cases (comma-separated ids) whose first try crashes at run and whose
retries do not: a flaky case. FAULT_ALWAYS names cases that crash on every try.
"""

from __future__ import annotations

import dataclasses
import os

from iree_conformance.engine import pipeline


def pytest_configure(config) -> None:
    once = set(filter(None, os.environ.get("FAULT_ONCE", "").split(",")))
    always = set(filter(None, os.environ.get("FAULT_ALWAYS", "").split(",")))
    real = pipeline.build_job

    def build_job(
        case, target, input_sets, compile_only=False, timing_runs=0, retry=False, alone=False
    ):
        job = real(case, target, input_sets, compile_only, timing_runs, retry, alone)
        if case.case_id in always or (case.case_id in once and not retry):
            job = dataclasses.replace(job, fault=("run", "crash"))
        return job

    pipeline.build_job = build_job
