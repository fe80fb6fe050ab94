#!/usr/bin/env bash
# Install (Debian's apt) and start what the full test suite talks to, on a fresh
# machine or one where they stopped:
#   - PostgreSQL on 127.0.0.1:5432, trust auth for user postgres, database `test`;
#   - Redis on 127.0.0.1:6379 (no persistence);
#   - Chromium for the browser tests (and a Chinese font, so that the
#     screenshots of the Chinese UI show characters, not boxes), shellcheck for
#     the entrypoint scripts' test;
#   - Prometheus and Alertmanager for the usage and alert tests and the demo
#     (installed, not started: each runs its own on a port of its own).
# Idempotent: what is installed and running is left alone. Needs root (apt, pg_ctl).
set -euo pipefail

need=""
command -v redis-server >/dev/null 2>&1 || need="$need redis-server"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v shellcheck >/dev/null 2>&1 || need="$need shellcheck"
[ -d /usr/share/fonts/truetype/wqy ] || need="$need fonts-wqy-microhei"
# cgo: hydra (the sign-in tests' OpenID provider) and HAMi's scheduler link C.
command -v gcc >/dev/null 2>&1 || need="$need gcc"
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need="$need postgresql"
updated=""
if [ -n "$need" ]; then
  echo "==> apt-get install$need"
  apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi

# Prometheus without its recommends (they add the node exporter, one more
# service). Debian's package starts its own Prometheus on :9090, now and at
# boot; the suite and the demo start theirs, so that one is switched off.
if [ ! -x /usr/bin/prometheus ] && ! command -v prometheus >/dev/null 2>&1; then
  echo "==> apt-get install prometheus"
  [ -n "$updated" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  if [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  else
    service prometheus stop >/dev/null 2>&1 || true
    update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
fi

# amtool, for the check of the Alertmanager example (tests/deploy/test_alert_rules.py);
# the package's own Alertmanager is switched off like Prometheus above.
if ! command -v amtool >/dev/null 2>&1; then
  echo "==> apt-get install prometheus-alertmanager"
  [ -n "$updated" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
  if [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus-alertmanager.service >/dev/null 2>&1 || true
  else
    service prometheus-alertmanager stop >/dev/null 2>&1 || true
    update-rc.d prometheus-alertmanager disable >/dev/null 2>&1 || true
  fi
fi

# PostgreSQL: Debian's cluster, with loopback connections trusted so the suite
# connects as postgres without a password (a test machine, never production).
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  version="$(ls /etc/postgresql | sort -V | tail -1)"
  if [ -z "$version" ]; then
    echo "PostgreSQL is installed but has no cluster in /etc/postgresql" >&2
    exit 1
  fi
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  if ! grep -q "^host all postgres 127.0.0.1/32 trust" "$hba"; then
    # First match wins in pg_hba.conf: put the trust lines on top.
    { echo "host all postgres 127.0.0.1/32 trust"
      echo "host all postgres ::1/128 trust"
      cat "$hba"; } > "$hba.new"
    mv "$hba.new" "$hba"
    chown postgres:postgres "$hba"
  fi
  echo "==> starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 50); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.2; done
fi
if ! psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE test"
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "==> starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
