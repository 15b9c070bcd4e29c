"""The lowest layer: errors, TOML, atomic writes, the vocabulary, user dirs, the artifact store."""
