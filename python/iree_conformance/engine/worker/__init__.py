"""The persistent worker process: the parent side (parent), its entry (main) and its jobs."""
