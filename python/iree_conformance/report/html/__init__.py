"""The self-contained HTML report (``iree-conformance report ... --html``).

``inputs`` loads results files and splits the current run from history, ``summary``
computes the matrix, stage funnel, failure groups and slowest cases, ``operators`` the
ONNX operator scoreboard, ``trend`` the nightly history, ``charts`` the SVG geometry,
and ``render`` fills the Jinja2 template ``report.html.j2`` with all of it; ``command``
is the CLI side. Only ``render`` imports Jinja2, so the CLI works without it.
"""
