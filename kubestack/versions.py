"""The pinned versions of the real control plane (see ``gomod/*/go.mod``)."""

from __future__ import annotations

KUBERNETES = "v1.35.3"  # the version Volcano v1.15.1 pins
VOLCANO = "v1.15.1"
# The proxy serves no volcano.sh/apis v1.15.x; v1.14.0 plus gomod/volcano/compat.
VOLCANO_APIS = "v1.14.0"
ETCD = "v3.6.5"  # the client version Kubernetes v1.35.3 requires
KWOK = "v0.8.0"
# Built apart from the control plane (its own cache folder): lints and renders the chart.
HELM = "v4.3.2"
# ORY Hydra, the OpenID provider of the sign-in tests (harness/hydra.py); its
# own cache folder too.
HYDRA = "v2.3.0"
# HAMi's scheduler (an extender of kube-scheduler plus a mutating webhook), for
# ``--scheduler hami``; its own cache folder too (kubestack/hamibuild.py).
HAMI = "v2.9.0"
HAMI_MODULE = "github.com/Project-HAMi/HAMi"
HAMI_REVISION = "3a006c6ae2f077a2683df7805c43656c07f6dc15"  # the tag's commit
# sha256 of the release source (``git archive --prefix=HAMi-v2.9.0/ v2.9.0``,
# gzipped), the fallback when the module proxy refuses the module: a file
# that does not match is refused, whatever its ``.sha256`` says.
HAMI_SOURCE_SHA256 = "0fda8d80a23de1dbd126cffc0ce78222e51e236e0edaa11ae165308b13bcd471"

# Volcano's CRDs (module folder config/crd/volcano/bases): without them the
# scheduler's informers never sync; the queue controller also watches commands.
VOLCANO_CRDS = (
    "scheduling.volcano.sh_podgroups.yaml",
    "scheduling.volcano.sh_queues.yaml",
    "topology.volcano.sh_hypernodes.yaml",
    "nodeinfo.volcano.sh_numatopologies.yaml",
    "bus.volcano.sh_commands.yaml",
    "shard.volcano.sh_nodeshards.yaml",
)

# KWOK's stages (module folder kustomize/stage): KWOK exits without any.
KWOK_STAGES = (
    "node/fast/node-initialize.yaml",
    "node/heartbeat/node-heartbeat.yaml",
    "pod/fast/pod-ready.yaml",
    "pod/fast/pod-complete.yaml",
    "pod/fast/pod-delete.yaml",
)

# KWOK's CRDs (module folder kustomize/crd/bases) the stack installs: ``Logs``
# points a pod's containers at their log files (kubestack/jobplayer.py).
KWOK_CRDS = ("kwok.x-k8s.io_logs.yaml",)


def summary() -> dict[str, str]:
    """The versions, for ``versions.json`` beside the binaries."""
    return {
        "kubernetes": KUBERNETES,
        "volcano": VOLCANO,
        "volcano_apis": VOLCANO_APIS,
        "etcd": ETCD,
        "kwok": KWOK,
    }
