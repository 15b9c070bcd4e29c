"""Developer tools, not called by any workflow: the workflows under act (act_local,
actlocal/, the fake GitHub API), the proofs and browser checks .ci/run runs
(consumer_repo_proof, llvm_cache_proof, render_html_check, history_site_check, ...).
Each runs as ``python -m devtools.<tool>`` from the repository root (docs/devtools.md).
They may import ``ci``; ``ci`` (what the workflows call) never imports them."""
