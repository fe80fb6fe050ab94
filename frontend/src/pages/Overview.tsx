// Overview: is everything alright, and how full is the cluster? Totals per chip
// type (live from the chips store), sync and connection state, health and
// drift banners, pending pods, usage over time and fragmentation.

import { useMemo, useState } from "react";
import { api, qs } from "../api/client";
import type { Cluster, ClusterHealth, Drift, Fragmentation, Page, PendingPod, RestartStates, SyncCursor, UsageSample } from "../api/types";
import { LineChart, seriesColor, StackBars, type Series } from "../components/Charts";
import { EventTable, whenColumn, type EventColumn } from "../components/EventTable";
import { Badge, Banner, ErrorNote, Kpi, Segmented, SyncBadge, UsageBar } from "../components/ui";
import { totalsByType, type Totals } from "../lib/chips";
import { ago, int, mb, pctText } from "../lib/format";
import { Link } from "../lib/router";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { AlertsPanel } from "./Alerts";
import { useClusters, useLiveVersion } from "../state/cluster";
import { describeActivity, type Activity, type ClusterLive } from "../live/store";
import { useT } from "../i18n/I18nProvider";
import type { Translate } from "../i18n/intl";
import { useRichT } from "../i18n/rich";

export function OverviewPage() {
  const t = useT();
  const rich = useRichT();
  const { cluster, clusters, live } = useClusters();
  const version = useLiveVersion(live);
  const now = useNow(5000);
  const id = cluster!.id;

  const byType = useMemo(() => (live ? totalsByType(live.chips.byId.values()) : new Map<string, Totals>()),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [live, live?.chips.version]);
  const all = useMemo(() => {
    const sum = { chips: 0, healthy: 0, unhealthy: 0, slices: 0, memUsed: 0, mem: 0, slotsUsed: 0, slots: 0, memFree: 0, slotsFree: 0 };
    for (const v of byType.values()) {
      sum.memFree += v.memFree;
      sum.slotsFree += v.slotsFree;
      sum.chips += v.chips;
      sum.healthy += v.healthy;
      sum.unhealthy += v.unhealthy;
      sum.slices += v.slices;
      sum.memUsed += v.memUsed;
      sum.mem += v.mem;
      sum.slotsUsed += v.slotsUsed;
      sum.slots += v.slots;
    }
    return sum;
  }, [byType]);

  const ticks = live?.ticks;
  const detail = useApi((signal) => api.get<Cluster>(`/api/clusters/${id}/`, signal), [id]);
  useThrottledEffect(detail.reload, ticks?.cluster ?? 0, 2000);
  const watches = useApi((signal) => api.get<SyncCursor[]>(`/api/clusters/${id}/sync-status/`, signal), [id]);
  useThrottledEffect(watches.reload, (ticks?.cluster ?? 0) + Math.floor(now / 30_000), 5000);
  const failingWatches = (watches.data ?? []).filter(
    (c) => c.last_error && (!c.last_success_at || (c.last_error_at ?? "") > c.last_success_at),
  );
  const pending = useApi(
    (signal) => api.get<Page<PendingPod>>(`/api/pending-pods/${qs({ cluster: id, page_size: 8 })}`, signal),
    [id],
  );
  useThrottledEffect(pending.reload, ticks?.pending ?? 0, 2000);
  const health = useApi((signal) => api.get<ClusterHealth>(`/api/clusters/${id}/health/`, signal), [id]);
  const drift = useApi((signal) => api.get<Drift>(`/api/clusters/${id}/drift/?live=false`, signal), [id]);
  const restarts = useApi((signal) => api.get<RestartStates>(`/api/clusters/${id}/restarts/`, signal), [id]);
  useThrottledEffect(
    () => {
      health.reload();
      drift.reload();
      restarts.reload();
    },
    ticks?.object ?? 0,
    3000,
  );

  const sync = live?.sync ?? { state: cluster!.sync_state, lastSyncAt: cluster!.last_sync_at, lastSyncError: cluster!.last_sync_error };
  const syncError = sync.lastSyncError || detail.data?.last_sync_error || "";
  const pendingCount = pending.data?.count ?? live?.pendingCount ?? null;
  const pendingRestarts = restarts.data?.components.filter((c) => c.restart_state === "restart_pending") ?? [];
  const failing = health.data?.checks.filter((c) => c.check_status === "fail") ?? [];
  const warning = health.data?.checks.filter((c) => c.check_status === "warn") ?? [];

  return (
    <>
      <div className="page-head">
        <h1>{t("overview.title")}</h1>
        <span className="sub">
          {cluster!.name}
          {cluster!.description ? ` — ${cluster!.description}` : ""}
        </span>
      </div>

      {(sync.state === "stale" || sync.state === "error") && (
        <Banner kind={sync.state === "error" ? "error" : "warn"} testId="sync-banner">
          {rich("overview.sync.banner", {
            state: sync.state,
            ago: ago(sync.lastSyncAt, now),
            hasError: syncError ? "yes" : "no",
            error: syncError,
            mono: (chunks) => <span className="mono">{chunks}</span>,
            link: (chunks) => <Link to="/health">{chunks}</Link>,
          })}
        </Banner>
      )}
      {sync.state === "never" && <Banner kind="info">{t("overview.sync.never")}</Banner>}
      {drift.data && !drift.data.in_sync && (
        <Banner
          kind="error"
          testId="drift-banner"
          action={
            <Link className="btn small" to="/templates?tab=publish">
              {t("overview.review")}
            </Link>
          }
        >
          {rich("overview.drift", { live: drift.data.live_version, baseline: drift.data.baseline_version })}
        </Banner>
      )}
      {pendingRestarts.length > 0 && (
        <Banner
          kind="warn"
          testId="restart-banner"
          action={
            <Link className="btn small" to="/templates?tab=publish">
              {t("overview.restarts")}
            </Link>
          }
        >
          {rich("overview.restart", {
            version: restarts.data?.config_version,
            components: pendingRestarts.map((c) => c.component).join(", "),
            count: pendingRestarts.length,
            placed: restarts.data?.in_effect.pending_restart ? "yes" : "no",
            inEffect: restarts.data?.in_effect.version,
            loader: restarts.data?.in_effect.loaded_by,
          })}
        </Banner>
      )}
      {failing.length > 0 && (
        <Banner kind="error" testId="health-banner" action={<Link className="btn small" to="/health">{t("overview.details")}</Link>}>
          {rich("overview.health.failing", { count: failing.length, messages: failing.map((c) => c.message).join(" · ") })}
        </Banner>
      )}
      {failing.length === 0 && warning.length > 0 && (
        <Banner kind="warn" testId="health-banner" action={<Link className="btn small" to="/health">{t("overview.details")}</Link>}>
          {rich("overview.health.warning", { count: warning.length, messages: warning[0].message })}
        </Banner>
      )}

      <div className="kpis">
        <Kpi label={t("overview.kpi.nodes")} value={int(live?.nodeCount ?? null)} hint={<Link to="/chips">{t("overview.kpi.nodesHint")}</Link>} />
        <Kpi
          label={t("overview.kpi.chips")}
          value={int(all.chips)}
          testId="kpi-chips"
          tone={all.unhealthy ? "warn" : undefined}
          hint={all.unhealthy ? <span className="hot-text">{t("overview.kpi.unhealthy", { count: all.unhealthy })}</span> : t("overview.kpi.allHealthy")}
        />
        <Kpi
          label={t("overview.kpi.slices")}
          value={int(all.slices)}
          hint={<Link to="/slices">{t("overview.kpi.browseSlices")}</Link>}
          testId="kpi-slices"
        />
        <Kpi
          label={t("overview.kpi.freeMemory")}
          value={mb(all.memFree)}
          hint={usedOf(t, pctText(all.memUsed, all.mem), mb(all.mem), all.mem - all.memUsed - all.memFree, mb)}
          testId="kpi-memory"
        />
        <Kpi
          label={t("overview.kpi.freeSlots")}
          value={int(all.slotsFree)}
          hint={usedOf(t, pctText(all.slotsUsed, all.slots), int(all.slots), all.slots - all.slotsUsed - all.slotsFree, int)}
        />
        <Kpi
          label={t("overview.kpi.pending")}
          value={pendingCount === null ? "–" : int(pendingCount)}
          tone={pendingCount ? "warn" : undefined}
          hint={t(pendingCount ? "overview.kpi.waitingForVnpu" : "overview.kpi.noneWaiting")}
          testId="kpi-pending"
        />
        <Kpi
          label={t("overview.kpi.sync")}
          value={<SyncBadge state={sync.state} />}
          tone={failingWatches.length ? "warn" : undefined}
          testId="kpi-sync"
          hint={
            <>
              {t("overview.kpi.last", { ago: ago(sync.lastSyncAt, now) })}
              {detail.data?.sync_lag_seconds != null ? ` · ${t("overview.kpi.lag", { seconds: Math.round(detail.data.sync_lag_seconds) })}` : ""}
              <br />
              {watches.data &&
                (failingWatches.length ? (
                  <Link to="/health" className="hot-text">
                    {t("overview.kpi.watchesFailing", { failing: failingWatches.length, total: watches.data.length })}
                  </Link>
                ) : (
                  <Link to="/health">{t("overview.kpi.watchesOk", { count: watches.data.length })}</Link>
                ))}
            </>
          }
        />
      </div>

      <div className="grid cols-2 mt-14">
        {[...byType.entries()].map(([type, totals]) => (
          <TypeCard key={type} type={type} t={totals} />
        ))}
        {byType.size === 0 && (
          <div className="panel">
            <div className="empty">{t(live?.connection === "live" ? "overview.noChips" : "overview.waitingSnapshot")}</div>
          </div>
        )}
      </div>

      <div className="mt-14">
        <AlertsPanel />
      </div>

      <div className="grid cols-2 mt-14">
        <UsageChart clusterId={id} live={live} version={version} />
        <FragmentationPanel clusterId={id} chipsVersion={live?.chips.version ?? 0} />
      </div>

      <div className="grid pending-grid mt-14">
      <div className="panel">
        <div className="panel-head">
          <h2>{t("overview.kpi.pending")}</h2>
          <span className="right">{pendingCount ? t("overview.pending.waiting", { count: pendingCount }) : ""}</span>
        </div>
        <ErrorNote error={pending.error} onRetry={pending.reload} />
        <EventTable
          rows={pending.data?.results ?? []}
          rowKey={(p) => p.id}
          columns={pendingColumns(now, t)}
          testId="pending-table"
          scroll
          empty={pending.data ? t("overview.pending.empty") : undefined}
        />
      </div>
      <ActivityPanel live={live} now={now} />
      </div>

      {clusters.length > 1 && (
        <div className="panel">
          <div className="panel-head">
            <h2>{t("overview.allClusters")}</h2>
          </div>
          <EventTable rows={clusters} rowKey={(c) => c.id} columns={clusterColumns(now, t)} rowClass={(c) => (c.id === id ? "selected" : "")} />
        </div>
      )}
    </>
  );
}

function pendingColumns(now: number, t: Translate): EventColumn<PendingPod>[] {
  return [
    {
      header: "Pod",
      className: "mono",
      cell: (p) => (
        <>
          {p.namespace}/{p.name}
        </>
      ),
    },
    { header: t("overview.col.chipType"), cell: (p) => p.common_word || "–" },
    { header: t("overview.col.memory"), num: true, cell: (p) => mb(p.memory) },
    {
      header: t("overview.col.priority"),
      cell: (p) => (
        <>
          {p.priority_class || "–"} <span className="muted">({p.priority})</span>
        </>
      ),
    },
    { header: t("overview.col.whyPending"), maxWidth: 520, cell: (p) => p.reason || <span className="muted">{t("overview.col.noSchedulerEvent")}</span> },
    { header: t("overview.col.waiting"), className: "nowrap", cell: (p) => ago(p.created_at, now) },
  ];
}

function clusterColumns(now: number, t: Translate): EventColumn<Cluster>[] {
  return [
    { header: t("overview.col.cluster"), cell: (c) => c.name },
    { header: t("overview.col.sync"), cell: (c) => <SyncBadge state={c.sync_state} /> },
    whenColumn((c) => c.last_sync_at, { header: t("overview.col.lastSync"), now, nowrap: false }),
    { header: t("overview.col.error"), className: "muted", cell: (c) => c.last_sync_error || "–" },
  ];
}

function ActivityPanel({ live, now }: { live: ClusterLive | null; now: number }) {
  const t = useT();
  const items = live?.activity ?? [];
  return (
    <div className="panel" data-testid="activity">
      <div className="panel-head">
        <h2>{t("overview.activity.title")}</h2>
        <span className="right">{t("overview.activity.since")}</span>
      </div>
      {items.length === 0 ? (
        <div className="empty">{t("overview.activity.quiet")}</div>
      ) : (
        <ul className="feed">
          {items.slice(0, 12).map((a, i) => (
            <li key={`${a.t}-${i}`}>
              <span className={`dot ${a.kind === "released" || a.kind === "node_removed" ? "" : a.kind === "sync" || a.kind === "node_not_ready" ? "warn" : "ok"}`} />
              <ActivityLine a={a} />
              <span className="muted nowrap">{ago(new Date(a.t).toISOString(), now)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ActivityLine({ a }: { a: Activity }) {
  const { text, detail } = describeActivity(a, useT());
  return (
    <span className="ellipsis">
      <span className="mono">{text}</span>
      {detail && <span className="muted"> {detail}</span>}
    </span>
  );
}

/**
 * "60% used of 64 GiB · 32 GiB unschedulable": the part after the dot is free
 * capacity on unhealthy or cordoned chips, where nothing can be placed.
 */
function usedOf(t: Translate, pct: string, total: string, unusable: number, format: (n: number) => string): string {
  const used = t("overview.kpi.usedOf", { pct, total });
  return unusable > 0 ? `${used} · ${t("overview.kpi.unschedulable", { amount: format(unusable) })}` : used;
}

function TypeCard({ type, t }: { type: string; t: Totals }) {
  const tr = useT();
  return (
    <div className="panel type-card" data-testid={`type-card-${type}`}>
      <div className="panel-head">
        <h2>{type}</h2>
        <Badge>{tr("overview.type.chips", { count: t.chips })}</Badge>
        {t.unhealthy > 0 && <Badge kind="hot">{tr("overview.type.unhealthy", { count: t.unhealthy })}</Badge>}
        {t.cordoned > 0 && <Badge kind="warn">{tr("overview.type.cordoned", { count: t.cordoned })}</Badge>}
        <span className="right">
          <Link to={`/chips?type=${encodeURIComponent(type)}`}>{tr("overview.type.chipsLink")}</Link>
        </span>
      </div>
      <div className="panel-body">
        <div className="facts">
          <span>
            <b>{int(t.slices)}</b> {tr("overview.type.slices")}
          </span>
          <span title={tr("overview.type.schedulableTitle")}>
            <b>{mb(t.memFree)}</b> {tr("overview.type.memoryFree")}
          </span>
          <span title={tr("overview.type.schedulableTitle")}>
            <b>{int(t.slotsFree)}</b> {tr("overview.type.slotsFree")}
          </span>
          <span>
            <b>{int(t.full)}</b> {tr("overview.type.fullChips")}
          </span>
        </div>
        <div className="metrics">
          <span className="k">{tr("overview.memory")}</span>
          <UsageBar used={t.memUsed} total={t.mem} text={`${mb(t.memUsed)} / ${mb(t.mem)} · ${pctText(t.memUsed, t.mem)}`} />
          <span className="k">{tr("overview.slots")}</span>
          <UsageBar used={t.slotsUsed} total={t.slots} text={`${int(t.slotsUsed)} / ${int(t.slots)} · ${pctText(t.slotsUsed, t.slots)}`} />
          <span className="k">{tr("overview.aicore")}</span>
          <UsageBar used={t.coreUsed} total={t.core} text={`${int(t.coreUsed)} / ${int(t.core)} · ${pctText(t.coreUsed, t.core)}`} />
          <span className="k">{tr("overview.aicpu")}</span>
          <UsageBar used={t.cpuUsed} total={t.cpu} text={t.cpu ? `${int(t.cpuUsed)} / ${int(t.cpu)} · ${pctText(t.cpuUsed, t.cpu)}` : tr("overview.notReported")} />
        </div>
      </div>
    </div>
  );
}

type ChartMetric = "memory" | "slots" | "aicore";

function UsageChart({ clusterId, live, version }: { clusterId: number; live: ClusterLive | null; version: number }) {
  const t = useT();
  const [hours, setHours] = useState("6");
  const [metric, setMetric] = useState<ChartMetric>("memory");
  const history = useApi(
    (signal) => api.get<UsageSample[]>(`/api/clusters/${clusterId}/usage-history/${qs({ hours })}`, signal),
    [clusterId, hours],
  );
  const series = useMemo<Series[]>(() => {
    const by = new Map<string, { t: number; v: number }[]>();
    const add = (type: string, at: number, used: number, total: number) => {
      if (!by.has(type)) by.set(type, []);
      by.get(type)!.push({ t: at, v: total > 0 ? (used / total) * 100 : 0 });
    };
    for (const s of history.data ?? []) {
      const [used, total] =
        metric === "memory" ? [s.memory_used, s.memory_total] : metric === "slots" ? [s.slots_used, s.slots_total] : [s.aicore_used, s.aicore_total];
      add(s.common_word, Date.parse(s.at), used, total);
    }
    const since = Date.now() - Number(hours) * 3600_000;
    for (const sample of live?.samples ?? []) {
      if (sample.t < since) continue;
      for (const [type, v] of Object.entries(sample.byType)) {
        const [used, total] = metric === "memory" ? [v.memUsed, v.mem] : metric === "slots" ? [v.slotsUsed, v.slots] : [v.coreUsed, v.core];
        add(type, sample.t, used, total);
      }
    }
    return [...by.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, points], i) => ({ name, color: seriesColor(i), points: points.sort((a, b) => a.t - b.t) }));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [history.data, metric, hours, live, version]);

  return (
    <div className="panel">
      <div className="panel-head">
        <h2>{t("overview.chart.title")}</h2>
        <span className="right">
          <Segmented
            value={metric}
            onChange={setMetric}
            label={t("overview.chart.metric")}
            options={[
              { key: "memory", label: t("overview.memory") },
              { key: "slots", label: t("overview.slots") },
              { key: "aicore", label: t("overview.aicore") },
            ]}
          />
          <select className="select" value={hours} onChange={(e) => setHours(e.target.value)} aria-label={t("overview.chart.period")}>
            <option value="1">1 h</option>
            <option value="6">6 h</option>
            <option value="24">24 h</option>
            <option value="168">7 d</option>
          </select>
        </span>
      </div>
      <div className="panel-body">
        <ErrorNote error={history.error} onRetry={history.reload} />
        {/* samples come once a minute: three missed ones mean the worker was down */}
        <LineChart series={series} yMax={100} until={Date.now()} gapMs={3 * 60_000} yFormat={(v) => `${Math.round(v)}%`} empty={t("overview.chart.empty")} />
      </div>
    </div>
  );
}

function FragmentationPanel({ clusterId, chipsVersion }: { clusterId: number; chipsVersion: number }) {
  const t = useT();
  const frag = useApi((signal) => api.get<Fragmentation[]>(`/api/clusters/${clusterId}/fragmentation/`, signal), [clusterId]);
  // At the live cards' pace (2 s): the figures are grouped in the database
  // (a few rows per chip type), and a panel that lagged the cards beside it
  // by ten seconds contradicted them.
  useThrottledEffect(frag.reload, chipsVersion, 2000);
  const rows = (frag.data ?? []).map((f) => ({
    label: f.common_word,
    total: f.free_memory,
    parts: [
      { name: t("overview.frag.stranded"), value: f.stranded_memory, color: "#e06c5f" },
      { name: t("overview.frag.usable"), value: Math.max(0, f.free_memory - f.stranded_memory), color: "#7cc79a" },
    ],
    note: t("overview.frag.note", { amount: mb(f.stranded_memory), count: f.stranded_chips }),
  }));
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>{t("overview.frag.title")}</h2>
        <span className="right">{t("overview.frag.sub")}</span>
      </div>
      <div className="panel-body">
        <ErrorNote error={frag.error} onRetry={frag.reload} />
        <StackBars rows={rows} format={mb} />
        <div className="legend mt-12">
          <span>
            <span className="swatch usable" />
            {t("overview.frag.usableLegend")}
          </span>
          <span>
            <span className="swatch stranded" />
            {t("overview.frag.strandedLegend")}
          </span>
        </div>
        {(frag.data ?? []).map((f) => (
          <div key={f.common_word} className="mt-12" data-testid={`room-${f.common_word}`}>
            <div className="muted small-text mb-4">
              {t("overview.frag.room", {
                type: f.common_word,
                free: mb(f.free_memory),
                count: f.eligible_chips,
                fits: f.largest_template ? "yes" : "no",
                largest: f.largest_template,
                memory: mb(f.largest_template_memory),
              })}
            </div>
            {f.templates.length > 0 && (
              <table className="data compact">
                <thead>
                  <tr>
                    <th>{t("overview.frag.template")}</th>
                    <th className="num">{t("overview.frag.slicesThatFit")}</th>
                    <th className="num">{t("overview.frag.chipsWithRoom")}</th>
                    <th className="num" title={t("overview.frag.strandedForItTitle")}>
                      {t("overview.frag.strandedForIt")}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {f.templates.map((tpl) => (
                    <tr key={tpl.name}>
                      <td className="mono">
                        {tpl.name} <span className="muted">{mb(tpl.memory)}</span>
                      </td>
                      <td className="num">{tpl.slices_that_fit}</td>
                      <td className="num">{tpl.chips_with_room}</td>
                      <td className="num">{mb(tpl.stranded_memory)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        ))}
      </div>
    </div>
  );
}
