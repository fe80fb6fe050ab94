"""Status and kind choices of the inventory app (never compare bare strings)."""

from django.db import models


class ConnectionKind(models.TextChoices):
    KUBECONFIG = "kubeconfig", "Kubeconfig file"
    IN_CLUSTER = "in_cluster", "In-cluster service account"
    TOKEN = "token", "API URL and bearer token"
    NONE = "none", "Not connected (imported configuration only)"


class SchedulerSetting(models.TextChoices):
    """Which scheduler the portal submits a cluster's vNPU pods to."""

    AUTO = "auto", "Detected from what sync sees"
    VOLCANO = "volcano", "Volcano (deviceshare), as in the guide"
    HAMI = "hami", "HAMi's own scheduler"


class SyncState(models.TextChoices):
    NEVER = "never", "Never synced"
    OK = "ok", "In sync"
    STALE = "stale", "Stale"
    ERROR = "error", "Error"


class DeviceConfigShape(models.TextChoices):
    LIST = "list", "Legacy list (HAMi <= v2.8, device plugin <= v1.2)"
    WRAPPER = (
        "wrapper",
        "Wrapper {hamiVnpuCore, configs} (HAMi >= v2.9, device plugin >= v1.3)",
    )
    UNREADABLE = "unreadable", "Not a readable device config (kept as seen)"


class DeviceConfigSource(models.TextChoices):
    IMPORTED = "imported", "Imported from a file"
    PUBLISHED = "published", "Published by the portal"
    OBSERVED = "observed", "Observed in the cluster"
    ADOPTED = "adopted", "Adopted from the cluster"


class ChipState(models.TextChoices):
    """What a chip is doing, as one word for tables, filters and the heat map.

    Derived, never stored: ``apps.inventory.chipstate`` names the rules (chip
    isolation adds its own there). ``healthy`` stays a field of its own, so a
    drained chip that is also unhealthy shows both.
    """

    HEALTHY = "healthy", "Healthy"
    UNHEALTHY = "unhealthy", "Unhealthy"
    CORDONED = "cordoned", "Cordoned"
    DRAINING = "draining", "Draining"
    DRAINED = "drained", "Drained"
    ISOLATING = "isolating", "Isolating"
    ISOLATED = "isolated", "Isolated"
    RESTORING = "restoring", "Restoring"


class ChipIsolation(models.TextChoices):
    """Where a chip stands in being taken out of (or put back into) service.

    The portal stops placing on a chip from "isolating" on; the device plugin
    stops registering it only after its pod on that node restarted with the
    chip in ``filterDevices``, which sync then proves from the cluster.
    """

    NONE = "", "In service"
    ISOLATING = "isolating", "Isolating: filtered, waiting for the proof"
    ISOLATED = "isolated", "Isolated: the device plugin no longer registers it"
    RESTORING = "restoring", "Restoring: filter lifted, waiting for the proof"
