"""``ISSUE.md``: the fields of IREE's bug template, filled in from a reproducer."""

from __future__ import annotations

import re
from typing import Any

from iree_conformance.common.markdown_escape import md_code, md_text
from iree_conformance.common.vocabulary import Stage
from iree_conformance.repro.spec import ReproSpec
from iree_conformance.repro.versions import version_lines
from iree_conformance.repro.worked_before import find_out_command

#: The template's component, by the stage that failed.
COMPONENTS = {
    "prepare": "Frontends (the ONNX model before import)",
    "import": "Frontends (iree-import-onnx, torch-mlir's ONNX importer)",
    "compile": "Compiler",
    "load": "Runtime",
    "run": "Runtime",
    "compare": "Compiler (wrong results: codegen or a lowering)",
}
#: The most diagnostic lines "What happened?" quotes.
MAX_LINES = 20
#: How to start the reproducer (repro.sh changes to its own folder first: spec.SH_CD).
RUN_LINE = (
    "Run `sh repro.sh` (or `bash repro.sh`, `./repro.sh`, from this folder or any other; "
    "`repro.cmd` on Windows) with IREE's tools on `PATH`: it runs the commands."
)


def fenced(lines: list[str], info: str = "") -> str:
    """A code block no line of the text can close (a fence longer than any backtick run)."""
    text = "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def render(spec: ReproSpec, versions: dict[str, Any], verified: dict[str, Any] | None) -> str:
    stage = spec.stage if spec.kind != "fail-numerics" else Stage.COMPARE
    component = COMPONENTS.get(stage, "Compiler")
    if spec.kind == "crash":
        component = (
            "Compiler (it crashed)"
            if spec.stage in (Stage.IMPORT, Stage.COMPILE)
            else "Runtime (it crashed)"
        )
    shown = spec.diagnostics[:MAX_LINES] or [spec.first_line]
    more = len(spec.diagnostics) - len(shown)
    out = [
        f"# {md_text(spec.case_id)} on {md_text(spec.target)}: {md_text(spec.kind)} at {md_text(spec.stage)}",
        "",
        "### What happened?",
        "",
        f"IREE fails the case {md_code(spec.case_id)} on target {md_code(spec.target)} "
        f"({md_text(spec.kind)} at the {md_text(spec.stage)} stage). The first lines:",
        "",
        fenced(shown),
    ]
    if more > 0:
        out += ["", f"({more} more lines in `repro.json`.)"]
    out += ["", "### Steps to reproduce your issue", ""]
    out += ["With the IREE tools of the versions below on `PATH`, in this folder:", ""]
    steps = []
    if spec.import_line:
        steps.append(" ".join(spec.import_line))
    steps += [
        "iree-compile @compile.flags input.mlir -o module.vmfb",
        "iree-run-module --flagfile=run.flags",
    ]
    out += [fenced(steps, "sh"), ""]
    files = [
        "`compile.flags`: every flag the harness compiled with",
        "`run.flags`: module, device, function, inputs"
        + (", expected outputs and IREE's thresholds" if spec.compares else ""),
    ]
    files.insert(
        0,
        "`model.onnx` and the `iree-import-onnx` line above"
        if spec.import_line
        else "`input.mlir`: the program as compiled, alone",
    )
    if spec.inputs:
        files.append(f"`input_0.npy` .. `input_{len(spec.inputs) - 1}.npy`: the inputs")
    if spec.compares and spec.expected:
        files.append(
            f"`expected_0.npy` .. `expected_{len(spec.expected) - 1}.npy`: the reference's outputs"
        )
    out += [f"- {f}" for f in files]
    out += ["", RUN_LINE, ""]
    out += ["### What component(s) does this issue relate to?", "", component, ""]
    out += ["### Version information", ""] + [
        f"- {md_text(line)}" for line in version_lines(versions)
    ]
    out += ["", "### Additional context", ""]
    out += [f"- {line}" for line in context_lines(spec, verified)]
    return "\n".join(out) + "\n"


def context_lines(spec: ReproSpec, verified: dict[str, Any] | None) -> list[str]:
    ctx = spec.context
    lines = []
    if ctx.get("issue"):
        lines.append(
            f"Matches {md_text(ctx['issue'])} (known issue by signature: stage and first line)."
        )
    if ctx.get("diverging_node"):
        lines.append(f"Numerics bisection (`--bisect-numerics`): {md_text(ctx['diverging_node'])}")
    lines.append(worked_before_line(ctx.get("worked_before"), spec.case_id))
    if verified is not None:
        if verified.get("reproduced"):
            lines.append(
                "Verified: the commands above show the same failure with only IREE's tools on `PATH`."
            )
        elif verified.get("reproduced") is False:
            lines.append(f"Not verified: {md_text(verified.get('why', ''))}")
        else:
            lines.append(f"Not verified here: {md_text(verified.get('why', ''))}")
    lines += [md_text(n) for n in spec.notes]
    lines.append("Made by iree-conformance (`iree-conformance repro`).")
    return lines


def worked_before_line(found: Any, case_id: str) -> str:
    """ "Did it work before?": the case per IREE version from a ``versions`` or ``bisect``
    result (repro/worked_before.py), else how to find out."""
    if not isinstance(found, dict) or not found.get("source"):
        command = find_out_command(case_id)
        return f"Did it work before? Not known (run {md_code(command)} to find out)."
    line = f"Did it work before? {md_text(found.get('text', ''))}"
    if found.get("compare"):  # compare_link made it of two commit hashes: inert
        line += f"; IREE's changes between them: {found['compare']}"
    return line + f" (from {md_code(found['source'])})."
