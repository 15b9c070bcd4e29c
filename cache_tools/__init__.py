"""Size-aware keys, pre-save size checks and an audit for the GitHub Actions cache."""

__version__ = "0.1.0"
