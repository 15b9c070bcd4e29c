"""The pieces of devtools/act_local.py (running the workflows under act on this host).

- workflow.py: which jobs and matrix rows can run here, and which Python versions the
  tool cache must offer (mapped to the host's interpreter).
- command.py: act's command line, with every server and URL checked to be loopback.
- event.py: the event payload act hands to the workflow.
- logs.py: act's JSON log into jobs, steps, cache decisions and artifacts.
- servers.py: the loopback servers a run needs (a static file server for the tiny zoo).
- warm.py: the check that a warm run compiled nothing.

Pure logic except servers.py; tests/unit/ci/test_act_local.py covers it without act.
"""
