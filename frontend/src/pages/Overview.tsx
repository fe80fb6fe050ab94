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

export function OverviewPage() {
  const { cluster, clusters, live } = useClusters();
  const version = useLiveVersion(live);
  const now = useNow(5000);
  const id = cluster!.id;

  const byType = useMemo(() => (live ? totalsByType(live.chips.byId.values()) : new Map<string, Totals>()),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [live, live?.chips.version]);
  const all = useMemo(() => {
    const t = { chips: 0, healthy: 0, unhealthy: 0, slices: 0, memUsed: 0, mem: 0, slotsUsed: 0, slots: 0, memFree: 0, slotsFree: 0 };
    for (const v of byType.values()) {
      t.memFree += v.memFree;
      t.slotsFree += v.slotsFree;
      t.chips += v.chips;
      t.healthy += v.healthy;
      t.unhealthy += v.unhealthy;
      t.slices += v.slices;
      t.memUsed += v.memUsed;
      t.mem += v.mem;
      t.slotsUsed += v.slotsUsed;
      t.slots += v.slots;
    }
    return t;
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
        <h1>Overview</h1>
        <span className="sub">
          {cluster!.name}
          {cluster!.description ? ` — ${cluster!.description}` : ""}
        </span>
      </div>

      {(sync.state === "stale" || sync.state === "error") && (
        <Banner kind={sync.state === "error" ? "error" : "warn"} testId="sync-banner">
          <b>Sync {sync.state}.</b> The portal last heard from the cluster {ago(sync.lastSyncAt, now)}
          {syncError ? <>: <span className="mono">{syncError}</span></> : "."} What you see may not be the cluster's current state.{" "}
          <Link to="/health">Sync details</Link>
        </Banner>
      )}
      {sync.state === "never" && <Banner kind="info">This cluster has not been synced yet.</Banner>}
      {drift.data && !drift.data.in_sync && (
        <Banner kind="error" testId="drift-banner" action={<Link className="btn small" to="/templates?tab=publish">Review</Link>}>
          <b>Device config drift.</b> The ConfigMap was edited outside the portal (live v{drift.data.live_version}, portal baseline v
          {drift.data.baseline_version}). Publishing is blocked until an admin adopts the live config or publishes over it.
        </Banner>
      )}
      {pendingRestarts.length > 0 && (
        <Banner kind="warn" testId="restart-banner" action={<Link className="btn small" to="/templates?tab=publish">Restarts</Link>}>
          <b>
            Device config v{restarts.data?.config_version} is not in effect everywhere yet:
          </b>{" "}
          {pendingRestarts.map((c) => c.component).join(", ")} still run{pendingRestarts.length === 1 ? "s" : ""} the old config until restarted.
          {restarts.data?.in_effect.pending_restart && ` Requests are placed by v${restarts.data.in_effect.version}, the version ${restarts.data.in_effect.loaded_by} loaded.`}
        </Banner>
      )}
      {failing.length > 0 && (
        <Banner kind="error" testId="health-banner" action={<Link className="btn small" to="/health">Details</Link>}>
          <b>{failing.length} configuration check{failing.length > 1 ? "s" : ""} failing:</b> {failing.map((c) => c.message).join(" · ")}
        </Banner>
      )}
      {failing.length === 0 && warning.length > 0 && (
        <Banner kind="warn" testId="health-banner" action={<Link className="btn small" to="/health">Details</Link>}>
          <b>{warning.length} configuration warning{warning.length > 1 ? "s" : ""}:</b> {warning[0].message}
        </Banner>
      )}

      <div className="kpis">
        <Kpi label="Nodes" value={int(live?.nodeCount ?? null)} hint={<Link to="/chips">nodes & chips</Link>} />
        <Kpi
          label="Chips"
          value={int(all.chips)}
          testId="kpi-chips"
          tone={all.unhealthy ? "warn" : undefined}
          hint={all.unhealthy ? <span className="hot-text">{all.unhealthy} unhealthy</span> : "all healthy"}
        />
        <Kpi label="Slices" value={int(all.slices)} hint={<Link to="/slices">browse slices</Link>} testId="kpi-slices" />
        <Kpi label="Free memory" value={mb(all.memFree)} hint={`${pctText(all.memUsed, all.mem)} used of ${mb(all.mem)}${unusable(all.mem - all.memUsed - all.memFree, mb)}`} testId="kpi-memory" />
        <Kpi label="Free slots" value={int(all.slotsFree)} hint={`${pctText(all.slotsUsed, all.slots)} used of ${int(all.slots)}${unusable(all.slots - all.slotsUsed - all.slotsFree, int)}`} />
        <Kpi
          label="Pending pods"
          value={pendingCount === null ? "–" : int(pendingCount)}
          tone={pendingCount ? "warn" : undefined}
          hint={pendingCount ? "waiting for a vNPU" : "none waiting"}
          testId="kpi-pending"
        />
        <Kpi
          label="Sync"
          value={<SyncBadge state={sync.state} />}
          tone={failingWatches.length ? "warn" : undefined}
          testId="kpi-sync"
          hint={
            <>
              last {ago(sync.lastSyncAt, now)}
              {detail.data?.sync_lag_seconds != null ? ` · lag ${Math.round(detail.data.sync_lag_seconds)}s` : ""}
              <br />
              {watches.data &&
                (failingWatches.length ? (
                  <Link to="/health" className="hot-text">
                    {failingWatches.length} of {watches.data.length} watches failing
                  </Link>
                ) : (
                  <Link to="/health">{watches.data.length} watches ok</Link>
                ))}
            </>
          }
        />
      </div>

      <div className="grid cols-2 mt-14">
        {[...byType.entries()].map(([type, t]) => (
          <TypeCard key={type} type={type} t={t} />
        ))}
        {byType.size === 0 && (
          <div className="panel">
            <div className="empty">{live?.connection === "live" ? "No chips registered in this cluster." : "Waiting for the live snapshot…"}</div>
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
          <h2>Pending pods</h2>
          <span className="right">{pendingCount ? `${int(pendingCount)} waiting` : ""}</span>
        </div>
        <ErrorNote error={pending.error} onRetry={pending.reload} />
        <EventTable
          rows={pending.data?.results ?? []}
          rowKey={(p) => p.id}
          columns={pendingColumns(now)}
          testId="pending-table"
          scroll
          empty={pending.data ? "No pod is waiting for a vNPU." : undefined}
        />
      </div>
      <ActivityPanel live={live} now={now} />
      </div>

      {clusters.length > 1 && (
        <div className="panel">
          <div className="panel-head">
            <h2>All clusters</h2>
          </div>
          <EventTable rows={clusters} rowKey={(c) => c.id} columns={clusterColumns(now)} rowClass={(c) => (c.id === id ? "selected" : "")} />
        </div>
      )}
    </>
  );
}

function pendingColumns(now: number): EventColumn<PendingPod>[] {
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
    { header: "Chip type", cell: (p) => p.common_word || "–" },
    { header: "Memory", num: true, cell: (p) => mb(p.memory) },
    {
      header: "Priority",
      cell: (p) => (
        <>
          {p.priority_class || "–"} <span className="muted">({p.priority})</span>
        </>
      ),
    },
    { header: "Why pending", maxWidth: 520, cell: (p) => p.reason || <span className="muted">no scheduler event yet</span> },
    { header: "Waiting", className: "nowrap", cell: (p) => ago(p.created_at, now) },
  ];
}

function clusterColumns(now: number): EventColumn<Cluster>[] {
  return [
    { header: "Cluster", cell: (c) => c.name },
    { header: "Sync", cell: (c) => <SyncBadge state={c.sync_state} /> },
    whenColumn((c) => c.last_sync_at, { header: "Last sync", now, nowrap: false }),
    { header: "Error", className: "muted", cell: (c) => c.last_sync_error || "–" },
  ];
}

function ActivityPanel({ live, now }: { live: ClusterLive | null; now: number }) {
  const items = live?.activity ?? [];
  return (
    <div className="panel" data-testid="activity">
      <div className="panel-head">
        <h2>Live activity</h2>
        <span className="right">since this page opened</span>
      </div>
      {items.length === 0 ? (
        <div className="empty">Quiet so far: slices placed and released will show up here.</div>
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

/** " · 32 GiB unschedulable": free capacity on unhealthy or cordoned chips, where nothing can be placed. */
function unusable(amount: number, format: (n: number) => string): string {
  return amount > 0 ? ` · ${format(amount)} unschedulable` : "";
}

function TypeCard({ type, t }: { type: string; t: Totals }) {
  return (
    <div className="panel type-card" data-testid={`type-card-${type}`}>
      <div className="panel-head">
        <h2>{type}</h2>
        <Badge>{t.chips} chips</Badge>
        {t.unhealthy > 0 && <Badge kind="hot">{t.unhealthy} unhealthy</Badge>}
        {t.cordoned > 0 && <Badge kind="warn">{t.cordoned} cordoned</Badge>}
        <span className="right">
          <Link to={`/chips?type=${encodeURIComponent(type)}`}>chips →</Link>
        </span>
      </div>
      <div className="panel-body">
        <div className="facts">
          <span>
            <b>{int(t.slices)}</b> slices
          </span>
          <span title="on healthy, schedulable chips">
            <b>{mb(t.memFree)}</b> memory free
          </span>
          <span title="on healthy, schedulable chips">
            <b>{int(t.slotsFree)}</b> slots free
          </span>
          <span>
            <b>{int(t.full)}</b> full chips
          </span>
        </div>
        <div className="metrics">
          <span className="k">Memory</span>
          <UsageBar used={t.memUsed} total={t.mem} text={`${mb(t.memUsed)} / ${mb(t.mem)} · ${pctText(t.memUsed, t.mem)}`} />
          <span className="k">Slots</span>
          <UsageBar used={t.slotsUsed} total={t.slots} text={`${int(t.slotsUsed)} / ${int(t.slots)} · ${pctText(t.slotsUsed, t.slots)}`} />
          <span className="k">AICore</span>
          <UsageBar used={t.coreUsed} total={t.core} text={`${int(t.coreUsed)} / ${int(t.core)} · ${pctText(t.coreUsed, t.core)}`} />
          <span className="k">AICPU</span>
          <UsageBar used={t.cpuUsed} total={t.cpu} text={t.cpu ? `${int(t.cpuUsed)} / ${int(t.cpu)} · ${pctText(t.cpuUsed, t.cpu)}` : "not reported"} />
        </div>
      </div>
    </div>
  );
}

type ChartMetric = "memory" | "slots" | "aicore";

function UsageChart({ clusterId, live, version }: { clusterId: number; live: ClusterLive | null; version: number }) {
  const [hours, setHours] = useState("6");
  const [metric, setMetric] = useState<ChartMetric>("memory");
  const history = useApi(
    (signal) => api.get<UsageSample[]>(`/api/clusters/${clusterId}/usage-history/${qs({ hours })}`, signal),
    [clusterId, hours],
  );
  const series = useMemo<Series[]>(() => {
    const by = new Map<string, { t: number; v: number }[]>();
    const add = (type: string, t: number, used: number, total: number) => {
      if (!by.has(type)) by.set(type, []);
      by.get(type)!.push({ t, v: total > 0 ? (used / total) * 100 : 0 });
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
        <h2>Usage over time</h2>
        <span className="right">
          <Segmented
            value={metric}
            onChange={setMetric}
            label="metric"
            options={[
              { key: "memory", label: "Memory" },
              { key: "slots", label: "Slots" },
              { key: "aicore", label: "AICore" },
            ]}
          />
          <select className="select" value={hours} onChange={(e) => setHours(e.target.value)} aria-label="period">
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
        <LineChart series={series} yMax={100} until={Date.now()} gapMs={3 * 60_000} yFormat={(v) => `${Math.round(v)}%`} empty="No usage samples yet (one a minute per chip type)." />
      </div>
    </div>
  );
}

function FragmentationPanel({ clusterId, chipsVersion }: { clusterId: number; chipsVersion: number }) {
  const frag = useApi((signal) => api.get<Fragmentation[]>(`/api/clusters/${clusterId}/fragmentation/`, signal), [clusterId]);
  // At the live cards' pace (2 s): the figures are grouped in the database
  // (a few rows per chip type), and a panel that lagged the cards beside it
  // by ten seconds contradicted them.
  useThrottledEffect(frag.reload, chipsVersion, 2000);
  const rows = (frag.data ?? []).map((f) => ({
    label: f.common_word,
    total: f.free_memory,
    parts: [
      { name: "stranded", value: f.stranded_memory, color: "#e06c5f" },
      { name: "usable", value: Math.max(0, f.free_memory - f.stranded_memory), color: "#7cc79a" },
    ],
    note: `${mb(f.stranded_memory)} stranded on ${f.stranded_chips} chip${f.stranded_chips === 1 ? "" : "s"}`,
  }));
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>Fragmentation</h2>
        <span className="right">free memory that no template can use</span>
      </div>
      <div className="panel-body">
        <ErrorNote error={frag.error} onRetry={frag.reload} />
        <StackBars rows={rows} format={mb} />
        <div className="legend mt-12">
          <span>
            <span className="swatch usable" />
            usable free memory
          </span>
          <span>
            <span className="swatch stranded" />
            stranded: on chips where not even the smallest template fits (slot, memory, AICore or AICPU used up)
          </span>
        </div>
        {(frag.data ?? []).map((f) => (
          <div key={f.common_word} className="mt-12" data-testid={`room-${f.common_word}`}>
            <div className="muted small-text mb-4">
              {f.common_word}: {mb(f.free_memory)} free on {f.eligible_chips} usable chip{f.eligible_chips === 1 ? "" : "s"};{" "}
              {f.largest_template ? `largest slice that still fits: ${f.largest_template} (${mb(f.largest_template_memory)})` : "no template fits anywhere"}
            </div>
            {f.templates.length > 0 && (
              <table className="data compact">
                <thead>
                  <tr>
                    <th>Template</th>
                    <th className="num">Slices that fit</th>
                    <th className="num">Chips with room</th>
                    <th className="num" title="free memory slices of this size cannot use">Stranded for it</th>
                  </tr>
                </thead>
                <tbody>
                  {f.templates.map((t) => (
                    <tr key={t.name}>
                      <td className="mono">
                        {t.name} <span className="muted">{mb(t.memory)}</span>
                      </td>
                      <td className="num">{t.slices_that_fit}</td>
                      <td className="num">{t.chips_with_room}</td>
                      <td className="num">{mb(t.stranded_memory)}</td>
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
