"""A real Kubernetes control plane with the real Volcano scheduler, for tests and demos.

Built from Go modules at pinned versions (``python -m kubestack build``) and run on
loopback (``python -m kubestack up``); the node side (KWOK and a simulated Ascend
device plugin) stands in for hardware. See docs/kubestack.md.
"""
