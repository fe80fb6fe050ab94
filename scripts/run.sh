#!/usr/bin/env bash
# Run the whole portal on its embedded default, for a newcomer:
#   - simcluster, a simulated Ascend cluster (the guide's two nodes,
#     with a workload generator that keeps pods coming and going);
#   - a Celery worker and beat doing real list+watch syncs of it, on a
#     filesystem broker (no Redis needed);
#   - the portal (ASGI: HTTP + WebSockets) on SQLite;
#   - when `prometheus` is installed, a Prometheus scraping the simulated
#     npu-exporters every 5 s (the usage and cost pages read it) and the
#     portal's own /metrics, evaluating the portal's alert rules;
#   - when Alertmanager is installed too (`prometheus-alertmanager`), an
#     Alertmanager that keeps those alerts (the demo's sick chip fires one).
# All are started and stopped together (Ctrl-C stops everything).
# Open http://127.0.0.1:8000/ and log in as admin / admin.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" run

# A local secret key, made once; production sets DJANGO_SECRET_KEY itself.
if [ ! -f .env ]; then
  echo "DJANGO_SECRET_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(48))')" > .env
  echo "DJANGO_DEBUG=true" >> .env
fi
export DJANGO_SETTINGS_MODULE=vnpuportal.settings.base
# A real worker process without Redis: Celery's filesystem transport, and live
# deltas through the database outbox (docs/running.md, "Embedded mode").
export CELERY_BROKER_URL="${CELERY_BROKER_URL:-filesystem://}"
PORT="${PORT:-8000}"
SIM_PORT="${SIM_PORT:-0}"
mkdir -p var
KUBECONFIG_PATH="$ROOT/var/simcluster.kubeconfig"

# Each background process starts in a process group of its own (setsid), and
# is stopped with its whole group: the worker's embedded beat is a child
# process, and stopping the worker alone once left the beat running.
pids=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  # The worker's sync task holds long watches: give it a moment, then insist.
  for _ in $(seq 20); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.25
  done
  for pid in "${pids[@]}"; do kill -9 -- "-$pid" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

# The web UI (Node 20+ and npm; without them the API still runs and / says how to build it).
bash frontend/build.sh
python manage.py migrate --noinput
# The API's and the commands' Chinese (locale/, compiled in Python: no gettext needed).
python manage.py compile_locale >/dev/null
rm -f "$KUBECONFIG_PATH"
setsid python -m simcluster --port "$SIM_PORT" --kubeconfig "$KUBECONFIG_PATH" --scenario guide --workload \
  >var/simcluster.log 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -s "$KUBECONFIG_PATH" ] && break; sleep 0.2; done
[ -s "$KUBECONFIG_PATH" ] || { echo "simcluster did not start; see var/simcluster.log" >&2; exit 1; }

# Wait until $2/-/ready answers, while process $1 lives; 0 when it did.
wait_ready() {
  for _ in $(seq 50); do
    kill -0 "$1" 2>/dev/null || return 1
    if python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
      "$2/-/ready" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# Prometheus for the usage pages, before the worker and the web process that
# read PROMETHEUS_URL. Without it those pages show booked figures only.
if command -v prometheus >/dev/null 2>&1; then
  PROM_PORT="${PROM_PORT:-9090}"
  mkdir -p var/prometheus
  # Prometheus scrapes the portal's /metrics with a token made for this run
  # (kept in a file only the user reads), and evaluates the portal's alert
  # rules with their links to this portal; a demo lives minutes, so each
  # alert fires after ALERTS_FOR (30 s) instead of its own `for`.
  export PORTAL_URL="${PORTAL_URL:-http://127.0.0.1:$PORT}"
  export METRICS_TOKEN="${METRICS_TOKEN:-$(python -c 'import secrets; print(secrets.token_urlsafe(32))')}"
  (umask 077 && printf '%s' "$METRICS_TOKEN" >var/metrics-token)
  python manage.py alert_rules --portal-url "$PORTAL_URL" --for "${ALERTS_FOR:-30s}" \
    >var/vnpu-alerts.rules.yml
  alertmanager_bin="$(command -v prometheus-alertmanager || command -v alertmanager || true)"
  am_args=()
  if [ -n "$alertmanager_bin" ]; then
    ALERTMANAGER_PORT="${ALERTMANAGER_PORT:-9093}"
    mkdir -p var/alertmanager
    # One receiver that sends nothing: the alerts stay in Alertmanager (its
    # UI and API, and the portal's Alerts page); docs/alerts.md routes them.
    cat >var/alertmanager.yml <<'YAML'
route:
  receiver: keep
  group_by: [alertname, cluster]
  group_wait: 5s
receivers:
  - name: keep
YAML
    # No gossip port: one instance, and nothing else to bind.
    setsid "$alertmanager_bin" --config.file=var/alertmanager.yml \
      --storage.path=var/alertmanager --cluster.listen-address= \
      --web.listen-address="127.0.0.1:$ALERTMANAGER_PORT" >var/alertmanager.log 2>&1 &
    am_pid=$!
    pids+=("$am_pid")
    if wait_ready "$am_pid" "http://127.0.0.1:$ALERTMANAGER_PORT"; then
      export ALERTMANAGER_URL="http://127.0.0.1:$ALERTMANAGER_PORT"
      am_args=(--alertmanager-url "$ALERTMANAGER_URL")
    else
      echo "Alertmanager did not start (is port $ALERTMANAGER_PORT taken? set ALERTMANAGER_PORT); see var/alertmanager.log" >&2
    fi
  else
    echo "==> to see the portal's alerts fire: apt-get install prometheus-alertmanager, then re-run"
  fi
  python -m simcluster.promconfig --kubeconfig "$KUBECONFIG_PATH" \
    --out var/prometheus.yml --scrape-interval 5s \
    --portal-url "http://127.0.0.1:$PORT" --metrics-token-file var/metrics-token \
    --rule-file var/vnpu-alerts.rules.yml "${am_args[@]}"
  setsid prometheus --config.file=var/prometheus.yml --storage.tsdb.path=var/prometheus \
    --web.listen-address="127.0.0.1:$PROM_PORT" >var/prometheus.log 2>&1 &
  prom_pid=$!
  pids+=("$prom_pid")
  prom_url="http://127.0.0.1:$PROM_PORT"
  if wait_ready "$prom_pid" "$prom_url"; then
    export PROMETHEUS_URL="$prom_url"
  fi
  # A demo lives minutes, not hours: its idle slices are flagged after two.
  export IDLE_SLICE_AFTER_SECONDS="${IDLE_SLICE_AFTER_SECONDS:-120}"
  if [ -z "${PROMETHEUS_URL:-}" ]; then
    echo "Prometheus did not start (is port $PROM_PORT taken? set PROM_PORT); see var/prometheus.log" >&2
  fi
else
  echo "==> the usage pages need Prometheus: apt-get install prometheus (Debian/Ubuntu), then re-run"
fi
python manage.py demo --kubeconfig "$KUBECONFIG_PATH"
python manage.py sync --cluster demo --once
setsid celery -A vnpuportal worker --beat --pool threads --concurrency 4 --loglevel INFO \
  --schedule var/celerybeat-schedule >var/worker.log 2>&1 &
pids+=($!)
# Start the watches now rather than at beat's first tick (30 s).
celery -A vnpuportal call apps.inventory.tasks.sync_all_clusters_task >/dev/null
echo "==> portal on http://127.0.0.1:${PORT}/  (login: admin / admin; API docs: /api/docs/)"
echo "    simulated cluster: $(grep -m1 server: "$KUBECONFIG_PATH" | awk '{print $2}')  (kubectl --kubeconfig $KUBECONFIG_PATH get pods -A)"
[ -z "${PROMETHEUS_URL:-}" ] || echo "    Prometheus: $PROMETHEUS_URL"
[ -z "${ALERTMANAGER_URL:-}" ] || echo "    Alertmanager: $ALERTMANAGER_URL  (the alerts fire after ${ALERTS_FOR:-30s})"
echo "    logs: var/worker.log var/simcluster.log${PROMETHEUS_URL:+ var/prometheus.log}${ALERTMANAGER_URL:+ var/alertmanager.log}"
# No access log: Prometheus's scrape of /metrics every 5 s would fill the
# terminal; the portal's own log lines stay.
setsid uvicorn vnpuportal.asgi:application --host 127.0.0.1 --port "$PORT" --no-access-log &
pids+=($!)
wait -n "${pids[@]}"
