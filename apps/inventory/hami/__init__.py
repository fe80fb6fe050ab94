"""Pure-Python readers and writers for the HAMi / Ascend wire formats.

Nothing in this package imports Django: simcluster, the sync workers and the
command-line tools all share it. See ``../shared/reference/ascend-vnpu-facts.md``
for where every format comes from.
"""
