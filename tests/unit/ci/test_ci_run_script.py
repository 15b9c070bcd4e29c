""".ci/run's act runs of ci.yml (docs/ci-local.md, ".ci/run: what it runs and where the time goes"): the lint job,
which the script's own lint section runs on the same tree, runs once under act; the
warm-cache run keeps the jobs it checks."""

from __future__ import annotations

import re
import shlex

from tests.support.ci_helpers import REPO

ALL_JOBS = ("lint", "test", "results")


def ci_yml_runs(script: str) -> list[tuple[str, ...]]:
    """The jobs of each `devtools.act_local ci.yml` command of script (all of ci.yml's
    when the command names none), continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", script)
    runs = []
    for line in joined.splitlines():
        if line.lstrip().startswith("#") or "devtools.act_local ci.yml" not in line:
            continue
        words = shlex.split(line, comments=True, posix=True)
        jobs = tuple(words[i + 1] for i, word in enumerate(words) if word == "--job")
        runs.append(jobs or ALL_JOBS)
    return runs


def test_the_lint_job_runs_once_under_act_and_the_warm_run_keeps_test_and_results():
    runs = ci_yml_runs((REPO / ".ci" / "run").read_text(encoding="utf-8"))
    assert len(runs) == 3, runs  # cold, warm, the pull request
    assert sum("lint" in jobs for jobs in runs) == 1, runs
    assert {"test", "results"} <= set(runs[1]), runs


def test_the_reader_sees_jobs_and_continuations():
    script = (
        "# python -m devtools.act_local ci.yml --job lint\n"
        'python -m devtools.act_local ci.yml "${A[@]}" --summary x.json\n'
        "python -m devtools.act_local ci.yml --event pull_request --job test \\\n"
        "  --job results --quiet\n"
    )
    assert ci_yml_runs(script) == [ALL_JOBS, ("test", "results")]
