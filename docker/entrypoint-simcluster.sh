#!/usr/bin/env bash
# The demo's simulated Ascend cluster (compose profile "demo"), reachable by the
# other containers as https://$SIMCLUSTER_HOST:$SIMCLUSTER_PORT. It writes a
# kubeconfig for them to $SIMCLUSTER_KUBECONFIG (a shared volume).
set -euo pipefail
exec python -m simcluster \
  --host 0.0.0.0 \
  --advertise-host "${SIMCLUSTER_HOST:-simcluster}" \
  --port "${SIMCLUSTER_PORT:-6443}" \
  --kubeconfig "${SIMCLUSTER_KUBECONFIG:-/shared/simcluster.kubeconfig}" \
  --scenario "${SIMCLUSTER_SCENARIO:-guide}" \
  --workload \
  "$@"
