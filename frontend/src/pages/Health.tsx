// Configuration health: the portal's checks of Volcano, the device plugin and
// the device config; the state of every sync watch; restarts pending.

import type { ReactNode } from "react";
import { api } from "../api/client";
import type { CheckStatus, ClusterHealth, Drift, SyncCursor } from "../api/types";
import { EventTable, whenColumn, type EventColumn } from "../components/EventTable";
import { Badge, DiffView, ErrorNote, Loading, SyncBadge } from "../components/ui";
import { useI18n } from "../i18n/I18nProvider";
import type { Translate } from "../i18n/intl";
import { ago, dateTime, int } from "../lib/format";
import { Link } from "../lib/router";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { RestartsPanel } from "./Restarts";

const KIND: Record<CheckStatus, string> = { ok: "ok", warn: "warn", fail: "fail" };
// A check's status in words, by message id.
const STATUS: Record<CheckStatus, string> = { ok: "health.status.ok", warn: "health.status.warn", fail: "health.status.fail" };
// The checks' names by message id (a check the UI does not know shows its id).
const LABEL: Record<string, string> = {
  volcano_config: "health.check.volcanoConfig",
  component_versions: "health.check.componentVersions",
  deviceshare_enabled: "health.check.deviceshareEnabled",
  known_geometries: "health.check.knownGeometries",
  chip_policy: "health.check.chipPolicy",
  node_lock: "health.check.nodeLock",
  predicates_plugin: "health.check.predicatesPlugin",
  device_config_shape: "health.check.deviceConfigShape",
  preempt_action: "health.check.preemptAction",
  device_plugin: "health.check.devicePlugin",
  registrations: "health.check.registrations",
  device_config_drift: "health.check.deviceConfigDrift",
  volcano_queues: "health.check.volcanoQueues",
};

/** Inline `code` in the fixes the API suggests. */
function withCode(text: string) {
  return text.split(/("[^"]+"|`[^`]+`)/).map((part, i) =>
    /^["`].*["`]$/.test(part) ? <code key={i}>{part.slice(1, -1)}</code> : <span key={i}>{part}</span>,
  );
}

const adoptLink = (chunks: ReactNode[]) => <Link to="/templates?tab=publish">{chunks}</Link>;

/** A watch has failed since it last succeeded. */
function failing(c: SyncCursor): boolean {
  return !!c.last_error && (!c.last_success_at || (c.last_error_at ?? "") > c.last_success_at);
}

function syncColumns(now: number, t: Translate): EventColumn<SyncCursor>[] {
  return [
    { header: t("health.col.watch"), className: "mono", cell: (c) => c.resource },
    // i18n-ignore: the Kubernetes field's name and CSS classes
    { header: "resourceVersion", className: "mono muted", cell: (c) => c.resource_version || "–" },
    whenColumn((c) => c.last_success_at, { header: t("health.col.lastSuccess"), now, nowrap: false }),
    whenColumn((c) => c.last_event_at, { header: t("health.col.lastEvent"), now, nowrap: false }),
    { header: t("health.col.events"), num: true, cell: (c) => int(c.events) },
    { header: t("health.col.relists"), num: true, cell: (c) => int(c.relists) },
    { header: t("health.col.restarts"), num: true, cell: (c) => int(c.restarts) },
    {
      header: t("health.col.lastError"),
      maxWidth: 380,
      cell: (c) =>
        !c.served ? (
          <span className="muted">{t("health.notServed")}</span>
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
  const { t, intl } = useI18n();
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
        <h1>{t("health.title")}</h1>
        {health.data && (
          <Badge kind={KIND[health.data.check_status]}>
            {health.data.check_status === "ok" ? t("health.allPass") : t(STATUS[health.data.check_status])}
          </Badge>
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
            {t("health.recheck")}
          </button>
        </span>
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>{t("health.checks")}</h2>
          <span className="right">{t("health.checksSubtitle")}</span>
        </div>
        <ErrorNote error={health.error} onRetry={health.reload} />
        {!health.data ? (
          !health.error && <Loading />
        ) : (
          <div data-testid="health-checks">
            {health.data.checks.map((c) => (
              <div className="chk-row" key={c.id}>
                <Badge kind={KIND[c.check_status]}>{STATUS[c.check_status] ? t(STATUS[c.check_status]) : c.check_status}</Badge>
                <b>{LABEL[c.id] ? t(LABEL[c.id]) : c.id}</b>
                <div>
                  <div>{c.message}</div>
                  {c.fix && (
                    <div className="chk-fix">
                      {intl.formatMessage({ id: "health.fix" }, { fix: withCode(c.fix) })}
                    </div>
                  )}
                </div>
              </div>
            ))}
          </div>
        )}
      </div>

      <div className="grid cols-2 mt-14">
        <div className="panel">
          <div className="panel-head">
            <h2>{t("health.drift")}</h2>
            <span className="right">
              {drift.data && (drift.data.in_sync ? <Badge kind="ok">{t("health.inSync")}</Badge> : <Badge kind="fail">{t("health.driftBadge")}</Badge>)}
              {drift.data && <span className="muted">{drift.data.checked === "live" ? t("health.checkedLive") : t("health.checkedFromSync")}</span>}
            </span>
          </div>
          <div className="panel-body">
            <ErrorNote error={drift.error} onRetry={drift.reload} />
            {drift.data &&
              (drift.data.in_sync ? (
                <div>
                  {t("health.holds", { version: drift.data.baseline_version ?? "–", resourceVersion: drift.data.live_resource_version || "–" })}
                </div>
              ) : (
                <>
                  <div className="mb-8">{intl.formatMessage({ id: "health.editedOutside" }, { link: adoptLink })}</div>
                  <DiffView diff={drift.data.diff} />
                </>
              ))}
          </div>
        </div>
        <RestartsPanel clusterId={id} />
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>{t("health.syncWatches")}</h2>
          <span className="right">
            {live && <SyncBadge state={live.sync.state} />} {t("health.lastSuccess", { ago: ago(live?.sync.lastSyncAt, now) })}
          </span>
        </div>
        {live?.sync.lastSyncError && (
          <div className="panel-body">
            <div className="field-error mono">{live.sync.lastSyncError}</div>
          </div>
        )}
        <ErrorNote error={cursors.error} onRetry={cursors.reload} />
        <EventTable rows={cursors.data ?? []} rowKey={(c) => c.resource} columns={syncColumns(now, t)} testId="sync-table" scroll />
      </div>
    </>
  );
}
