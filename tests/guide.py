"""The guide scenario's running vNPU pods, named as a publish must confirm them.

Publishing a resized or removed template that a running pod holds is refused
unless each such pod is named in ``confirm_breaking`` (``--confirm-breaking``).
Tests about something else (drift, races, shapes, killed workers) that resize
one of these templates name the pod it breaks with these constants.
"""

from __future__ import annotations

# Holds template vir01 of Ascend310P (3072 MB).
POD_310P = "default/npu-pod-310p"
# Holds template vir05_1c_8g of Ascend910B4 (8192 MB).
POD_910B = "default/npu-pod-910b"
