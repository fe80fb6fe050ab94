// Configuration health: the portal's checks of Volcano, the device plugin and
// the device config; the state of every sync watch; restarts pending.

import { api } from "../api/client";
import type { CheckStatus, ClusterHealth, Drift, SyncCursor } from "../api/types";
import { EventTable, whenColumn, type EventColumn } from "../components/EventTable";
import { Badge, DiffView, ErrorNote, Loading, SyncBadge } from "../components/ui";
import { ago, dateTime, int } from "../lib/format";
import { Link } from "../lib/router";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { RestartsPanel } from "./Restarts";

const KIND: Record<CheckStatus, string> = { ok: "ok", warn: "warn", fail: "fail" };
const LABEL: Record<string, string> = {
  volcano_config: "Volcano scheduler config",
  component_versions: "Component versions",
  deviceshare_enabled: "deviceshare plugin",
  known_geometries: "Device config reference",
  chip_policy: "Chip choice (SchedulePolicy)",
  node_lock: "Node lock",
  predicates_plugin: "predicates plugin",
  device_config_shape: "Device config shape",
  preempt_action: "Volcano's own preemption",
  device_plugin: "HAMi device plugin",
  registrations: "Node registrations",
  device_config_drift: "Device config drift",
  volcano_queues: "Volcano queues",
};

/** Inline `code` in the fixes the API suggests. */
function withCode(text: string) {
  return text.split(/("[^"]+"|`[^`]+`)/).map((part, i) =>
    /^["`].*["`]$/.test(part) ? <code key={i}>{part.slice(1, -1)}</code> : <span key={i}>{part}</span>,
  );
}

/** A watch has failed since it last succeeded. */
function failing(c: SyncCursor): boolean {
  return !!c.last_error && (!c.last_success_at || (c.last_error_at ?? "") > c.last_success_at);
}

function syncColumns(now: number): EventColumn<SyncCursor>[] {
  return [
    { header: "Watch", className: "mono", cell: (c) => c.resource },
    { header: "resourceVersion", className: "mono muted", cell: (c) => c.resource_version || "–" },
    whenColumn((c) => c.last_success_at, { header: "Last success", now, nowrap: false }),
    whenColumn((c) => c.last_event_at, { header: "Last event", now, nowrap: false }),
    { header: "Events", num: true, cell: (c) => int(c.events) },
    { header: "Relists", num: true, cell: (c) => int(c.relists) },
    { header: "Restarts", num: true, cell: (c) => int(c.restarts) },
    {
      header: "Last error",
      maxWidth: 380,
      cell: (c) =>
        !c.served ? (
          <span className="muted">not served by this cluster (skipped)</span>
        ) : c.last_error ? (
          <span className={failing(c) ? "field-error" : "muted"} title={dateTime(c.last_error_at)}>
            {c.last_error}
          </span>
        ) : (
          <span className="muted">–</span>
        ),
    },
  ];
}

export function HealthPage() {
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const now = useNow(5000);
  const id = cluster!.id;
  const health = useApi((signal) => api.get<ClusterHealth>(`/api/clusters/${id}/health/`, signal), [id]);
  const cursors = useApi((signal) => api.get<SyncCursor[]>(`/api/clusters/${id}/sync-status/`, signal), [id]);
  const drift = useApi((signal) => api.get<Drift>(`/api/clusters/${id}/drift/`, signal), [id]);
  useThrottledEffect(
    () => {
      health.reload();
      drift.reload();
    },
    live?.ticks.object ?? 0,
    3000,
  );
  useThrottledEffect(cursors.reload, (live?.ticks.cluster ?? 0) + Math.floor(now / 15000), 5000);

  return (
    <>
      <div className="page-head">
        <h1>Configuration health</h1>
        {health.data && (
          <Badge kind={KIND[health.data.check_status]}>{health.data.check_status === "ok" ? "all checks pass" : health.data.check_status}</Badge>
        )}
        <span className="actions">
          <button
            className="btn small"
            onClick={() => {
              health.reload();
              drift.reload();
              cursors.reload();
            }}
          >
            Re-check
          </button>
        </span>
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>Checks</h2>
          <span className="right">Volcano scheduler (read as its version reads it), HAMi device plugin, device config</span>
        </div>
        <ErrorNote error={health.error} onRetry={health.reload} />
        {!health.data ? (
          !health.error && <Loading />
        ) : (
          <div data-testid="health-checks">
            {health.data.checks.map((c) => (
              <div className="chk-row" key={c.id}>
                <Badge kind={KIND[c.check_status]}>{c.check_status}</Badge>
                <b>{LABEL[c.id] ?? c.id}</b>
                <div>
                  <div>{c.message}</div>
                  {c.fix && <div className="chk-fix">Fix: {withCode(c.fix)}</div>}
                </div>
              </div>
            ))}
          </div>
        )}
      </div>

      <div className="grid cols-2 mt-14">
        <div className="panel">
          <div className="panel-head">
            <h2>Device config drift</h2>
            <span className="right">
              {drift.data && (drift.data.in_sync ? <Badge kind="ok">in sync</Badge> : <Badge kind="fail">drift</Badge>)}
              {drift.data && <span className="muted">checked {drift.data.checked === "live" ? "live" : "from sync"}</span>}
            </span>
          </div>
          <div className="panel-body">
            <ErrorNote error={drift.error} onRetry={drift.reload} />
            {drift.data &&
              (drift.data.in_sync ? (
                <div>
                  The ConfigMap holds the portal's v{drift.data.baseline_version ?? "–"} (resourceVersion {drift.data.live_resource_version || "–"}).
                </div>
              ) : (
                <>
                  <div className="mb-8">
                    Someone edited the ConfigMap outside the portal. <Link to="/templates?tab=publish">Adopt or publish over it</Link>.
                  </div>
                  <DiffView diff={drift.data.diff} />
                </>
              ))}
          </div>
        </div>
        <RestartsPanel clusterId={id} />
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>Sync watches</h2>
          <span className="right">
            {live && <SyncBadge state={live.sync.state} />} last success {ago(live?.sync.lastSyncAt, now)}
          </span>
        </div>
        {live?.sync.lastSyncError && (
          <div className="panel-body">
            <div className="field-error mono">{live.sync.lastSyncError}</div>
          </div>
        )}
        <ErrorNote error={cursors.error} onRetry={cursors.reload} />
        <EventTable rows={cursors.data ?? []} rowKey={(c) => c.resource} columns={syncColumns(now)} testId="sync-table" scroll />
      </div>
    </>
  );
}
