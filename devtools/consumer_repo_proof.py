"""The GitHub Action (action.yml) as a user meets it: a consumer repository under act.

Builds a small repository of its own (git, one commit per change) in --work-dir/consumer:

  models/affine.onnx, models/prelu.onnx   MatMul+Relu and PRelu: IREE passes them
  models/binarizer.onnx                  ai.onnx.ml Binarizer: IREE 3.13's llvm-cpu fails
                                         to compile it ("failed to legalize operation
                                         'torch.operator' ... onnx.Binarizer")
  expectations/llvm-cpu.toml             declares that failure
  .github/workflows/conformance.yml      `uses: local/iree-conformance@<this commit>`, which
                                         devtools/act_local.py serves from this checkout
  ci/__init__.py, ci/__main__.py,        modules of the consumer's own named as the action's
  cache_tools.py, pytest.py              (issue 47): each prints a marker line and exits 97
                                         if run; the action must run its own code only

and runs that workflow with devtools/act_local.py (--repo-dir, --action) four times on one
cache server:

  1. green, cold: the failure is declared; the artifact store is saved; none of the
     consumer's own ci/, cache_tools.py or pytest.py ran (no marker line in the log);
  2. green, warm: the store comes back from the cache server and nothing is imported or
     compiled (devtools/check_warm_run.py on the results the action uploaded);
  3. red: the declaration removed, the job fails with an error annotation at
     models/binarizer.onnx (where GitHub shows it in the user's pull request);
  4. bad input: onnx-dir names no folder; the job fails before the install with one
     `error: onnx-dir ...` line in the step log.

The models are made with onnx.helper here (no third-party files). Exit status 0 when all
four hold, 1 when one does not, 8 on a setup problem.

  python -m devtools.consumer_repo_proof --work-dir .ci-cache/consumer-proof --summary proof.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ci._common import REPO_ROOT, CIError, run_main

ACTION = "local/iree-conformance"
FAILING_MODEL = "models/binarizer.onnx"
DECLARATION = (
    '"onnx-dir/binarizer.onnx" = { expect = "fail-compile", reason = "IREE has no lowering for '
    "ai.onnx.ml Binarizer: failed to legalize operation 'torch.operator' onnx.Binarizer\" }\n"
)
WORKFLOW = """\
name: Conformance
on:
  push:
  pull_request:
permissions:
  contents: read
  actions: read # cache-tools plan reads the repository's cache usage
jobs:
  iree:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - id: conformance
        uses: {action}@{sha}
        with:
          onnx-dir: models
          expectations-dir: expectations
      - name: Counts
        if: always()
        env:
          PASSED: ${{{{ steps.conformance.outputs.pass }}}}
          FAILED: ${{{{ steps.conformance.outputs.fail }}}}
          XFAILED: ${{{{ steps.conformance.outputs.xfail }}}}
        run: echo "pass $PASSED, fail $FAILED, xfail $XFAILED"
"""


# The consumer's own modules named as the action's: run, each says so and fails.
SHADOWS = ("ci/__init__.py", "ci/__main__.py", "cache_tools.py", "pytest.py")
SHADOW_MARKER = "consumer-proof: the consumer's own module ran"
SHADOW = f"import sys\nprint({SHADOW_MARKER!r}, __file__, flush=True)\nsys.exit(97)\n"

MISSING = "no-such-models"
MISSING_WORDS = (
    "no such folder in the repository; set onnx-dir to the folder holding your ONNX models (.onnx)"
)


def log_messages(log: Path) -> list[str]:
    """The step output lines of act's JSON log."""
    out = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("raw_output"):
            out += [text.strip() for text in str(record.get("msg", "")).splitlines()]
    return out


def make_models(folder: Path) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)

    def tensor(name: str, shape: list[int]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    def save(name: str, node: list[onnx.NodeProto], shape_in, shape_out, inits=(), ml=False):
        graph = helper.make_graph(
            node, name, [tensor("x", shape_in)], [tensor("y", shape_out)], list(inits)
        )
        opsets = [helper.make_opsetid("", 17)] + (
            [helper.make_opsetid("ai.onnx.ml", 1)] if ml else []
        )
        model = helper.make_model(graph, opset_imports=opsets, producer_name="consumer-proof")
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, str(folder / f"{name}.onnx"))

    weights = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "w")
    save(
        "affine",
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        [2, 4],
        [2, 3],
        [weights],
    )
    slope = numpy_helper.from_array(np.array([0.1, 0.2, 0.3, 0.4], np.float32), "slope")
    save("prelu", [helper.make_node("PRelu", ["x", "slope"], ["y"])], [2, 3, 4], [2, 3, 4], [slope])
    save(
        "binarizer",
        [helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.5)],
        [3, 4],
        [3, 4],
        ml=True,
    )


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=proof", "-c", "user.email=proof@localhost", *args],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise CIError(f"git {' '.join(args)} in {repo}: {result.stderr.strip()}")
    return result.stdout.strip()


def this_commit() -> str:
    return git(REPO_ROOT, "rev-parse", "HEAD")


def manifest(declared: bool) -> str:
    head = "# Known IREE failures of this repository's models (llvm-cpu).\n[xfail]\n"
    return head + (DECLARATION if declared else "")


def make_consumer(repo: Path, sha: str) -> None:
    import shutil

    if repo.exists():
        shutil.rmtree(repo)
    make_models(repo / "models")
    (repo / "expectations").mkdir()
    (repo / "expectations" / "llvm-cpu.toml").write_text(
        manifest(True), encoding="utf-8", newline="\n"
    )
    for name in SHADOWS:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(SHADOW, encoding="utf-8", newline="\n")
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "conformance.yml").write_text(
        WORKFLOW.format(action=ACTION, sha=sha), encoding="utf-8", newline="\n"
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "models, their expectations and the conformance workflow")


def action_source(dest: Path) -> Path:
    """This checkout's files as GitHub would serve the action at a commit: tracked and
    untracked files, not the ignored ones (act copies a --local-repository folder whole,
    .venv included)."""
    import shutil

    if dest.exists():
        shutil.rmtree(dest)
    listed = git(REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def act_run(
    repo: Path, work: Path, sha: str, action: Path, summary: Path, first: bool
) -> tuple[int, dict[str, Any]]:
    argv = [
        sys.executable,
        "-m",
        "devtools.act_local",
        "conformance.yml",
        "--repo-dir",
        str(repo),
        "--action",
        f"{ACTION}@{sha}={action}",
        "--python",
        "3.12",  # the action's own setup-python (its python-version input's default)
        "--no-tiny-zoo",
        "--quiet",
        "--work-dir",
        str(work),
        "--summary",
        str(summary),
    ]
    if not first:
        argv.append("--reuse-tool-cache")  # the first run made it; a venv each time is slow
    code = subprocess.run(argv, cwd=REPO_ROOT).returncode
    if not summary.is_file():
        raise CIError(f"act_local wrote no summary ({summary}); it exited {code}")
    return code, json.loads(summary.read_text(encoding="utf-8"))


def check(problems: list[str], ok: bool, message: str) -> None:
    print(("  ok   " if ok else "  FAIL ") + message, flush=True)
    if not ok:
        problems.append(message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work-dir", default=str(REPO_ROOT / ".ci-cache" / "consumer-proof"))
    parser.add_argument("--summary", help="write the three runs' figures and checks here (JSON)")
    args = parser.parse_args(argv)
    work = Path(args.work_dir).resolve()
    repo = work / "consumer"
    act_work = work / "act"
    sha = this_commit()
    make_consumer(repo, sha)
    action = action_source(work / "action")
    problems: list[str] = []
    runs: list[dict[str, Any]] = []

    def run(label: str) -> tuple[int, dict[str, Any]]:
        print(f"== consumer repository: {label}", flush=True)
        begun = time.monotonic()
        code, summary = act_run(
            repo, act_work, sha, action, work / f"{len(runs) + 1}-summary.json", not runs
        )
        runs.append(
            {
                "run": label,
                "exit": code,
                "seconds": round(time.monotonic() - begun, 1),
                "act_seconds": summary.get("wall_seconds"),
                "caches": summary.get("caches"),
            }
        )
        return code, summary

    code, first = run("1 green, cold (the failure declared)")
    check(problems, code == 0, f"run 1 is green (act_local exit {code})")
    log = act_work / "runs" / f"{first.get('run_id', 0):03d}" / "act.log"
    ran = [m for m in log_messages(log) if SHADOW_MARKER in m]
    check(
        problems,
        log.is_file() and not ran,
        f"run 1 ran the action's own code, none of the consumer's {', '.join(SHADOWS)} ({ran})",
    )

    code, second = run("2 green, warm (same cache server)")
    check(problems, code == 0, f"run 2 is green (act_local exit {code})")
    warm = subprocess.run(
        [
            sys.executable,
            "-m",
            "devtools.check_warm_run",
            "--summary",
            str(work / "2-summary.json"),
            "--restored",
            "iree-artifacts",
            "--artifact",
            "iree-conformance-report-*",
        ],
        cwd=REPO_ROOT,
    ).returncode
    check(problems, warm == 0, "run 2 restored the artifact store and compiled nothing")

    (repo / "expectations" / "llvm-cpu.toml").write_text(
        manifest(False), encoding="utf-8", newline="\n"
    )
    git(repo, "commit", "-q", "-am", "drop the Binarizer declaration")
    code, third = run("3 red (the declaration removed)")
    check(problems, code == 1, f"run 3 is red (act_local exit {code}, 1 expected)")
    at_model = [
        a
        for a in third.get("annotations") or []
        if a.get("level") == "error" and a.get("file") == FAILING_MODEL
    ]
    check(problems, bool(at_model), f"run 3 has an error annotation at {FAILING_MODEL}")

    # Bad input fails in the first seconds, before the install, with one line.
    workflow = repo / ".github" / "workflows" / "conformance.yml"
    workflow.write_text(
        workflow.read_text(encoding="utf-8").replace("onnx-dir: models", f"onnx-dir: {MISSING}"),
        encoding="utf-8",
        newline="\n",
    )
    git(repo, "commit", "-q", "-am", "point onnx-dir at a folder that does not exist")
    code, fourth = run("4 bad input (onnx-dir names no folder)")
    log = act_work / "runs" / f"{fourth.get('run_id', 0):03d}" / "act.log"
    lines = [m for m in log_messages(log) if m.startswith("error: ")]
    check(problems, code == 1, f"run 4 is red (act_local exit {code}, 1 expected)")
    check(
        problems,
        lines == [f"error: onnx-dir '{MISSING}': " + MISSING_WORDS],
        f"run 4's step log has the one error line (found {lines})",
    )
    failed = [
        step["name"]
        for job in fourth["jobs"]
        for step in job["steps"]
        if step["result"] == "failure"
    ]
    check(problems, bool(failed), f"run 4 stopped at a failed step ({failed})")

    if args.summary:
        Path(args.summary).write_text(
            json.dumps({"runs": runs, "problems": problems}, indent=1) + "\n",
            encoding="utf-8",
            newline="\n",
        )
    for r in runs:
        print(f"  {r['run']}: exit {r['exit']}, {r['seconds']} s (act {r['act_seconds']} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
