"""``iree-conformance check-model PATH``: one model, one command, the suite's verdict.

The model is the case ``--onnx-dir`` would make of it (its folder's ``models.toml``,
its ``<stem>.inputs.toml``, ``test_data_set_N`` beside it, ``--dim``/``--input-shape``),
run through the same pipeline and artifact store as ``pytest conformance``. It prints
the chosen inputs, every stage and its time, the opset conversion the import made (with
the ``iree-import-onnx`` line that reproduces it), the dims the shape rule guessed (and
how to pin them), the rule that judged each output, the verdict, the median time against
onnxruntime's, and on a numerics failure the first diverging node. ``--dispatches`` lists
the dispatches IREE made of it; ``--reduce`` cuts a failing model down
(cli/reduce.py, docs/reducing.md).

Exit status (``EXIT_HELP``, from the one table in common/errors.py): 0 pass; 1 IREE failed
(numerics, or an error, crash or timeout at prepare, import, compile, load or run); 9
(``EXIT_UNJUDGED``) when the harness cannot judge the model (no usable reference: the
message says what to specify; a skip; a fault of the machine's, ``common/machine_faults``); 2 for bad arguments; 3 for a malformed spec file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    EXIT_UNJUDGED,
    ConfigurationError,
    exit_help,
)
from iree_conformance.common.timing import DEFAULT_TIMING_BUDGET, parse_timing_budget
from iree_conformance.common.vocabulary import Status
from iree_conformance.model.outcome import NOT_JUDGED, STAGE_ORDER, Outcome
from iree_conformance.model.preparation import bare_defaults_line
from iree_conformance.report.speed import benchmark_lines

__all__ = ["EXIT_HELP", "add_arguments", "run"]

# The command's help text (cli/main.py): its own 0 and 1, then the table's meanings.
EXIT_HELP = exit_help(
    {0: "pass", 1: "IREE failed (numerics, or an error, crash or timeout at a stage)"},
    EXIT_CONFIGURATION,
    EXIT_MANIFEST,
    EXIT_UNJUDGED,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from iree_conformance.suites.run_options import dim_size, input_shape

    p.add_argument(
        "model",
        help="the .onnx file, a .pt2 file (an ExportedProgram saved by torch.export.save), "
        "or a folder saved by a transformers causal LM's save_pretrained (a generation check: "
        "docs/generation.md)",
    )
    p.add_argument(
        "--tokens",
        type=int,
        default=None,
        metavar="N",
        help="a causal LM folder: greedy tokens to generate (default 32)",
    )
    p.add_argument(
        "--prompt-ids",
        type=_prompt_ids,
        default=None,
        metavar="ID,ID,...",
        help="a causal LM folder: the prompt's token ids (default: the --prompt text through "
        "the folder's tokenizer, else 8 seeded ids)",
    )
    p.add_argument(
        "--prompt",
        default=None,
        metavar="TEXT",
        help="a causal LM folder with a tokenizer: the prompt as text (default 'The quick brown fox')",
    )
    p.add_argument(
        "--target", default="llvm-cpu", help="target from targets.toml (default llvm-cpu)"
    )
    p.add_argument("--targets", help="targets file (default: conformance/targets.toml)")
    p.add_argument("--dim", action="append", default=[], type=dim_size, metavar="NAME=SIZE")
    p.add_argument(
        "--input-shape", action="append", default=[], type=input_shape, metavar="INPUT=SHAPE"
    )
    p.add_argument(
        "--dynamic",
        action="store_true",
        help="compile the model as exported, symbolic dims and all",
    )
    p.add_argument(
        "--benchmark",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="on a pass, time IREE and onnxruntime interleaved and print Benchee's table, "
        "compile, load and memory figures (default: on, within --timing-budget; given "
        "explicitly, or with --timing-runs N: every figure, whatever it costs; docs/speed.md)",
    )
    p.add_argument(
        "--timing-runs",
        type=int,
        default=None,
        help="the minimum count of timed samples (default 20; 0: no timing)",
    )
    p.add_argument(
        "--timing-budget",
        type=parse_timing_budget,
        default=None,
        metavar="FRACTION|full",
        help="the most the figures may add, as a fraction of the untimed run (such as "
        f"{DEFAULT_TIMING_BUDGET}, pytest conformance's default: a reference never timed here "
        "is left out, when --benchmark or --timing-runs is not given), or 'full' (the default "
        "for one model: every figure, up to 10 s)",
    )
    p.add_argument("--store-dir", help="artifact store (default: as pytest conformance)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the store")
    p.add_argument("--json", help="also write the Outcome as JSON here")
    p.add_argument("--no-bisect", action="store_true", help="on a numerics failure, do not bisect")
    p.add_argument(
        "--dispatches",
        action="store_true",
        help="list the dispatches IREE made of the model (one more compile, "
        "--iree-scheduling-dump-statistics-format=verbose)",
    )
    p.add_argument(
        "--reduce",
        action="store_true",
        help="on an import, compile or crash failure, cut the model to the smallest subgraph "
        "that fails the same way; on numerics, run the first diverging node alone "
        "(docs/reducing.md)",
    )
    from iree_conformance.cli.reducing import add_budget_argument

    add_budget_argument(p)
    p.add_argument(
        "--reduce-dir",
        help="where --reduce writes reduced/ (default: the --repro-dir folder's reduced/, "
        "a reproducer of its own; without --repro-dir ./<model stem>-reduced)",
    )
    p.add_argument(
        "--repro-dir",
        help="on a failure, write its reproducer folder (IREE's own commands and files, verified) "
        "under DIR/<target>/<case id> (docs/reproducers.md)",
    )


def _prompt_ids(text: str) -> tuple[int, ...]:
    try:
        ids = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give token ids as 1,2,3") from None
    if not ids or min(ids) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more non-negative token ids")
    return ids


def _generation_case(args: argparse.Namespace, path: Path):
    from iree_conformance.frontends.generation.spec import DEFAULT_TOKENS, is_causal_lm_folder
    from iree_conformance.suites.llm import GenerationCase, missing_reason

    if not is_causal_lm_folder(path):
        raise ConfigurationError(
            f"{path}: a folder is checked only when it holds a causal language model saved by "
            "transformers' save_pretrained (config.json naming a *ForCausalLM architecture)"
        )
    if not any(path.glob("*.safetensors")):
        raise ConfigurationError(
            f"{path}: no *.safetensors file: save the model with save_pretrained(..., "
            "safe_serialization=True); pickled checkpoints are not loaded (they run code)"
        )
    missing = missing_reason()
    if missing:
        raise ConfigurationError(f"{path}: a generation check needs {missing}")
    tokens = DEFAULT_TOKENS if args.tokens is None else args.tokens
    if tokens < 1:
        raise ConfigurationError(f"--tokens {tokens}: give 1 or more")
    return GenerationCase(
        case_id=f"llm/dir/{path.resolve().name}",
        suite="llm",
        kind="mlir",
        source_path=path.resolve() / "config.json",
        reference_name="transformers-generate",
        folder=str(path.resolve()),
        tokens=tokens,
        prompt_ids=args.prompt_ids,
        prompt=args.prompt,
        timing=args.benchmark is not False,
    )


def _case(args: argparse.Namespace):
    from iree_conformance.frontends.onnx.specs import SpecError
    from iree_conformance.suites.model_case import DYNAMIC_SUFFIX
    from iree_conformance.suites.onnx_dir import model_cases
    from iree_conformance.suites.run_options import RunOptions

    path = Path(args.model)
    if path.is_dir():
        return _generation_case(args, path)
    # reduce's arguments have none of them: only check-model takes a folder
    if any(getattr(args, name, None) is not None for name in ("tokens", "prompt_ids", "prompt")):
        raise ConfigurationError(
            f"{path}: --tokens, --prompt-ids and --prompt are for a causal LM folder"
        )
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such model file")
    if path.suffix == ".pt2":
        return _pt2_case(args, path)

    options = RunOptions(dims=tuple(args.dim), input_shapes=tuple(args.input_shape))
    cases = model_cases(path.resolve(), path.resolve().parent, options)
    if args.dynamic:
        found = [c for c in cases if c.case_id.endswith(DYNAMIC_SUFFIX)]
        if not found:
            raise ConfigurationError(
                f"{path}: the model has no symbolic dim; --dynamic is the same program"
            )
        case = found[0]
    else:
        case = cases[0]
    problem = getattr(case, "problem", None)
    if problem:  # the file or its spec is broken: bad input, not a verdict
        raise (
            SpecError(problem)
            if getattr(case, "problem_is_spec", False)
            else ConfigurationError(problem)
        )
    # The command line names this one model: an input or dim it lacks is an error, as
    # in its spec files.
    from iree_conformance.frontends.onnx.inputs import specs_from_model
    from iree_conformance.suites.model_case import load_model_header

    header = load_model_header(path)
    _check_external_data(header, path)
    specs = specs_from_model(header)
    names = [s.name for s in specs]
    dims = {d for s in specs for d in s.shape if isinstance(d, str) and d not in ("", "?")}
    for spec in (getattr(case, "input_spec", None), getattr(case, "cli_spec", None)):
        if spec is not None and not spec.empty:
            spec.check_against(names, dims, str(path))
    # an input read from a data set is not drawn
    static = not getattr(case, "data_set_dirs", ())
    _check_sizes(specs, dict(args.dim), dict(args.input_shape), static)
    return case


def _check_external_data(header, path: Path) -> None:
    """External data outside the model's folder (``..``, an absolute path, a symlink out),
    missing or shorter than declared is bad input: exit 2 before anything is read."""
    from iree_conformance.frontends.onnx.prepare import PrepareError, external_data_bytes

    try:
        external_data_bytes(header, path.resolve().parent, str(path))
    except PrepareError as e:
        raise ConfigurationError(str(e)) from None


def _check_sizes(
    specs, dims: dict[str, int], shapes: dict[str, tuple[int, ...]], static: bool = True
) -> None:
    """Inputs too large to draw, at the sizes given (--dim, --input-shape) or at the
    model's static shape, are exit 2 before anything is allocated (other symbolic dims 1)."""
    import onnx

    from iree_conformance.frontends.onnx.model_inputs import InputTooLarge, check_input_size

    for s in specs:
        if s.name in shapes:
            shape, why = list(shapes[s.name]), " (the sizes given on the command line)"
        elif any(isinstance(d, str) and d in dims for d in s.shape):
            shape = [dims.get(d, 1) if isinstance(d, str) else (d or 1) for d in s.shape]
            why = " (the sizes given on the command line)"
        elif static:
            shape = [d if isinstance(d, int) and d > 0 else 1 for d in s.shape]
            why = " (the model's own shape)"
        else:
            continue
        try:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(s.elem_type)
        except Exception:  # noqa: BLE001 - a type without a numpy dtype: nothing to size
            continue
        try:
            check_input_size(s.name, shape, dtype, why)
        except InputTooLarge as e:
            raise ConfigurationError(str(e)) from None


def _pt2_case(args: argparse.Namespace, path: Path):
    """The torch case of an ExportedProgram file; a file that cannot be checked (not an
    ExportedProgram, damaged, from another torch, unusable inputs) is bad input."""
    from iree_conformance.common.store import default_store_dir
    from iree_conformance.frontends.torch_export.folder import missing_reason
    from iree_conformance.frontends.torch_export.pt2 import Pt2Error
    from iree_conformance.suites.torch import pt2_case

    for flag, given in (("--dim", args.dim), ("--input-shape", args.input_shape)):
        if given:
            raise ConfigurationError(
                f"{path}: {flag} is for ONNX models; a .pt2 runs on the example inputs saved "
                "with it (torch.export.save keeps them)"
            )
    if args.dynamic:
        raise ConfigurationError(
            f"{path}: --dynamic is for ONNX models; a .pt2 is compiled as exported"
        )
    missing = missing_reason()
    if missing:
        raise ConfigurationError(f"{path}: checking a .pt2 needs torch: {missing}")
    store = None if args.no_cache else Path(args.store_dir or default_store_dir())
    case = pt2_case(path.resolve(), store)
    try:
        case.export()
    except Pt2Error as e:
        raise ConfigurationError(str(e)) from None
    return case


#: Shape-rule rules that a person did not choose (``onnx.shape_policy``).
_GUESSED = ("batch", "image", "sequence", "other")


def opset_lines(info: dict[str, Any], model: str) -> list[str]:
    """The opset conversion the import made, and the command that reproduces it."""
    old, new = info.get("opset_from"), info.get("opset_to")
    if old is None or new is None or old == new:
        return []
    return [
        f"opset: the model's opset {old} was converted to {new} before import "
        "(onnx.version_converter); IREE imported the converted model",
        f"  to reproduce: iree-import-onnx {model} --opset-version {new} -o model.mlir",
    ]


def preparation_lines(info: dict[str, Any]) -> list[str]:
    """The harness's other steps beyond the file as given (the opset's are above), and
    where IREE's tools at their defaults fail what the documented flow passes."""
    steps = [s for s in info.get("preparation") or [] if not s.startswith("opset ")]
    bare = bare_defaults_line(info)
    return [f"harness: {s}" for s in steps] + ([f"bare defaults: {bare}"] if bare else [])


def large_model_lines(info: dict[str, Any]) -> list[str]:
    """How a model over 2 GiB was imported, and where its weights are."""
    large, params = info.get("large_model"), info.get("parameters")
    if not isinstance(large, dict):
        return []
    rss = large.get("import_peak_rss_bytes")
    lines = [
        f"large model: {large.get('bytes', 0) / 2**30:.2f} GiB with its external data, "
        "imported by "
        + " ".join(large.get("import_line") or ["iree-import-onnx"])
        + (f" (peak RSS {rss / 2**20:.0f} MiB)" if rss else "")
    ]
    if isinstance(params, dict):
        lines.append(
            f"  weights: {params.get('file')} ({params.get('bytes', 0) / 2**30:.2f} GiB), "
            f"run with --parameters={params.get('scope', 'model')}=FILE"
        )
    return lines


def guessed_dim_lines(info: dict[str, Any], model: str) -> list[str]:
    """The dims the shape rule guessed, and how to pin them (``--dim``, a spec)."""
    inputs = info.get("inputs") or {}
    dims = {k: d for k, d in (inputs.get("dims") or {}).items() if d.get("rule") in _GUESSED}
    if not dims:
        return []
    listed = ", ".join(f"{k} = {d['size']} ({d['rule']} rule)" for k, d in dims.items())
    named = {k: d for k, d in dims.items() if "[" not in k}
    pins = [f"--dim {k}=SIZE" for k in named]
    unnamed = sorted({k.split("[")[0] for k in dims if "[" in k})
    shapes = inputs.get("shapes") or {}
    pins += [
        f"--input-shape {n}={'x'.join(map(str, shapes.get(n, []))) or 'SHAPE'}" for n in unnamed
    ]
    stem = Path(model).with_suffix(".inputs.toml").name
    spec = "[dims] " + ", ".join(f"{k} = SIZE" for k in named) if named else ""
    spec += (" " if spec else "") + " ".join(f'[inputs.{n}] shape = "..."' for n in unnamed)
    return [
        f"guessed dims (the shape rule chose them; the model does not say): {listed}",
        f"  to pin them: {' '.join(pins)}, or in {stem} beside the model: {spec.strip()}",
    ]


def rule_lines(metrics: dict[str, Any]) -> list[str]:
    """Which comparison rule judged each output."""
    lines = []
    for i, o in enumerate(metrics.get("outputs") or []):
        rule = o.get("rule")
        if rule is None:
            continue
        detail = f": {o['grid']}" if o.get("grid") else ""
        if o.get("max_grid_steps"):
            detail += f" (found {o['max_grid_steps']:g} steps apart)"
        lines.append(f"output {i}: judged by the {rule} rule{detail}")
    scope = metrics.get("rel_error_scope")
    if scope and metrics.get("compared_elements"):
        lines.append(
            f"max abs error {metrics.get('max_abs_error', 0.0):.3g}, max rel error "
            f"{metrics.get('max_rel_error', 0.0):.3g} (rel over {scope})"
        )
    return lines


def _short(line: str) -> str:
    """A line of the inputs block, cut as diagnostics are (no line over 1 KB)."""
    from iree_conformance.common.diagnostics import KEPT_CHARS, MAX_LINE_CHARS

    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:KEPT_CHARS]} ... [{len(line) - KEPT_CHARS} more characters]"


def _print_outcome(outcome: Outcome, out, model: str = "MODEL.onnx") -> None:
    from iree_conformance.frontends.generation.report import generation_lines

    inputs = outcome.info.get("inputs", {})
    if inputs.get("shapes"):
        shapes = ", ".join(
            f"{k} {'x'.join(map(str, v)) or 'scalar'}" for k, v in inputs["shapes"].items()
        )
        if inputs.get("source"):
            source = inputs["source"]
        elif inputs.get("data_sets"):
            source = "from " + ", ".join(Path(d).name for d in inputs["data_sets"])
        else:
            source = f"seed {inputs.get('seed')}"
        print(f"inputs ({inputs.get('compiled', 'static')} compile, {source}): {shapes}", file=out)
        for d in inputs.get("other_shapes", []):
            print(f"  {Path(d).name}: other shapes, run as exported (--dynamic)", file=out)
        for key, d in inputs.get("dims", {}).items():
            why = f": {d['why']}" if d.get("why") else ""
            print(f"  dim {key} = {d['size']} ({d['rule']}{why})", file=out)
        for name, how in inputs.get("values", {}).items():
            print(f"  {name}: {how}", file=out)
        for t in inputs.get("tried", []):
            print(_short(f"  tried {t['shapes']}: {t['why']}"), file=out)
    for stage in ("inputs", "store", *STAGE_ORDER):
        if stage in outcome.stage_times:
            print(f"{stage:>10}  {outcome.stage_times[stage]:8.3f} s", file=out)
    for line in (
        opset_lines(outcome.info, model)
        + preparation_lines(outcome.info)
        + large_model_lines(outcome.info)
        + guessed_dim_lines(outcome.info, model)
        + rule_lines(outcome.metrics)
        + generation_lines(outcome.info)
    ):
        print(line, file=out)
    verdict = outcome.status if outcome.status != Status.ERROR else f"error at {outcome.stage}"
    if outcome.not_judged:  # the harness's, not IREE's (model/outcome.not_judged)
        verdict = f"{NOT_JUDGED} ({verdict}: no verdict on IREE, exit {EXIT_UNJUDGED})"
    print(f"verdict: {verdict}" + (f" ({outcome.reason})" if outcome.reason else ""), file=out)
    for line in outcome.diagnostics[:20]:
        print(f"  {line}", file=out)
    if outcome.info.get("diagnostics_file"):
        print(f"  full diagnostics: {outcome.info['diagnostics_file']}", file=out)
    bench = outcome.metrics.get("benchmark")
    if isinstance(bench, dict):
        print("", file=out)
        for line in benchmark_lines(bench):
            print(line, file=out)
    elif outcome.info.get("benchmark"):
        print(outcome.info["benchmark"], file=out)


def _known_issue_line(outcome: Outcome, conformance_dir: Path, out) -> None:
    """ "matches iree-org/iree#N" when the failure's signature is a known issue."""
    from iree_conformance.expectations.known_issues import FILE_NAME, issue_of, load_known_issues
    from iree_conformance.report.model import first_line

    if outcome.status in (Status.PASS, Status.SKIP):
        return
    record = outcome.to_json()
    issue = issue_of(record, load_known_issues(conformance_dir / FILE_NAME), first_line(record))
    if issue:
        print(f"matches {issue} (a known issue: same stage and first error line)", file=out)


def _write_repro(
    case, target, outcome, store, conformance_dir: Path, root: Path, out
) -> Path | None:
    """The failure's reproducer folder under ``root``; None when none is written."""
    from iree_conformance.repro import make
    from iree_conformance.repro.command import report
    from iree_conformance.repro.lookup import folder_for

    why_not = make.not_reproducible_reason(outcome)
    if why_not is not None:
        print(f"no reproducer written: {why_not}", file=out)
        return None
    folder = folder_for(root, target.name, case.case_id)
    record = make.make_for_case(
        case, target, outcome, folder, store, conformance_dir, make.ReproOptions(force=True)
    )
    report(record, folder, out)
    return folder


def _reduce_into(case, target, outcome, folder: Path, worker, args, out) -> None:
    """--reduce with --repro-dir: the reduced program's own reproducer folder in the
    whole one's ``reduced/`` (repro/reduced.py), not in the working folder."""
    from iree_conformance.repro.reduced import progress_bar, write_reduced_repro

    update, close = progress_bar()
    try:
        found = write_reduced_repro(
            case, target, outcome, folder, worker, args.reduce_budget, None, update
        )
    finally:
        close()
    print("", file=out)
    for key in ("summary", "note"):
        if found.get(key):
            print(found[key], file=out)
    if "reproduced" in found:
        verdict = {True: "reproduced", False: "NOT reproduced", None: "not verified"}
        print(f"{folder / 'reduced'}: {verdict[found['reproduced']]}: {found.get('why')}", file=out)


def exit_status(outcome: Outcome) -> int:
    from iree_conformance.cli.reducing import unjudged

    if outcome.status == Status.PASS:
        return 0
    if unjudged(outcome):
        return EXIT_UNJUDGED
    return 1


def _timing_runs(args: argparse.Namespace) -> int:
    from iree_conformance.engine.benchmark import DEFAULT_MIN_RUNS

    if args.benchmark is False:
        return 0
    return DEFAULT_MIN_RUNS if args.timing_runs is None else max(args.timing_runs, 0)


def _timing_budget(args: argparse.Namespace) -> float | None:
    """--timing-budget bounds the default timing; --benchmark or --timing-runs N asked
    for the figures: every one (engine/benchmark.timing_budget_for)."""
    from iree_conformance.engine.benchmark import timing_budget_for

    return timing_budget_for(args.timing_runs or 0, args.benchmark, args.timing_budget)


def run(args: argparse.Namespace, targets_path: Path, out=None) -> int:
    import sys

    from iree_conformance.common.diagnostics import cap_outcome_diagnostics
    from iree_conformance.common.store import ArtifactStore, default_store_dir
    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.benchmark import note_untimed
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.verdicts import Bisectable, bisect_numerics
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.model.targets import check_runnable, named_target

    out = out or sys.stdout
    target = named_target(targets_path, args.target)
    check_runnable(target)
    reduce_dir = Path(args.reduce_dir or f"{Path(args.model).stem}-reduced")
    if args.reduce and (args.reduce_dir or not getattr(args, "repro_dir", None)):
        from iree_conformance.cli.reducing import check_output

        check_output(reduce_dir, False)
    case = _case(args)
    print(
        f"{case.case_id.removeprefix('onnx-dir/').removeprefix('torch/pt2/')} on {target.name}",
        file=out,
    )
    store = ArtifactStore(None if args.no_cache else Path(args.store_dir or default_store_dir()))
    worker = WorkerClient(store.root)
    try:
        # A generation check times itself (prefill and decode against torch eager).
        timing_runs = 0 if case.suite == "llm" else _timing_runs(args)
        outcome, _ = run_case(
            Attempt(
                case,
                target,
                AttemptSettings(timing_runs=timing_runs, timing_budget=_timing_budget(args)),
            ),
            worker,
        )
        note_untimed(outcome, timing_runs)
        if outcome.status == Status.FAIL and not args.no_bisect and isinstance(case, Bisectable):
            outcome.diagnostics.append(bisect_numerics(case, target, worker))
        cap_outcome_diagnostics(outcome, store.root)
        _print_outcome(outcome, out, args.model)
        _known_issue_line(outcome, targets_path.parent, out)
        if args.dispatches:
            for line in dispatch_lines(case, target, worker):
                print(line, file=out)
        reduce_here = args.reduce and outcome.status not in (Status.PASS, Status.SKIP)
        repro_dir = getattr(args, "repro_dir", None) if exit_status(outcome) == 1 else None
        if reduce_here and not (repro_dir and not args.reduce_dir):
            from iree_conformance.cli.reducing import run_reduction

            print("", file=out)
            run_reduction(case, target, worker, args, reduce_dir, out, outcome)
        if repro_dir:
            folder = _write_repro(
                case, target, outcome, store, targets_path.parent, Path(repro_dir), out
            )
            if folder is not None and reduce_here and not args.reduce_dir:
                _reduce_into(case, target, outcome, folder, worker, args, out)
    except KeyboardInterrupt:
        worker.close(wait=False)  # Ctrl-C reached the worker too: no wait for it
        raise
    finally:
        worker.close()
    if args.json:
        data: dict[str, Any] = outcome.to_json()
        Path(args.json).write_text(
            json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8", newline="\n"
        )
    return exit_status(outcome)


def dispatch_lines(case, target, worker) -> list[str]:
    """The model's dispatches, from one more compile that writes IREE's verbose scheduling
    statistics (the suite's compiles write only the counts: ``metrics.compile_stats``)."""
    import dataclasses
    import tempfile

    from iree_conformance.engine.attempt import Attempt, AttemptSettings
    from iree_conformance.engine.pipeline import build_job
    from iree_conformance.engine.worker.compiler import STATS_FLAG, dispatch_names

    with tempfile.TemporaryDirectory(prefix="iree-conformance-dispatches-") as tmp:
        path = Path(tmp) / "statistics.txt"
        job = build_job(Attempt(case, target, AttemptSettings(compile_only=True, alone=True)), [])
        flags = (
            *job.compile_flags,
            "--iree-scheduling-dump-statistics-format=verbose",
            f"{STATS_FLAG}={path}",
        )
        result = worker.execute(dataclasses.replace(job, compile_flags=flags))
        if result.status != Status.PASS:
            first = next((d for d in result.diagnostics if d.strip()), "")
            return [f"dispatches: none listed, the compile failed at {result.stage}: {first}"]
        try:
            names = dispatch_names(path.read_text(encoding="utf-8"))
        except OSError as e:
            return [f"dispatches: IREE wrote no statistics ({e})"]
    lines = [f"dispatches ({len(names)}):"]
    lines += [f"  {i}: {name}" for i, name in enumerate(names)]
    return lines
