"""Building a ``kubernetes`` API client for a Cluster row.

Credentials stay on the server: the kubeconfig path is read here, the token is
decrypted here, and neither is ever logged or returned.
"""

from __future__ import annotations

import tempfile

from kubernetes import client, config

from apps.common.crypto import decrypt
from apps.common.exceptions import ValidationFailed
from apps.inventory.choices import ConnectionKind
from apps.inventory.models import Cluster


def api_client_for(cluster: Cluster, *, timeout_retries: int = 0) -> client.ApiClient:
    """A fresh ApiClient for ``cluster`` (callers close it)."""
    configuration = client.Configuration()
    if cluster.connection == ConnectionKind.KUBECONFIG:
        config.load_kube_config(
            config_file=cluster.kubeconfig_path,
            context=cluster.kubeconfig_context or None,
            client_configuration=configuration,
            persist_config=False,
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
