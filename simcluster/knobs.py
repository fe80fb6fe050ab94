"""What tests turn on a running simulator: faults, outages, chip health,
ServiceAccount tokens, and the request log."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

from simcluster import (
    errors,
    rbac,
)
from simcluster.faults import FaultSettings
from simcluster.options import AuditEntry


class KnobsMixin:
    """Test knobs of a running simulator."""

    def service_account_token(self, namespace: str, name: str) -> str:
        """A bearer token for the ServiceAccount ``namespace/name`` (RBAC applies).

        Like a projected token, it works whether or not the ServiceAccount
        object exists; what it may do comes from the stored role bindings.
        """
        token = f"sa-{namespace}-{name}-" + secrets.token_hex(16)
        self._sa_tokens[token] = rbac.service_account_user(namespace, name)
        return token

    def requests_by(self, user: str) -> list[AuditEntry]:
        """The logged resource requests of ``user`` (oldest first)."""
        return [entry for entry in list(self.audit) if entry.user == user]

    def set_faults(self, **values: Any) -> FaultSettings:
        """Change fault settings (see ``FaultSettings``)."""
        settings = self.faults.update(values)
        self.store.touch()
        return settings

    def reset_faults(self) -> None:
        """Switch all faults off."""
        self.faults.reset()

    def outage(self, seconds: float, mode: str = "refuse") -> None:
        """Be down for ``seconds``: refuse connections (``refuse``) or answer 503."""
        if mode not in ("refuse", "503"):
            raise errors.bad_request("mode must be 'refuse' or '503'")
        self.faults.outage_until = time.monotonic() + seconds
        if mode == "503":
            self._listener_stop.set()
            self.store.touch()
            self._drop_connections()
            self._listener_stop = threading.Event()
            return
        self._stop_listener()
        timer = threading.Timer(seconds, self._end_outage)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _end_outage(self) -> None:
        if not self._stopping.is_set():
            self._start_listener()

    def set_chip_health(self, node: str, index: int, healthy: bool) -> None:
        """Mark a chip (un)healthy; the device plugin reports it at once."""
        try:
            self.hardware.set_health(node, index, healthy)
        except (KeyError, IndexError):
            raise errors.not_found(
                "chips", "simcluster.io", f"{node}/{index}"
            ) from None
        self.store.touch()

    def set_exporter_chip_health(
        self, node: str, index: int, healthy: bool | None
    ) -> None:
        """What the node's npu-exporter says of a chip's health, while HAMi's
        registration keeps what the device plugin reports (None: the
        exporter follows the simulated hardware again)."""
        try:
            self.exporter.set_health(node, index, healthy)
        except (KeyError, IndexError):
            raise errors.not_found(
                "chips", "simcluster.io", f"{node}/{index}"
            ) from None

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the controllers have handled every change (best effort)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rv = self.store.rv
            time.sleep(0.15)
            if self.store.rv == rv and self.manager.idle.is_set():
                return True
        return False

    # -- request dispatch -----------------------------------------------------
