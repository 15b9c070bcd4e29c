"""The pytest side: the pytest11 plugin and the hook specifications."""
