"""The ``--demo``: the team's script, a sample project and the runner that plays them live."""
