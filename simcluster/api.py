"""Kubernetes REST semantics over the store: CRUD, patch, delete, subresources."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from simcluster import (
    admission,
    errors,
    listing,
    logapi,
    patch,
    podutil,
    protobuf,
    resources,
    tables,
)
from simcluster.faults import Faults
from simcluster.podlogs import LogBook
from simcluster.resources import ResourceType
from simcluster.store import Obj, Store, Stored, dumps, now_rfc3339
from simcluster.watch import WatchOptions, open_watch

_RETURNS_OBJECT = frozenset({"pods", "namespaces"})


@dataclass
class ApiRequest:
    """A parsed resource request."""

    verb: str
    res: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    query: dict[str, str]
    body: bytes = b""
    content_type: str = "application/json"
    user: str = "admin"
    stopping: threading.Event | None = None
    accept: str = ""


@dataclass
class ApiResponse:
    """A plain answer (``body``) or a watch (``stream``)."""

    status: int = 200
    body: bytes = b""
    stream: Iterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ApiOptions:
    """Behaviour knobs of the API layer."""

    pod_shutdown_seconds: float = 1.0  # how fast containers exit on SIGTERM


class PodDeadlines:
    """When terminating pods vanish (monotonic time), keyed by uid; for the kubelet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, float] = {}

    def set(self, uid: str, at: float) -> None:
        """Record the vanish time of a pod."""
        with self._lock:
            self._items[uid] = at

    def pop_due(self, now: float) -> list[str]:
        """Uids whose time has come (removed from the table)."""
        with self._lock:
            due = [uid for uid, at in self._items.items() if at <= now]
            for uid in due:
                del self._items[uid]
            return due

    def get(self, uid: str) -> float | None:
        """The recorded vanish time, if any."""
        with self._lock:
            return self._items.get(uid)


def _status_success(res: ResourceType, obj: Obj | None, name: str) -> bytes:
    details: dict[str, Any] = {"name": name, "kind": res.plural}
    if res.group:
        details["group"] = res.group
    if obj is not None:
        details["uid"] = (obj.get("metadata") or {}).get("uid")
    return dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }
    )


def _dry_run(req: ApiRequest) -> bool:
    """``?dryRun=All``: validate, admit and answer as if written, store nothing."""
    return bool(req.query.get("dryRun"))


def _is_protobuf(req: ApiRequest) -> bool:
    return req.content_type.split(";")[0].strip().lower() == protobuf.MEDIA_TYPE


def _decode(req: ApiRequest, kind: str) -> Any:
    """The request body as JSON data; protobuf bodies of ``kind`` are decoded."""
    body = req.body
    if not body:
        raise errors.bad_request("the request body is empty")
    if _is_protobuf(req):
        return protobuf.decode(body, kind)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise errors.bad_request(
            f"the body of the request was in an unknown format: {exc}"
        ) from None


class Api:
    """Serves resource requests against a ``Store``."""

    def __init__(
        self,
        store: Store,
        faults: Faults,
        stopping: threading.Event,
        options: ApiOptions | None = None,
        watch_options: WatchOptions | None = None,
        logs: LogBook | None = None,
    ) -> None:
        self.store = store
        self.faults = faults
        self.stopping = stopping
        self.options = options or ApiOptions()
        self.watch_options = watch_options or WatchOptions()
        self.snapshots = listing.Snapshots()
        self.deadlines = PodDeadlines()
        self.logs = logs or LogBook()  # what the simulated containers printed

    # -- entry point ----------------------------------------------------------
    def handle(self, req: ApiRequest) -> ApiResponse:
        """Dispatch a request on its verb and subresource."""
        if req.subresource == "eviction":
            return self._evict(req)
        if req.subresource == "binding":
            return self._bind(req)
        if req.subresource == "log" and req.res is resources.POD:
            return self._log(req)
        if req.subresource and req.subresource not in req.res.subresources:
            raise errors.not_found(
                req.res.plural + "/" + req.subresource, req.res.group, req.name or ""
            )
        handler = {
            "get": self._get,
            "list": self._list,
            "watch": self._watch,
            "create": self._create,
            "update": self._update,
            "patch": self._patch,
            "delete": self._delete,
            "deletecollection": self._delete_collection,
        }.get(req.verb)
        if handler is None:
            raise errors.method_not_allowed()
        if req.verb in ("create", "update", "patch") and self.faults.forced_conflict():
            raise errors.conflict(req.res.plural, req.res.group, req.name or "")
        return handler(req)

    # -- reads ----------------------------------------------------------------
    def _get(self, req: ApiRequest) -> ApiResponse:
        as_table = tables.negotiate(req.accept, req.query)
        found = self.store.require(req.res, req.namespace or "", req.name or "")
        if as_table is not None:
            return ApiResponse(body=tables.object_table(req.res, found.obj, as_table))
        return ApiResponse(body=found.raw)

    def _list(self, req: ApiRequest) -> ApiResponse:
        as_table = tables.negotiate(req.accept, req.query)
        if as_table is not None:
            meta, page = listing.list_page(
                self.store, self.snapshots, req.res, req.namespace, req.query
            )
            table = tables.table(req.res, (s.obj for s in page), meta, as_table)
            return ApiResponse(body=dumps(table))
        body = listing.list_body(
            self.store, self.snapshots, req.res, req.namespace, req.query
        )
        return ApiResponse(body=body)

    def _watch(self, req: ApiRequest) -> ApiResponse:
        query = dict(req.query)
        if req.name:  # a watch on one object is a watch with a name field selector
            extra = f"metadata.name={req.name}"
            query["fieldSelector"] = ",".join(
                filter(None, [query.get("fieldSelector"), extra])
            )
        as_table = tables.negotiate(req.accept, req.query)
        stream = open_watch(
            self.store,
            req.res,
            req.namespace,
            query,
            self.faults,
            req.stopping or self.stopping,
            self.watch_options,
            tables.WatchTables(req.res, as_table) if as_table else None,
        )
        return ApiResponse(stream=stream)

    # -- create ---------------------------------------------------------------
    def _create(self, req: ApiRequest) -> ApiResponse:
        res = req.res
        if req.name:
            raise errors.method_not_allowed()
        obj = admission.check_identity(
            req, admission.check_body(req, _decode(req, res.kind), res.top_fields)
        )
        meta = obj["metadata"]
        for key in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "generation",
            "selfLink",
        ):
            meta.pop(key, None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + podutil.random_suffix()
        admission.validate_name(res, meta.get("name") or "")
        if (
            res.namespaced
            and self.store.get(resources.NAMESPACE, "", meta["namespace"]) is None
        ):
            raise errors.not_found("namespaces", "", meta["namespace"])
        admission.admit(self.store, res, obj)
        if _dry_run(req):
            return ApiResponse(201, dumps(obj))
        stored = self.store.create(res, obj)
        return ApiResponse(201, stored.raw)

    def admit_pod(self, pod: Obj) -> None:
        """Pod defaulting and Priority admission, for controllers that create pods."""
        admission.admit_pod(self.store, pod)

    # -- update and patch -----------------------------------------------------
    def _merge_subresource(self, req: ApiRequest, old: Stored, new: Obj) -> Obj:
        """Status writes change only status; main writes keep the stored status."""
        if req.subresource == "status":
            result = old.clone()
            result["status"] = new.get("status") or {}
            meta = new.get("metadata") or {}
            if meta.get("resourceVersion"):
                result["metadata"]["resourceVersion"] = meta["resourceVersion"]
            return result
        if req.res.has_status:
            if "status" in old.obj:
                new["status"] = old.clone()["status"]
            else:
                new.pop("status", None)
        return new

    def _update(self, req: ApiRequest) -> ApiResponse:
        res = req.res
        fields = res.top_fields
        obj = admission.check_identity(
            req, admission.check_body(req, _decode(req, res.kind), fields)
        )
        name = obj["metadata"].get("name")
        if name != req.name:
            raise errors.bad_request(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({req.name})"
            )
        with self.store.lock:
            old = self.store.require(res, req.namespace or "", req.name or "")
            expected = (obj.get("metadata") or {}).get("resourceVersion")
            if expected and expected != str(old.rv):
                raise errors.conflict(res.plural, res.group, req.name or "")
            obj = self._merge_subresource(req, old, obj)
            if _dry_run(req):
                return ApiResponse(body=dumps(obj))
            stored = self._write(res, obj, expected)
        return ApiResponse(body=stored.raw)

    def _patch(self, req: ApiRequest) -> ApiResponse:
        res = req.res
        if _is_protobuf(req):  # a patch is a document about JSON, never protobuf
            patch.apply_patch(req.content_type, {}, {})
        body = _decode(req, res.kind)
        with self.store.lock:
            old = self.store.require(res, req.namespace or "", req.name or "")
            current = old.clone()
            patched = patch.apply_patch(req.content_type, current, body)
            admission.check_body(req, patched, res.top_fields)
            meta = patched.setdefault("metadata", {})
            old_meta = old.obj["metadata"]
            if meta.get("name") != old_meta.get("name") or (
                res.namespaced and meta.get("namespace") != old_meta.get("namespace")
            ):
                raise errors.bad_request(
                    "metadata.name and metadata.namespace are immutable"
                )
            expected = meta.get("resourceVersion")
            if expected and expected != str(old.rv):
                raise errors.conflict(res.plural, res.group, req.name or "")
            patched = self._merge_subresource(req, old, patched)
            if _dry_run(req):
                return ApiResponse(body=dumps(patched))
            stored = self._write(res, patched, None)
        return ApiResponse(body=stored.raw)

    def _write(self, res: ResourceType, obj: Obj, expected: str | None) -> Stored:
        """Store an update; a deleted object goes once its finalizers are gone."""
        meta = obj.setdefault("metadata", {})
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and res is not resources.POD
        ):
            self.store.update(res, obj, expected_rv=expected)
            return self.store.delete(res, meta.get("namespace", ""), meta["name"])
        return self.store.update(res, obj, expected_rv=expected)

    # -- delete ---------------------------------------------------------------
    def _delete_options(self, req: ApiRequest) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if req.body:
            decoded = _decode(req, "DeleteOptions")
            if isinstance(decoded, dict):
                options = decoded
        if "gracePeriodSeconds" in req.query:
            options["gracePeriodSeconds"] = int(req.query["gracePeriodSeconds"])
        return options

    def _delete(self, req: ApiRequest) -> ApiResponse:
        options = self._delete_options(req)
        if _dry_run(req):
            found = self.store.require(req.res, req.namespace or "", req.name or "")
            return ApiResponse(body=found.raw)
        stored = self.delete_object(
            req.res, req.namespace or "", req.name or "", options
        )
        if req.res.plural in _RETURNS_OBJECT or stored.obj["metadata"].get(
            "deletionTimestamp"
        ):
            return ApiResponse(body=stored.raw)
        return ApiResponse(body=_status_success(req.res, stored.obj, req.name or ""))

    def delete_object(
        self, res: ResourceType, namespace: str, name: str, options: dict[str, Any]
    ) -> Stored:
        """Delete now, or start a graceful deletion (pods, objects with finalizers)."""
        with self.store.lock:
            old = self.store.require(res, namespace, name)
            precond = options.get("preconditions") or {}
            meta = old.obj["metadata"]
            if precond.get("uid") and precond["uid"] != meta.get("uid"):
                raise errors.conflict(res.plural, res.group, name)
            if precond.get("resourceVersion") and precond["resourceVersion"] != str(
                old.rv
            ):
                raise errors.conflict(res.plural, res.group, name)
            if res is resources.POD:
                return self._delete_pod(old, options)
            if res is resources.NAMESPACE:
                self._delete_namespace_contents(name)
            if meta.get("finalizers"):
                if meta.get("deletionTimestamp"):
                    return old
                obj = old.clone()
                obj["metadata"]["deletionTimestamp"] = now_rfc3339()
                obj["metadata"]["deletionGracePeriodSeconds"] = 0
                return self.store.update(res, obj)
            return self.store.delete(res, namespace, name)

    def _delete_pod(self, old: Stored, options: dict[str, Any]) -> Stored:
        pod = old.obj
        meta = pod["metadata"]
        explicit = options.get("gracePeriodSeconds")
        grace = int(
            explicit
            if explicit is not None
            else (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        )
        unbound = not (pod.get("spec") or {}).get("nodeName")
        if grace <= 0 or unbound or podutil.is_terminal(pod):
            return self.store.delete(
                resources.POD, meta.get("namespace", ""), meta["name"]
            )
        if meta.get("deletionTimestamp"):
            current = meta.get("deletionGracePeriodSeconds") or grace
            if grace >= current:
                return old
        # Containers that exit on SIGTERM end before the grace period; an explicit
        # grace period is honoured exactly so that tests can rely on it.
        seconds = (
            grace
            if explicit is not None
            else min(grace, self.options.pod_shutdown_seconds)
        )
        self.deadlines.set(meta["uid"], time.monotonic() + seconds)
        obj = old.clone()
        obj["metadata"]["deletionTimestamp"] = now_rfc3339(
            datetime.now(UTC) + timedelta(seconds=grace)
        )
        obj["metadata"]["deletionGracePeriodSeconds"] = grace
        return self.store.update(resources.POD, obj)

    def _delete_namespace_contents(self, namespace: str) -> None:
        for res in resources.RESOURCES:
            if not res.namespaced:
                continue
            _, items = self.store.list(res, namespace)
            for item in items:
                self.store.delete(res, namespace, item.obj["metadata"]["name"])

    def _delete_collection(self, req: ApiRequest) -> ApiResponse:
        options = self._delete_options(req)
        predicate = listing.object_filter(req.res, req.query)
        _rv, items = self.store.list(req.res, req.namespace)
        deleted: list[bytes] = []
        for item in items:
            if predicate is not None and not predicate(item.obj):
                continue
            meta = item.obj["metadata"]
            try:
                stored = self.delete_object(
                    req.res, meta.get("namespace", ""), meta["name"], options
                )
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise
                continue
            deleted.append(stored.raw)
        head = (
            b'{"kind":"'
            + req.res.kind.encode()
            + b'List","apiVersion":"'
            + req.res.group_version.encode()
            + b'","metadata":{"resourceVersion":"'
            + str(self.store.rv).encode()
            + b'"},"items":['
        )
        return ApiResponse(body=head + b",".join(deleted) + b"]}")

    # -- pod subresources -----------------------------------------------------
    def _evict(self, req: ApiRequest) -> ApiResponse:
        if req.verb != "create":
            raise errors.method_not_allowed()
        body = admission.check_body(
            req, _decode(req, "Eviction"), resources.EVICTION_FIELDS
        )
        namespace, name = req.namespace or "", req.name or ""
        options = body.get("deleteOptions") or {}
        with self.store.lock:
            pod = self.store.require(resources.POD, namespace, name)
            if podutil.is_terminating(pod.obj) or podutil.is_terminal(pod.obj):
                self.delete_object(resources.POD, namespace, name, options)
                return ApiResponse(201, _status_success(resources.POD, pod.obj, name))
            _, pdb_items = self.store.list(resources.PDB, namespace)
            matching = podutil.pdbs_for(pod.obj, [p.obj for p in pdb_items])
            if len(matching) > 1:
                raise errors.internal_error(
                    "This pod has more than one PodDisruptionBudget, which the "
                    "eviction subresource does not support."
                )
            if matching and podutil.is_healthy(pod.obj):
                pdb = matching[0]
                _, pods = self.store.list(resources.POD, namespace)
                status = podutil.pdb_status(pdb, [p.obj for p in pods])
                if status["disruptionsAllowed"] <= 0:
                    pdb_name = pdb["metadata"]["name"]
                    raise errors.too_many_requests(
                        "Cannot evict pod as it would violate the pod's disruption "
                        "budget.",
                        {
                            "causes": [
                                {
                                    "reason": "DisruptionBudget",
                                    "message": f"The disruption budget {pdb_name} "
                                    "needs "
                                    f"{status['desiredHealthy']} healthy pods and has "
                                    f"{status['currentHealthy']} currently",
                                }
                            ]
                        },
                    )
                status["disruptionsAllowed"] -= 1
                status["disruptedPods"] = {name: now_rfc3339()}
                self.store.mutate(
                    resources.PDB,
                    namespace,
                    pdb["metadata"]["name"],
                    lambda obj: obj.__setitem__("status", status),
                )
            self.delete_object(resources.POD, namespace, name, options)
        return ApiResponse(201, _status_success(resources.POD, pod.obj, name))

    def _log(self, req: ApiRequest) -> ApiResponse:
        """``pods/log``: what the container printed (``logapi``)."""
        if req.verb != "get":
            raise errors.method_not_allowed()
        if not logapi.acceptable(req.accept):
            raise logapi.not_acceptable()
        status, body, stream = logapi.serve(
            self.store,
            self.logs,
            req.namespace or "",
            req.name or "",
            req.query,
            req.stopping or self.stopping,
        )
        return ApiResponse(status, body, stream, headers=dict(logapi.TEXT))

    def _bind(self, req: ApiRequest) -> ApiResponse:
        if req.verb != "create":
            raise errors.method_not_allowed()
        body = admission.check_body(
            req, _decode(req, "Binding"), resources.BINDING_FIELDS
        )
        target = (body.get("target") or {}).get("name")
        if not target:
            raise errors.invalid(
                "Binding", "", req.name or "", [("target.name", "Required value")]
            )
        namespace = req.namespace or ""
        name = req.name or (body.get("metadata") or {}).get("name") or ""
        with self.store.lock:
            pod = self.store.require(resources.POD, namespace, name)
            bound = (pod.obj.get("spec") or {}).get("nodeName")
            if bound:
                raise errors.ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on pods/binding "{name}": pod '
                    f'{name} is already assigned to node "{bound}"',
                )

            def bind(obj: Obj) -> None:
                obj["spec"]["nodeName"] = target
                podutil.set_condition(obj, "PodScheduled", "True", now_rfc3339())
                annotations = (body.get("metadata") or {}).get("annotations") or {}
                if annotations:
                    obj["metadata"].setdefault("annotations", {}).update(annotations)

            self.store.mutate(resources.POD, namespace, name, bind)
        return ApiResponse(201, _status_success(resources.POD, pod.obj, name))
