"""Small flax (linen) models with seeded parameters: the layers real JAX programs use."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from iree_conformance.frontends.jax_export import flax_case

rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


class CNN(nn.Module):
    """Conv, ReLU, average pooling, conv, a dense head and log-softmax (an MNIST-style CNN)."""

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(8, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        return nn.log_softmax(nn.Dense(10)(x))


class MLP(nn.Module):
    """Dense, LayerNorm, GELU, twice, then a dense head."""

    @nn.compact
    def __call__(self, x):
        for width in (64, 32):
            x = nn.gelu(nn.LayerNorm()(nn.Dense(width)(x)))
        return nn.Dense(4)(x)


class TransformerBlock(nn.Module):
    """Pre-norm self-attention (4 heads, causal mask) and an MLP, with residuals."""

    @nn.compact
    def __call__(self, x):
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=4)(h, h, mask=mask)
        h = nn.LayerNorm()(x)
        return x + nn.Dense(x.shape[-1])(nn.gelu(nn.Dense(4 * x.shape[-1])(h)))


class LSTM(nn.Module):
    """An LSTM over the time axis with nn.scan (a stablehlo.while loop), then a dense head."""

    @nn.compact
    def __call__(self, x):
        cell = nn.scan(
            nn.OptimizedLSTMCell,
            variable_broadcast="params",
            split_rngs={"params": False},
            in_axes=1,
            out_axes=1,
        )(16)
        carry = cell.initialize_carry(jax.random.PRNGKey(1), x[:, 0].shape)
        carry, ys = cell(carry, x)
        return nn.Dense(3)(ys[:, -1]), carry[1]


class ResNetBlock(nn.Module):
    """A ResNet basic block: conv, BatchNorm (batch statistics), ReLU, conv, BatchNorm, skip."""

    @nn.compact
    def __call__(self, x):
        residual = x
        y = nn.Conv(8, (3, 3), use_bias=False)(x)
        y = nn.relu(nn.BatchNorm(use_running_average=False)(y))
        y = nn.Conv(8, (3, 3), use_bias=False)(y)
        y = nn.BatchNorm(use_running_average=False)(y)
        return nn.relu(residual + y)


class Embedder(nn.Module):
    """Token embeddings (a gather) plus learned positions, mean-pooled."""

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(50, 16)(tokens)
        x = x + self.param("positions", nn.initializers.normal(0.02), (tokens.shape[1], 16))
        return x.mean(axis=1)


flax_cnn = flax_case("flax_cnn", CNN(), normal(2, 12, 12, 1), description=CNN.__doc__)
mlp_layernorm_gelu = flax_case("mlp_layernorm_gelu", MLP(), normal(8, 16), description=MLP.__doc__)
transformer_block = flax_case(
    "transformer_block", TransformerBlock(), normal(2, 8, 32), description=TransformerBlock.__doc__
)
lstm_scan = flax_case("lstm_scan", LSTM(), normal(2, 6, 4), description=LSTM.__doc__)
resnet_block_batchnorm = flax_case(
    "resnet_block_batchnorm",
    ResNetBlock(),
    normal(2, 8, 8, 8),
    mutable=["batch_stats"],
    description=ResNetBlock.__doc__ + " Returns the output and the updated batch statistics.",
)
embeddings = flax_case(
    "embeddings",
    Embedder(),
    rng.integers(0, 50, (3, 7)).astype(np.int32),
    description=Embedder.__doc__,
)
