"""simcluster: a Kubernetes API server simulator for a small Ascend vNPU cluster.

Standalone (no Django). Start it with ``python -m simcluster`` or, in tests, with
``simcluster.server.SimCluster``.
"""

__all__ = ["SimCluster"]


def __getattr__(name: str) -> object:
    if name == "SimCluster":
        from simcluster.server import SimCluster

        return SimCluster
    raise AttributeError(name)
