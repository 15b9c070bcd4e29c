"""Generation checks: a decoder-only language model's greedy tokens on IREE (prefill and a
decode step with a KV cache, compiled once) against transformers' own ``generate``."""
