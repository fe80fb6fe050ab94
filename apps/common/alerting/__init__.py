"""The portal's alerts: one definition each (``definitions``), rendered as
Prometheus rules for a plain Prometheus and for the Helm chart (``rules``).

Pure Python: no Django import, so the definitions can be read anywhere (the
rules generator, the docs test, and later the portal's own evaluation of the
same conditions from the same metric samples).
"""
