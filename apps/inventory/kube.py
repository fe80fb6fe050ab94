"""Talking to a cluster's API server: a ``kubernetes`` client and raw JSON calls.

Credentials stay on the server: the kubeconfig (stored encrypted, or a file in
``KUBECONFIG_DIR``, checked by ``apps.inventory.kubeconfig``) and the token are
decrypted here, and neither is ever logged or returned.

Inside :func:`cluster_api`, every failure to talk to the cluster becomes
``ClusterUnavailable`` (503) naming the cluster, so callers never see a 500
for a cluster being down.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from apps.common.crypto import decrypt
from apps.common.exceptions import ClusterUnavailable, ValidationFailed
from apps.inventory.choices import ConnectionKind
from apps.inventory.kubeconfig import loaded_kubeconfig
from apps.inventory.models import Cluster

# A web request waits for the API server at most this long (connect, read).
REQUEST_TIMEOUT = (5.0, 15.0)


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
            # The client wants a file; keep it for the life of the process.
            with tempfile.NamedTemporaryFile(
                "w", suffix=".pem", delete=False
            ) as handle:
                handle.write(cluster.ca_cert)
            configuration.ssl_ca_cert = handle.name
    else:
        raise ValidationFailed(
            f"cluster {cluster.name!r} has no connection configured",
            detail={"connection": ["set a kubeconfig, in-cluster or URL and token"]},
        )
    # Retries are ours (with backoff and state), not urllib3's silent ones.
    configuration.retries = timeout_retries
    return client.ApiClient(configuration)


@contextmanager
def cluster_api(cluster: Cluster) -> Iterator[client.ApiClient]:
    """An ApiClient for ``cluster``; transport and server errors become ClusterUnavailable.

    Callers handle the statuses they expect (404, 409) inside the block; any
    other ApiException, a refused connection, a timeout or a broken kubeconfig
    leaves it as a 503 that names the cluster.

    Raises:
        ClusterUnavailable: The cluster could not be reached or refused the call.
        ValidationFailed: The cluster has no connection configured.
    """
    try:
        api = api_client_for(cluster)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r}: cannot load its connection: {exc}",
            detail={"cluster": cluster.name},
        ) from exc
    try:
        yield api
    except ApiException as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r}: the API server answered "
            f"{exc.status} {exc.reason or ''}".strip(),
            detail={"cluster": cluster.name, "status": exc.status},
        ) from exc
    except (HTTPError, OSError) as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r} is unreachable: {type(exc).__name__}",
            detail={"cluster": cluster.name},
        ) from exc
    finally:
        api.close()


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
