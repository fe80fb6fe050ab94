"""Cluster sync: list and watch a cluster, mirror it into the database, push deltas."""
