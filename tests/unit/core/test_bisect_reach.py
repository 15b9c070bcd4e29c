"""--bisect-numerics says plainly where no op-level reference reaches: a self-checking
function (a --stablehlo-dir check file, a JAX case) holds expected values for its checked
values only."""

from iree_conformance.engine.verdicts import Bisectable
from iree_conformance.suites.jax import JaxCase
from iree_conformance.suites.stablehlo_files import CheckCase


def test_a_check_file_function_names_why_it_is_not_bisected():
    case = CheckCase(
        case_id="f/test_add", suite="stablehlo", kind="mlir", entry_function="test_add"
    )
    assert isinstance(case, Bisectable)
    assert case.bisect(None) == (
        "not bisected: no reference reaches the ops of @test_add: its expected values are "
        "the values its author wrote, for the checked values only, written into the program "
        "as constants of its check ops"
    )


def test_a_jax_case_names_xla_as_the_reason():
    case = JaxCase(case_id="jax/x", suite="jax", kind="mlir", entry_function="check_xla")
    assert "are XLA's outputs of the whole jitted function, for the checked values only" in (
        case.bisect(None)
    )
