"""Element types beyond float32: uint32 random bits, int8 with int32 accumulation, f16, FFT."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from iree_conformance.frontends.jax_export import case

rng = np.random.default_rng(3)


@case(np.asarray(jax.random.PRNGKey(42)))
def threefry_bits(key):
    """Threefry-2x32 random bits (uint32) from a raw key, and the key split."""
    return jax.random.bits(key, (4, 4), dtype=jnp.uint32), jax.random.split(key, 3)


@case(np.asarray(jax.random.PRNGKey(7)), rtol=1e-5, atol=1e-6)
def random_normal_uniform(key):
    """jax.random.uniform and normal: threefry bits turned into floats."""
    k1, k2 = jax.random.split(key)
    return jax.random.uniform(k1, (3, 5)), jax.random.normal(k2, (6,))


@case(
    rng.integers(-128, 128, (8, 16)).astype(np.int8),
    rng.integers(-128, 128, (16, 4)).astype(np.int8),
)
def int8_matmul_int32(a, b):
    """An int8 x int8 matmul accumulating in int32 (preferred_element_type)."""
    return lax.dot(a, b, preferred_element_type=jnp.int32)


@case(
    rng.standard_normal((8, 8)).astype(np.float16),
    rng.standard_normal((8, 8)).astype(np.float16),
    rtol=1e-2,
    atol=1e-2,
)
def float16_matmul_tanh(a, b):
    """float16 matmul and tanh (float16 throughout)."""
    return jnp.tanh(a @ b), (a * b).sum(axis=0)


@case(rng.standard_normal((4, 4)).astype(jnp.bfloat16), rtol=2e-2, atol=2e-2)
def bfloat16_ops(x):
    """bfloat16 arithmetic, and its conversion to float32."""
    return x * x + 1, (x.astype(jnp.float32) * 3).sum()


@case(rng.standard_normal((2, 16)).astype(np.float32), atol=1e-4)
def rfft(x):
    """jnp.fft.rfft of power-of-two length (a complex result, checked as real and imaginary parts)."""
    return jnp.fft.rfft(x, axis=-1)


@case(rng.standard_normal(8).astype(np.float32), atol=1e-4)
def fft_complex(x):
    """jnp.fft.fft of a complex signal (stablehlo.fft of type FFT)."""
    return jnp.fft.fft(x + 1j * x[::-1])


@case(rng.integers(-1000, 1000, (3, 5)).astype(np.int32), np.array([1, 2, 3, 4, 5], np.uint8))
def integer_ops(x, small):
    """Integer division, remainder, shifts and bit operations (int32 and uint8)."""
    return (
        x // 7,
        x % 7,
        jnp.right_shift(x, 2),
        jnp.bitwise_xor(x, 0x55),
        jnp.left_shift(small, 3),
        jnp.bitwise_not(small),
    )
