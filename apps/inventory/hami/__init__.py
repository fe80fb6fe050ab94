"""Pure-Python readers and writers for the HAMi / Ascend wire formats.

Nothing in this package imports Django: simcluster, the sync workers and the
command-line tools all share it. ``docs/scheduler-behaviour.md`` ("The wire
formats") says what each format holds and who writes it.
"""
