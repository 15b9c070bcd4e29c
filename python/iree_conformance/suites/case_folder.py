"""What the suites of Python case files share (``jax``, ``torch``): the bundled folder under
its floor, a user's folders (``--jax-dir``, ``--torch-dir``), and the cases a listing gives
when it is a skip or an error. The listing and the exports are
``frontends/case_folder.py``'s; each suite makes its own case of a listed one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iree_conformance.common import errors
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.frontends import bounded, case_folder
from iree_conformance.frontends.case_folder import Listed
from iree_conformance.model.cases import Case
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.stablehlo_files import InvalidCase

if TYPE_CHECKING:
    from iree_conformance.suites.run_options import RunOptions


@dataclasses.dataclass(frozen=True)
class FolderSuite:
    """One suite of case files of a kind: its names and the messages that name them."""

    suite: str  # "jax"
    kind: case_folder.FolderKind
    case_prefix: str  # "jax/"
    user_prefix: str  # "jax/ext/"
    label: str  # "JAX": "42 bundled JAX cases"
    option: str  # "--jax-dir"
    write_hint: str  # how a user's file defines cases
    corpus_error: type[errors.CorpusError]
    floor: int  # a broken bundled folder must not look green
    description: str
    option_help: str
    case_type: type[Case]  # a runnable case's class: it takes ``listed`` and ``store_root``
    entry_function: str
    input_type: str
    reference_name: str
    case_fields: Callable[[Listed], dict[str, Any]]  # more of a runnable case's fields
    user_dirs_alone: bool = False  # a user's folders replace the bundled cases (torch)

    def store_root(self, options: RunOptions) -> Path | None:
        return None if options.no_cache else Path(options.store_dir or default_store_dir())


class CaseFolderSuite:
    """The ``Suite`` (suites/base.py) of a ``FolderSuite``, which a subclass names."""

    folder: FolderSuite

    def __init__(self) -> None:
        f = self.folder
        self.name, self.description, self.case_prefix = f.suite, f.description, f.case_prefix
        self.floor = f.floor
        kwargs = {"action": "append", "default": [], "metavar": "DIR", "type": Path}
        self.options = (SuiteOption(f.option, f.option_help, kwargs),)

    def collect(self, context: SuiteContext) -> list[Case]:
        dirs = [Path(d) for d in context.values[self.options[0].dest] or ()]
        return collect(self.folder, context.conformance_dir, context.options, dirs)

    def select(self, cases: list[Case], context: SuiteContext) -> list[Case]:
        """With ``user_dirs_alone`` and a user's folder, that folder's cases only (the
        registry checked the floor on the whole collection first)."""
        if not (self.folder.user_dirs_alone and context.values[self.options[0].dest]):
            return cases
        mine = [c for c in cases if c.case_id.startswith(self.folder.user_prefix)]
        return mine or cases  # none: the suite is one skip (its packages are missing)


def collect(
    spec: FolderSuite, conformance_dir: Path, options: RunOptions, user_dirs: Sequence[Path] = ()
) -> list[Case]:
    """The bundled cases (at least ``spec.floor`` of them) and those of every user folder;
    one skip case when the kind's packages are missing."""
    bounded.set_limits(options.stage_timeouts)  # the limits of imports and exports in a child
    missing = case_folder.missing_reason(spec.kind)
    if missing:
        reason = f"the {spec.suite} suite needs {spec.label}: {missing}"
        return [
            Case(
                f"{spec.case_prefix}{spec.suite}-not-installed",
                spec.suite,
                "mlir",
                skip_reason=reason,
            )
        ]
    store_root = spec.store_root(options)
    store = ArtifactStore(store_root)
    listed = bundled_cases(spec, conformance_dir, store)
    for root in user_dirs:
        listed += user_listed(spec, Path(root), store)
    return [to_case(spec, r, store_root) for r in listed]


def bundled_cases(spec: FolderSuite, conformance_dir: Path, store: ArtifactStore) -> list[Listed]:
    """The cases of conformance/<suite>, at least ``spec.floor`` of them."""
    bundled_dir = conformance_dir / spec.suite
    if not bundled_dir.is_dir():
        raise spec.corpus_error(
            f"{bundled_dir}: no such folder: restore conformance/{spec.suite} from git "
            f"(the bundled {spec.label} cases)"
        )
    bundled = case_folder.list_tree(spec.kind, bundled_dir, spec.case_prefix, store)
    if not any(r.skip for r in bundled) and len(bundled) < spec.floor:
        raise spec.corpus_error(
            f"{bundled_dir}: {len(bundled)} bundled {spec.label} cases, fewer than the floor of "
            f"{spec.floor}; restore conformance/{spec.suite} from git"
        )
    return bundled


def user_listed(spec: FolderSuite, root: Path, store: ArtifactStore) -> list[Listed]:
    if not root.is_dir():
        raise spec.corpus_error(f"{spec.option} {root}: not a directory")
    listed = case_folder.list_tree(spec.kind, root, spec.user_prefix, store)
    if not listed:
        problem = (
            f"{spec.option} {root} holds no case file (*.py, not _*.py): add one that defines "
            f"cases with {spec.write_hint}, or point {spec.option} elsewhere"
        )
        case_id = f"{spec.user_prefix}{root.name}:folder"
        listed = [Listed(case_id, str(root), str(root), "", error=problem)]
    return listed


def to_case(spec: FolderSuite, listed: Listed, store_root: Path | None) -> Case:
    """The listed case: a skip, an error naming its file, or the suite's runnable case."""
    if listed.skip:
        return Case(listed.case_id, spec.suite, "mlir", skip_reason=listed.skip)
    if listed.error:
        # its file: the action keeps a user's broken file's error (ci/action_select.py)
        source = Path(listed.source) if listed.source else None
        return InvalidCase(
            listed.case_id, spec.suite, "mlir", source_path=source, problem=listed.error
        )
    return spec.case_type(
        case_id=listed.case_id,
        suite=spec.suite,
        kind="mlir",
        entry_function=spec.entry_function,
        input_type=spec.input_type,
        reference_name=spec.reference_name,
        listed=listed,  # type: ignore[call-arg]
        store_root=store_root,
        **spec.case_fields(listed),
    )
