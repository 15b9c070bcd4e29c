"""JAX transformations of a small model: grad, vmap, jvp."""

import jax
import jax.numpy as jnp
import numpy as np

from iree_conformance.frontends.jax_export import case

rng = np.random.default_rng(4)
PARAMS = {
    "w1": rng.standard_normal((5, 8)).astype(np.float32) * 0.5,
    "b1": np.zeros(8, np.float32),
    "w2": rng.standard_normal((8, 2)).astype(np.float32) * 0.5,
}
X = rng.standard_normal((6, 5)).astype(np.float32)
Y = rng.standard_normal((6, 2)).astype(np.float32)


def model(params, x):
    return jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"]


def loss(params, x, y):
    return jnp.mean((model(params, x) - y) ** 2)


@case(PARAMS, X, Y)
def grad_mlp(params, x, y):
    """jax.value_and_grad of a mean-squared loss over a two-layer tanh MLP's parameters."""
    return jax.value_and_grad(loss)(params, x, y)


@case(PARAMS, X, Y)
def sgd_step(params, x, y):
    """One SGD step: the gradient applied to the parameters (a training step)."""
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


@case(PARAMS, rng.standard_normal((4, 3, 5)).astype(np.float32))
def vmap_model(params, xs):
    """jax.vmap of the model over a leading batch of batches."""
    return jax.vmap(model, in_axes=(None, 0))(params, xs)


@case(PARAMS, X)
def vmap_per_example_grad(params, x):
    """Per-example gradients: jax.vmap of jax.grad."""
    per_example = jax.vmap(jax.grad(lambda p, xi: model(p, xi[None]).sum()), in_axes=(None, 0))
    return per_example(params, x)


@case(rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32))
def jvp_hessian(x, v):
    """Forward mode (jax.jvp) and a Hessian (jax.hessian) of a scalar function."""
    f = lambda z: jnp.sum(jnp.sin(z) * z**2)  # noqa: E731
    _, tangent = jax.jvp(f, (x,), (v,))
    return tangent, jax.hessian(f)(x)
