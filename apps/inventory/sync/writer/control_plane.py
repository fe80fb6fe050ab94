"""The whole objects sync keeps: the device config, the node config, the scheduler's config,
DaemonSets, Deployments, PriorityClasses and Volcano Queues."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from apps.inventory.deviceconfig.refresh import config_loaded_refresh_soon
from apps.inventory.deviceconfig.services import deviceconfig_observe
from apps.inventory.hami.deviceconfig import (
    DeviceConfigError,
    DeviceConfigLimitError,
    parse_device_config,
)
from apps.inventory.hami.nodeconfig import (
    NODE_CONFIG_KEY,
    NodeConfigLimitError,
    read_node_config,
)
from apps.inventory.models import Cluster, ClusterObject, PriorityClass
from apps.inventory.nodeconfig.selectors import nodeconfig_ref
from apps.inventory.nodeconfig.services import nodeconfig_observe
from apps.inventory.sync.writer.base import (
    VOLCANO_QUEUE_KIND,
    Events,
    UnreadableObject,
    WriterBase,
    volcano_queues_changed,
)
from apps.live.events import (
    Event,
    object_payload,
    object_removed_payload,
)
from apps.live.realtime import broadcast_on_commit, cluster_group


class ControlPlaneMixin(WriterBase):
    """Handlers for the whole objects sync keeps: ConfigMaps, DaemonSets, Deployments,
    PriorityClasses, and scheduling Events (the reasons of pending pods)."""

    cluster: Cluster

    def replace_objects(
        self, kind: str, namespace: str, name: str, items: Sequence[Mapping[str, Any]]
    ) -> None:
        with transaction.atomic():
            if not items:
                ClusterObject.objects.filter(
                    cluster=self.cluster, kind=kind, namespace=namespace, name=name
                ).delete()
                broadcast_on_commit(
                    cluster_group(self.cluster.pk),
                    Event.OBJECT_REMOVED,
                    object_removed_payload(kind, name),
                )
            for obj in items:
                self._store_object(kind, obj)

    def apply_object_events(self, kind: str, events: Events) -> None:
        with transaction.atomic():
            for event_type, obj in events:
                meta = obj.get("metadata") or {}
                if event_type == "DELETED":
                    ClusterObject.objects.filter(
                        cluster=self.cluster,
                        kind=kind,
                        namespace=meta.get("namespace", ""),
                        name=meta.get("name", ""),
                    ).delete()
                else:
                    self._store_object(kind, obj)
            if kind == "Deployment" and events:
                # A watched Deployment is a scheduler: a rollout moves its
                # status as pods start and go, so the config it placed by
                # may have changed (apps.inventory.deviceconfig.in_effect).
                config_loaded_refresh_soon(self.cluster.pk)

    def replace_volcano_queues(self, items: Sequence[Mapping[str, Any]]) -> None:
        """Mirror every Volcano Queue (cluster-scoped), dropping the ones gone."""
        with transaction.atomic():
            names = [(i.get("metadata") or {}).get("name", "") for i in items]
            gone = ClusterObject.objects.filter(
                cluster=self.cluster, kind=VOLCANO_QUEUE_KIND
            ).exclude(name__in=names)
            changed = gone.delete()[0] > 0
            for item in items:
                changed |= self._store_object(VOLCANO_QUEUE_KIND, item)
            if changed:
                self._volcano_queues_changed()

    def apply_volcano_queue_events(self, events: Events) -> None:
        """Apply watch events of Volcano Queues."""
        self.apply_object_events(VOLCANO_QUEUE_KIND, events)
        if events:
            self._volcano_queues_changed()

    def _volcano_queues_changed(self) -> None:
        cluster_id = self.cluster.pk
        transaction.on_commit(
            lambda: volcano_queues_changed.send(
                sender=type(self), cluster_id=cluster_id
            )
        )

    def _store_object(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """Store one object; True when it is new or changed."""
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        rv = meta.get("resourceVersion", "")
        is_device_config = (
            kind == "ConfigMap"
            and namespace == self.cluster.device_config_namespace
            and name == self.cluster.device_config_name
        )
        text = (obj.get("data") or {}).get("device-config.yaml")
        if is_device_config and isinstance(text, str):
            _check_readable(text)
        node_text = _node_config_text(kind, namespace, name, obj)
        row, created = ClusterObject.objects.get_or_create(
            cluster=self.cluster,
            kind=kind,
            namespace=namespace,
            name=name,
            defaults={"resource_version": rv, "data": dict(obj)},
        )
        changed = not created and row.resource_version != rv
        if changed:
            row.resource_version, row.data = rv, dict(obj)
            row.save()
        if created or changed:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                Event.OBJECT,
                object_payload(kind, namespace, name, rv),
            )
        if (
            is_device_config
            and text is not None
            and deviceconfig_observe(
                cluster=self.cluster, text=text, resource_version=rv
            )
        ):
            self.reapply_chip_types()
        if node_text is not None:
            nodeconfig_observe(
                cluster=self.cluster, text=node_text, resource_version=rv
            )
        return created or changed

    def replace_priority_classes(self, items: Sequence[Mapping[str, Any]]) -> None:
        with transaction.atomic():
            names = {(i.get("metadata") or {}).get("name") for i in items}
            PriorityClass.objects.filter(cluster=self.cluster).exclude(
                name__in_array=names
            ).delete()
            for item in items:
                self._store_priority_class(item)

    def apply_priority_class_events(self, events: Events) -> None:
        with transaction.atomic():
            for event_type, obj in events:
                name = (obj.get("metadata") or {}).get("name", "")
                if event_type == "DELETED":
                    PriorityClass.objects.filter(
                        cluster=self.cluster, name=name
                    ).delete()
                else:
                    self._store_priority_class(obj)

    def _store_priority_class(self, obj: Mapping[str, Any]) -> None:
        PriorityClass.objects.update_or_create(
            cluster=self.cluster,
            name=(obj.get("metadata") or {}).get("name", ""),
            defaults={
                "value": int(obj.get("value") or 0),
                "global_default": bool(obj.get("globalDefault")),
                "preemption_policy": obj.get("preemptionPolicy") or "",
                "description": obj.get("description") or "",
            },
        )

    def apply_scheduling_events(self, events: Events) -> None:
        """Keep the latest FailedScheduling message of each pending pod as its reason."""
        latest: dict[tuple[str, str], str] = {}
        for event_type, obj in events:
            involved = obj.get("involvedObject") or {}
            if (
                event_type == "DELETED"
                or involved.get("kind") != "Pod"
                or obj.get("reason") != "FailedScheduling"
            ):
                continue
            latest[(involved.get("namespace", ""), involved.get("name", ""))] = obj.get(
                "message", ""
            )
        if not latest:
            return
        with transaction.atomic():
            for (namespace, name), message in latest.items():
                self.set_pending_reason(namespace, name, message)


def _node_config_text(
    kind: str, namespace: str, name: str, obj: Mapping[str, Any]
) -> str | None:
    """The ``node-config.yaml`` of the node-config ConfigMap (None: another
    object, or no such key); one beyond the reader's limits is refused like
    the device config's."""
    if kind != "ConfigMap" or (namespace, name) != nodeconfig_ref():
        return None
    text = (obj.get("data") or {}).get(NODE_CONFIG_KEY)
    if not isinstance(text, str):
        return None
    try:
        read_node_config(text)
    except NodeConfigLimitError as exc:
        raise UnreadableObject(f"{NODE_CONFIG_KEY}: {exc.message}") from exc
    except ValueError:
        pass  # readable, only invalid: stored as a version (drift shows it)
    return text


def _check_readable(text: str) -> None:
    """Refuse a device config beyond the reader's limits, before anything is stored.

    An invalid but readable text is kept as an ``observed`` version (drift
    shows it); one that is too large or nested too deep is not read at all:
    sync records it as skipped and keeps the last good one.
    """
    try:
        parse_device_config(text)
    except DeviceConfigLimitError as exc:
        raise UnreadableObject(f"device-config.yaml: {exc.message}") from exc
    except DeviceConfigError:
        pass  # readable, only invalid: stored as an observed version
