"""The reference interpreter through the suite: pytest conformance --reference interpreter on
three bundled cases."""

import pytest

pytest.importorskip(
    "jaxlib", reason="the stablehlo-ref extra (jax, jaxlib) provides the interpreter"
)


pytest.importorskip(
    "jaxlib", reason="the stablehlo-ref extra (jax, jaxlib) provides the interpreter"
)


def test_reference_interpreter_option_rechecks_the_bundled_corpus(tmp_path, run_conformance):
    result = run_conformance(
        "--reference",
        "interpreter",
        "-k",
        "seed_cos_sin or seed_softmax_4 or reduce_argmax",
        "--store-dir",
        str(tmp_path),
    )
    result.assert_outcomes(passed=3)
