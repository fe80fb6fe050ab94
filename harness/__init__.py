"""What the tests, kubestack and bench share to run the portal and its parts:
processes (start, stop, wait for readiness), private PostgreSQL and Redis
servers, a real Prometheus, the portal as a stack of processes, and the chip
types the allocator's tests and benchmark use.

Nothing here imports ``tests``: bench and kubestack use it without pytest.
"""
