"""torch.nn layers: convolution, pooling, normalization, attention, embeddings, losses."""

import torch
import torch.nn.functional as F
from _tables import tensor

from iree_conformance.frontends.torch_export import module_case

nn = torch.nn
IMAGE = (2, 3, 16, 16)


def image(shape=IMAGE, dtype=torch.float32, seed=11):
    return tensor(shape, dtype, seed)


LAYERS = {
    "conv2d": (lambda: nn.Conv2d(3, 8, 3), IMAGE),
    "conv2d_stride_pad": (lambda: nn.Conv2d(3, 8, 3, stride=2, padding=1), IMAGE),
    "conv2d_dilation": (lambda: nn.Conv2d(3, 4, 3, dilation=2), IMAGE),
    "conv2d_groups": (lambda: nn.Conv2d(4, 8, 3, groups=2, padding=1), (2, 4, 12, 12)),
    "conv2d_depthwise": (lambda: nn.Conv2d(4, 4, 3, groups=4), (2, 4, 12, 12)),
    "conv2d_no_bias": (lambda: nn.Conv2d(3, 6, 1, bias=False), IMAGE),
    "conv1d": (lambda: nn.Conv1d(4, 6, 5, padding=2), (2, 4, 20)),
    "conv3d": (lambda: nn.Conv3d(2, 3, 3), (1, 2, 6, 6, 6)),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), (1, 3, 8, 8)),
    "conv_transpose1d": (lambda: nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1), (2, 4, 10)),
    "max_pool2d": (lambda: nn.MaxPool2d(2), IMAGE),
    "max_pool2d_stride_pad": (lambda: nn.MaxPool2d(3, stride=2, padding=1), IMAGE),
    "avg_pool2d": (lambda: nn.AvgPool2d(2), IMAGE),
    "avg_pool2d_pad": (
        lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
        IMAGE,
    ),
    "adaptive_avg_pool2d": (lambda: nn.AdaptiveAvgPool2d((1, 1)), IMAGE),
    "adaptive_avg_pool2d_4": (lambda: nn.AdaptiveAvgPool2d((4, 4)), IMAGE),
    "max_pool1d": (lambda: nn.MaxPool1d(3, stride=2), (2, 4, 20)),
    "avg_pool1d": (lambda: nn.AvgPool1d(4), (2, 4, 20)),
    "batch_norm2d": (lambda: _stats(nn.BatchNorm2d(3)), IMAGE),
    "batch_norm1d": (lambda: _stats(nn.BatchNorm1d(6)), (5, 6)),
    "layer_norm": (lambda: nn.LayerNorm(16), (2, 5, 16)),
    "layer_norm_2d": (lambda: nn.LayerNorm((5, 16)), (2, 5, 16)),
    "group_norm": (lambda: nn.GroupNorm(2, 4), (2, 4, 6, 6)),
    "instance_norm": (lambda: nn.InstanceNorm2d(3, affine=True), IMAGE),
    "rms_norm": (lambda: nn.RMSNorm(16), (2, 5, 16)),
    "linear": (lambda: nn.Linear(16, 8), (3, 16)),
    "linear_3d": (lambda: nn.Linear(16, 8), (2, 3, 16)),
    "mlp": (lambda: nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)), (3, 16)),
    "multihead_attention": (
        lambda: _SelfAttention(nn.MultiheadAttention(16, 4, batch_first=True)),
        (2, 5, 16),
    ),
    "transformer_encoder_layer": (
        lambda: nn.TransformerEncoderLayer(
            16, 2, dim_feedforward=32, dropout=0.0, batch_first=True
        ),
        (2, 5, 16),
    ),
    "gru": (lambda: _First(nn.GRU(8, 12, batch_first=True)), (2, 5, 8)),
    "lstm": (lambda: _First(nn.LSTM(8, 12, batch_first=True)), (2, 5, 8)),
    "upsample_nearest": (lambda: nn.Upsample(scale_factor=2, mode="nearest"), (1, 3, 5, 5)),
    "upsample_bilinear": (
        lambda: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        (1, 3, 5, 5),
    ),
    "pixel_shuffle": (lambda: nn.PixelShuffle(2), (1, 8, 4, 4)),
    "pad_reflect": (lambda: nn.ReflectionPad2d(2), (1, 3, 6, 6)),
    "pad_constant": (lambda: nn.ConstantPad2d((1, 2, 0, 1), 0.5), (1, 3, 6, 6)),
    "hardswish": (lambda: nn.Hardswish(), (4, 8)),
    "leaky_relu": (lambda: nn.LeakyReLU(0.1), (4, 8)),
    "elu": (lambda: nn.ELU(), (4, 8)),
    "prelu": (lambda: nn.PReLU(3), IMAGE),
    "dropout_eval": (lambda: nn.Sequential(nn.Dropout(0.5), nn.Linear(8, 4)), (4, 8)),
}


def _stats(bn):
    """A batch norm with non-trivial running statistics (eval mode uses them)."""
    with torch.no_grad():
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    return bn


class _SelfAttention(nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class _First(nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


CASES = [
    module_case(
        name,
        make,
        lambda shape=shape: (image(shape),),
        rtol=1e-4,
        atol=1e-4,
        description=f"nn: {name}",
    )
    for name, (make, shape) in LAYERS.items()
]

CASES += [
    module_case(
        "conv2d_f16",
        lambda: nn.Conv2d(3, 8, 3).half(),
        lambda: (image(dtype=torch.float16),),
        rtol=1e-2,
        atol=2e-2,
    ),
    module_case(
        "conv2d_bf16",
        lambda: nn.Conv2d(3, 8, 3).bfloat16(),
        lambda: (image(dtype=torch.bfloat16),),
        rtol=2e-2,
        atol=1e-1,
    ),
    module_case(
        "layer_norm_f16",
        lambda: nn.LayerNorm(16).half(),
        lambda: (tensor((2, 5, 16), torch.float16, 3),),
        rtol=1e-2,
        atol=1e-2,
    ),
    module_case("embedding", lambda: nn.Embedding(20, 8), lambda: (torch.randint(0, 20, (3, 7)),)),
    module_case(
        "embedding_bag_sum",
        lambda: _Bag(nn.EmbeddingBag(20, 8, mode="sum")),
        lambda: (torch.randint(0, 20, (3, 4)),),
    ),
]


class _Bag(nn.Module):
    def __init__(self, bag):
        super().__init__()
        self.bag = bag

    def forward(self, ids):
        return self.bag(ids)


def _sdpa(**kwargs):
    class Attention(nn.Module):
        def forward(self, q, k, v, *mask):
            return F.scaled_dot_product_attention(q, k, v, *mask, **kwargs)

    return Attention


QKV = lambda dtype=torch.float32, L=6, S=6: (  # noqa: E731
    tensor((2, 2, L, 8), dtype, 21),
    tensor((2, 2, S, 8), dtype, 22),
    tensor((2, 2, S, 8), dtype, 23),
)
CASES += [
    module_case("sdpa", _sdpa()(), lambda: QKV(), rtol=1e-4, atol=1e-4),
    module_case("sdpa_causal", _sdpa(is_causal=True)(), lambda: QKV(), rtol=1e-4, atol=1e-4),
    module_case(
        "sdpa_bool_mask",
        _sdpa()(),
        lambda: (*QKV(), torch.rand(6, 6, generator=torch.Generator().manual_seed(4)) < 0.7),
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "sdpa_float_mask",
        _sdpa()(),
        lambda: (*QKV(), tensor((2, 1, 6, 6), seed=24)),
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case("sdpa_cross", _sdpa()(), lambda: QKV(L=4, S=9), rtol=1e-4, atol=1e-4),
    module_case("sdpa_scale", _sdpa(scale=0.3)(), lambda: QKV(), rtol=1e-4, atol=1e-4),
    module_case("sdpa_f16", _sdpa()(), lambda: QKV(torch.float16), rtol=1e-2, atol=1e-2),
    module_case(
        "sdpa_causal_bf16",
        _sdpa(is_causal=True)(),
        lambda: QKV(torch.bfloat16),
        rtol=2e-2,
        atol=2e-2,
    ),
]

CASES += [
    module_case("mse_loss", lambda: _Loss(F.mse_loss), lambda: (image(), image(seed=12))),
    module_case(
        "cross_entropy",
        lambda: _Loss(F.cross_entropy),
        lambda: (tensor((6, 5), seed=3), torch.randint(0, 5, (6,))),
    ),
    module_case(
        "binary_cross_entropy_logits",
        lambda: _Loss(F.binary_cross_entropy_with_logits),
        lambda: (tensor((6, 5), seed=3), torch.rand(6, 5)),
    ),
]


class _Loss(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)
