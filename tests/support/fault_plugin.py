"""Test-only pytest plugin (`-p tests.support.fault_plugin`): makes chosen cases crash.

FAULT_ONCE names cases (comma-separated ids) whose first try crashes at run and whose
retries do not: a flaky case. FAULT_ALWAYS names cases that crash on every try.
FAULT_KIND: how (engine/worker/main.py's faults: "crash", the default, or "kill", as the
kernel's OOM killer would).
"""

from __future__ import annotations

import dataclasses
import os

from iree_conformance.engine import pipeline


def pytest_configure(config) -> None:
    once = set(filter(None, os.environ.get("FAULT_ONCE", "").split(",")))
    always = set(filter(None, os.environ.get("FAULT_ALWAYS", "").split(",")))
    kind = os.environ.get("FAULT_KIND") or "crash"
    real = pipeline.build_job

    def build_job(attempt, input_sets):
        job = real(attempt, input_sets)
        case_id = attempt.case.case_id
        if case_id in always or (case_id in once and not attempt.retry):
            job = dataclasses.replace(job, fault=("run", kind))
        return job

    pipeline.build_job = build_job
