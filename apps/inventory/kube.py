"""The one gateway to a cluster's API server.

- one client factory (:func:`api_client_for`): credentials stay on the server
  (the kubeconfig, stored encrypted or a file in ``KUBECONFIG_DIR`` checked by
  ``apps.inventory.kubeconfig``, and the token are decrypted here, never
  logged or returned);
- one error type (:class:`KubeError`: the HTTP status, the server's message,
  and whether trying again later can help), made by one translation
  (:func:`kube_error`) from whatever the transport raised;
- one interface (:class:`Gateway`, from :func:`gateway_for`) that sync,
  publishing, restarts, admission and eviction use; inside
  :func:`cluster_gateway` a ``KubeError`` becomes ``ClusterUnavailable`` (503)
  naming the cluster, so a web request never sees a 500 for a cluster being
  down.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal

from django.utils.translation import gettext as _
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from apps.common.crypto import decrypt
from apps.common.exceptions import ClusterUnavailable, ValidationFailed
from apps.inventory.choices import ConnectionKind
from apps.inventory.hami.annotations import node_locks
from apps.inventory.kubeconfig import loaded_kubeconfig
from apps.inventory.models import Cluster
from apps.inventory.sync import kubeapi

# A web request waits for the API server at most this long (connect, read).
REQUEST_TIMEOUT = (5.0, 15.0)
#: What a call to the API server raises, and :func:`kube_error` translates.
TRANSPORT_ERRORS = (ApiException, HTTPError, OSError, ValueError)
VOLCANO_QUEUES_PATH = "/apis/scheduling.volcano.sh/v1beta1/queues"
Eviction = Literal["evicted", "gone", "blocked"]


class KubeError(Exception):
    """A call failed; ``transient`` says whether the same call may succeed later.

    Attributes:
        status: The HTTP status, or None when the server was not reached.
        reason: The server's reason (``NotFound``, ``Conflict``...), or the
            transport error's type when there was no answer.
        message: The server's message (or the transport error).
        transient: True for 429, 5xx, timeouts and unreachable servers.
    """

    def __init__(
        self,
        status: int | None,
        message: str,
        *,
        transient: bool,
        reason: str = "",
    ) -> None:
        super().__init__(f"{status or 'no answer'}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.transient = transient

    def described(self, cluster: str) -> str:
        """What a person is told: no server message or address when unreachable."""
        if self.status is None:
            return f"cluster {cluster!r} is unreachable: {self.reason or 'no answer'}"
        return (
            f"cluster {cluster!r}: the API server answered {self.status} {self.reason}"
        )


class NoConnection(KubeError):
    """The cluster has no connection configured (``validation`` says which field)."""

    def __init__(self, validation: ValidationFailed) -> None:
        super().__init__(
            None, validation.message, transient=True, reason="no connection"
        )
        self.validation = validation


class PodExists(Exception):
    """Creating a pod answered 409 AlreadyExists; ``pod`` is the existing one (or None)."""

    def __init__(self, pod: dict[str, Any] | None) -> None:
        super().__init__("pod already exists")
        self.pod = pod


def kube_error(exc: BaseException) -> KubeError:
    """The one translation of a failed call (``TRANSPORT_ERRORS``) to a KubeError."""
    if isinstance(exc, ApiException):
        status = exc.status or None
        message = exc.reason or ""
        if exc.body:
            # The API server's Status says what went wrong better than the reason.
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(exc.body).get("message") or message
        transient = status is None or status == 429 or status >= 500
        return KubeError(status, message, transient=transient, reason=exc.reason or "")
    return KubeError(
        None, f"{type(exc).__name__}: {exc}", transient=True, reason=type(exc).__name__
    )


_ca_files: dict[str, str] = {}  # certificate -> the file this process wrote for it
_ca_files_lock = threading.Lock()


def ca_file(pem: str) -> str:
    """A file holding ``pem``: the client reads its CA from a path.

    One file per distinct certificate for the life of the process, removed at
    exit (:func:`remove_ca_files`). A client is built for every sync run,
    publish and admission call; a file each (as before) piled up in the temp
    directory of a long-lived web or worker process.
    """
    with _ca_files_lock:
        path = _ca_files.get(pem)
        if path is not None and os.path.exists(path):
            return path
        with tempfile.NamedTemporaryFile(
            "w", prefix="vnpu-ca-", suffix=".pem", delete=False
        ) as handle:
            handle.write(pem)
        _ca_files[pem] = handle.name
        return handle.name


def remove_ca_files() -> None:
    """Remove the CA files this process wrote (at exit; Celery's prefork
    children, which end without running atexit, call it on shutdown)."""
    with _ca_files_lock:
        for path in _ca_files.values():
            with contextlib.suppress(OSError):
                os.unlink(path)
        _ca_files.clear()


def _ca_files_after_fork() -> None:
    # The parent's files stay the parent's: its clients still read them and
    # it removes them. The child writes and removes its own, with a fresh
    # lock (another thread of the parent may have held this one at the fork).
    global _ca_files_lock
    _ca_files_lock = threading.Lock()
    _ca_files.clear()


atexit.register(remove_ca_files)
os.register_at_fork(after_in_child=_ca_files_after_fork)


def api_client_for(cluster: Cluster, *, timeout_retries: int = 0) -> client.ApiClient:
    """A fresh ApiClient for ``cluster`` (callers close it)."""
    configuration = client.Configuration()
    if cluster.connection == ConnectionKind.KUBECONFIG:
        # Checked before the loader sees it: the loader runs exec plugins and
        # reads files as it goes (apps.inventory.kubeconfig).
        loaded = loaded_kubeconfig(cluster)
        config.load_kube_config_from_dict(
            config_dict=loaded.config,
            context=cluster.kubeconfig_context or None,
            client_configuration=configuration,
            persist_config=False,
            temp_file_path=str(loaded.base_dir) if loaded.base_dir else None,
        )
    elif cluster.connection == ConnectionKind.IN_CLUSTER:
        loader = config.incluster_config.InClusterConfigLoader(
            token_filename=config.incluster_config.SERVICE_TOKEN_FILENAME,
            cert_filename=config.incluster_config.SERVICE_CERT_FILENAME,
        )
        loader.load_and_set(configuration)
    elif cluster.connection == ConnectionKind.TOKEN:
        configuration.host = cluster.api_url.rstrip("/")
        configuration.api_key = {
            "authorization": f"Bearer {decrypt(cluster.token_encrypted)}"
        }
        configuration.verify_ssl = cluster.verify_tls
        if cluster.ca_cert:
            configuration.ssl_ca_cert = ca_file(cluster.ca_cert)
    else:
        raise ValidationFailed(
            _("cluster %(cluster)r has no connection configured")
            % {"cluster": cluster.name},
            detail={"connection": [_("set a kubeconfig, in-cluster or URL and token")]},
        )
    # Retries are ours (with backoff and state), not urllib3's silent ones.
    configuration.retries = timeout_retries
    return client.ApiClient(configuration)


def kube_json(
    api: client.ApiClient,
    method: str,
    path: str,
    *,
    query: Mapping[str, str] | None = None,
    body: Any = None,
    content_type: str = "application/json",
) -> dict[str, Any]:
    """One raw JSON call (objects stay dicts, so unknown fields survive a round trip).

    Raises:
        ApiException: The server answered an error status.
    """
    response = api.call_api(
        path,
        method,
        query_params=list((query or {}).items()),
        header_params={"Accept": "application/json", "Content-Type": content_type},
        body=body,
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
        _request_timeout=REQUEST_TIMEOUT,
    )
    return json.loads(response.data)


class Gateway:
    """The portal's one way to a cluster's API server (one connection per instance).

    Sync (through ``api()``: its streaming lists and watches), publishing,
    restarts, admission, eviction and the queue mirror all call through it.
    Every failure is a :class:`KubeError`; :func:`cluster_gateway` turns it
    into ``ClusterUnavailable`` (503) for the web's requests.
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._api: client.ApiClient | None = None

    def api(self) -> client.ApiClient:
        """The open ``kubernetes`` client (made at first use)."""
        if self._api is None:
            try:
                self._api = api_client_for(self.cluster)
            except ValidationFailed as exc:  # no connection configured
                raise NoConnection(exc) from exc
            except (ConfigException, OSError, ValueError, TypeError) as exc:
                raise KubeError(
                    None,
                    f"cannot load the connection: {exc}",
                    transient=True,
                    reason=f"cannot load its connection: {exc}",
                ) from exc
        return self._api

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        query: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """One raw JSON call; any failure is a :class:`KubeError`."""
        try:
            return kube_json(
                self.api(),
                method,
                path,
                body=body,
                content_type=content_type,
                query=query,
            )
        except TRANSPORT_ERRORS as exc:
            raise kube_error(exc) from exc

    def get(
        self, path: str, *, query: Mapping[str, str] | None = None
    ) -> dict[str, Any] | None:
        """GET ``path``; None when it does not exist (404)."""
        try:
            return self.call("GET", path, query=query)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def namespace_exists(self, name: str) -> bool:
        try:
            self.call("GET", f"/api/v1/namespaces/{name}")
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def namespaces(self) -> set[str]:
        # Names only: the metadata-only table would do, but a namespace list is small.
        answer = self.call("GET", "/api/v1/namespaces")
        return {
            str((item.get("metadata") or {}).get("name", ""))
            for item in answer.get("items") or []
        }

    @staticmethod
    def _pods(namespace: str) -> str:
        return f"/api/v1/namespaces/{namespace}/pods"

    def create_pod(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self.call("POST", self._pods(namespace), body=dict(body))
        except KubeError as exc:
            if exc.status != 409:
                raise
        name = str((body.get("metadata") or {}).get("name", ""))
        raise PodExists(self.get_pod(namespace, name))

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.get(f"{self._pods(namespace)}/{name}")

    def pod_log(self, namespace: str, name: str, params: Mapping[str, str]) -> bytes:
        """A container's log (``pods/log``; ``params`` in the API's names), whole."""
        try:
            response = self.api().call_api(
                f"{self._pods(namespace)}/{name}/log",
                "GET",
                query_params=list(params.items()),
                header_params={"Accept": "*/*"},  # kube-apiserver: 406 for text/plain
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=(5.0, 30.0),
            )
            return bytes(response.data)
        except TRANSPORT_ERRORS as exc:
            raise kube_error(exc) from exc

    def ended_pods(self, label_selector: str) -> list[dict[str, Any]]:
        found = self.call(
            "GET",
            "/api/v1/pods",
            query={
                "labelSelector": label_selector,
                "fieldSelector": "status.phase!=Pending,status.phase!=Running",
            },
        )
        return list(found.get("items") or [])

    def delete_pod(
        self, namespace: str, name: str, *, grace_seconds: int | None = None
    ) -> bool:
        query = (
            {} if grace_seconds is None else {"gracePeriodSeconds": str(grace_seconds)}
        )
        try:
            self.call("DELETE", f"{self._pods(namespace)}/{name}", query=query)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> bool:
        try:
            self.call(
                "PATCH",
                f"{self._pods(namespace)}/{name}",
                body={"metadata": {"annotations": dict(annotations)}},
                content_type="application/merge-patch+json",
            )
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def evict_pod(self, namespace: str, name: str) -> tuple[Eviction, str]:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            self.call("POST", f"{self._pods(namespace)}/{name}/eviction", body=body)
        except KubeError as exc:
            if exc.status == 404:
                return "gone", ""
            if exc.status == 429:  # a PodDisruptionBudget says not now: never force
                return "blocked", exc.message
            raise
        return "evicted", ""

    def create_event(self, namespace: str, body: Mapping[str, Any]) -> None:
        self.call("POST", f"/api/v1/namespaces/{namespace}/events", body=dict(body))

    def node_taint(self, node: str, taint: Mapping[str, str]) -> bool:
        return self._edit_taints(
            node,
            lambda taints: (
                [t for t in taints if t.get("key") != taint["key"]] + [dict(taint)]
            ),
        )

    def node_untaint(self, node: str, *keys: str) -> bool:
        return self._edit_taints(
            node, lambda taints: [t for t in taints if t.get("key") not in keys]
        )

    def node_locks_release(
        self, node: str, stale: Callable[[str, str], bool]
    ) -> dict[str, datetime]:
        """Remove the node's scheduler locks (``hami.node_locks``) for which
        ``stale(key, value)`` is true; returns those removed (key -> when taken).
        A lock that changed meanwhile (taken again) stays."""
        path = f"/api/v1/nodes/{node}"
        try:
            current = self.call("GET", path)
        except KubeError as exc:
            if exc.status == 404:
                return {}
            raise
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        found = {
            key: at
            for key, at in node_locks(annotations).items()
            if stale(key, annotations[key])
        }
        if not found:
            return {}
        # Each removal is preceded by a test of the value read: if a scheduler
        # released and took the lock again meanwhile, the whole patch fails
        # and the live lock stays.
        patch: list[dict[str, Any]] = []
        for key in found:
            pointer = "/metadata/annotations/" + key.replace("~", "~0").replace(
                "/", "~1"
            )
            patch += [
                {"op": "test", "path": pointer, "value": annotations[key]},
                {"op": "remove", "path": pointer},
            ]
        try:
            self.call(
                "PATCH", path, body=patch, content_type="application/json-patch+json"
            )
        except KubeError as exc:
            if exc.status in (404, 409, 422):
                return {}
            raise
        return found

    def _edit_taints(
        self,
        node: str,
        edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> bool:
        # A merge patch replaces the whole list, so it carries the
        # resourceVersion it was made from: a concurrent change (the node
        # lifecycle controller taints nodes too) answers 409, and we redo it.
        path = f"/api/v1/nodes/{node}"
        for _attempt in range(5):
            try:
                current = self.call("GET", path)
            except KubeError as exc:
                if exc.status == 404:
                    return False
                raise
            taints = list((current.get("spec") or {}).get("taints") or [])
            wanted = edit(taints)
            if wanted == taints:
                return True
            try:
                self.call(
                    "PATCH",
                    path,
                    body={
                        "metadata": {
                            "resourceVersion": current["metadata"]["resourceVersion"]
                        },
                        "spec": {"taints": wanted or None},
                    },
                    content_type="application/merge-patch+json",
                )
            except KubeError as exc:
                if exc.status == 409:
                    continue
                if exc.status == 404:
                    return False
                raise
            return True
        raise KubeError(
            409, f"node {node} kept changing under its taint edit", transient=True
        )

    def create_queue(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.call("POST", VOLCANO_QUEUES_PATH, body=dict(body))

    def get_queue(self, name: str) -> dict[str, Any] | None:
        return self.get(f"{VOLCANO_QUEUES_PATH}/{name}")

    def replace_queue(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.call("PUT", f"{VOLCANO_QUEUES_PATH}/{name}", body=dict(body))

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    # --- sync's streams: raw JSON pages and watches (apps.inventory.sync.kubeapi) ---

    def list_all(
        self,
        path: str,
        *,
        field_selector: str | None = None,
        keep: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Every object at ``path`` (each mapped by ``keep``, if given) and the
        list's resourceVersion (``ListResult``); a 410 is ``kubeapi.Gone``, any
        other failure a KubeError."""
        try:
            return kubeapi.list_all(
                self.api(), path, field_selector=field_selector, keep=keep
            )
        except TRANSPORT_ERRORS as exc:
            raise kube_error(exc) from exc

    def watch(
        self,
        path: str,
        *,
        resource_version: str,
        field_selector: str | None,
        timeout_seconds: int,
    ) -> Any:
        """An open watch (``WatchStream``) from ``resource_version``. Errors met
        while reading it are the transport's: pass them through :func:`kube_error`."""
        try:
            return kubeapi.watch(
                self.api(),
                path,
                resource_version=resource_version,
                field_selector=field_selector,
                timeout_seconds=timeout_seconds,
            )
        except TRANSPORT_ERRORS as exc:
            raise kube_error(exc) from exc

    def discovered(self, path: str) -> bool:
        """Whether API discovery lists the resource of ``path`` (``kubeapi.discovered``)."""
        try:
            return kubeapi.discovered(self.api(), path)
        except TRANSPORT_ERRORS as exc:
            raise kube_error(exc) from exc

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def gateway_for(cluster: Cluster) -> Gateway:
    """The gateway to ``cluster`` (tests of scheduling replace it with a fake)."""
    return Gateway(cluster)


@contextmanager
def cluster_gateway(cluster: Cluster) -> Iterator[Gateway]:
    """A gateway for a web request: a failure becomes ClusterUnavailable.

    Callers handle the statuses they expect (404, 409) inside the block, from
    the ``KubeError``; anything else leaves it as a 503 that names the cluster.

    Raises:
        ClusterUnavailable: The cluster could not be reached or refused the call.
        ValidationFailed: The cluster has no connection configured.
    """
    gateway = gateway_for(cluster)
    try:
        yield gateway
    except NoConnection as exc:
        raise exc.validation from exc
    except KubeError as exc:
        detail: dict[str, Any] = {"cluster": cluster.name}
        if exc.status is not None:
            detail["status"] = exc.status
        raise ClusterUnavailable(exc.described(cluster.name), detail=detail) from exc
    finally:
        gateway.close()
