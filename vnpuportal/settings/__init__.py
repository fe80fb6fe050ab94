"""Settings modules: ``base`` (everything, from the environment) and ``test``.

Deliberately empty: importing ``vnpuportal.settings.test`` must not evaluate
``base`` before the test module has pinned its environment.
"""
