"""Real architectures from transformers, built from small configs with seeded random
weights (nothing is downloaded): code nobody here wrote, exported as IREE's users
export it. torchvision's models are not here: no torchvision release installs beside
torch 2.13.0 (docs/suites.md, "torch")."""

import torch
import transformers as tf

from iree_conformance.frontends.torch_export import module_case

SEQ = 8


class Hidden(torch.nn.Module):
    """The model's first output (its last hidden state or logits) for token ids."""

    def __init__(self, model, **kwargs):
        super().__init__()
        self.model = model.eval()
        self.kwargs = kwargs

    def forward(self, ids):
        return self.model(ids, **self.kwargs)[0]


class Pixels(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model.eval()

    def forward(self, pixels):
        return self.model(pixel_values=pixels)[0]


def ids(vocab=64, shape=(2, SEQ)):
    return (torch.randint(0, vocab, shape),)


SMALL = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
}


def text(config_cls, model_cls, **kwargs):
    def make():
        config = config_cls(vocab_size=64, **{**SMALL, **kwargs})
        return Hidden(model_cls(config))

    return make


CASES = [
    module_case(
        "bert",
        text(tf.BertConfig, tf.BertModel, max_position_embeddings=32),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "bert_classifier",
        text(
            tf.BertConfig,
            tf.BertForSequenceClassification,
            max_position_embeddings=32,
            num_labels=3,
        ),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "roberta",
        text(tf.RobertaConfig, tf.RobertaModel, max_position_embeddings=40),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "distilbert",
        lambda: Hidden(
            tf.DistilBertModel(
                tf.DistilBertConfig(
                    vocab_size=64,
                    dim=32,
                    n_layers=2,
                    n_heads=2,
                    hidden_dim=64,
                    max_position_embeddings=32,
                )
            )
        ),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "gpt2",
        lambda: Hidden(
            tf.GPT2LMHeadModel(
                tf.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=32)
            ),
            use_cache=False,
        ),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "llama",
        lambda: Hidden(
            tf.LlamaForCausalLM(
                tf.LlamaConfig(
                    vocab_size=64, max_position_embeddings=32, num_key_value_heads=1, **SMALL
                )
            ),
            use_cache=False,
        ),
        ids,
        rtol=1e-4,
        atol=1e-4,
    ),
    module_case(
        "vit",
        lambda: Pixels(
            tf.ViTModel(tf.ViTConfig(image_size=16, patch_size=4, num_channels=3, **SMALL))
        ),
        lambda: (torch.randn(2, 3, 16, 16),),
        rtol=1e-4,
        atol=1e-4,
    ),
]
