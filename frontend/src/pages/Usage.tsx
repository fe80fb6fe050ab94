// Usage: what slices booked next to what they use (issue 18). Booking comes from
// the portal, use from Prometheus (npu-exporter) through /api/usage/. Two tabs:
// every chip of the cluster (virtual rows: there can be 8,000) and every slice;
// flags say where booking and use part ways (idle slices, slices over their
// memory, a chip whose hardware and registration disagree on its health). A
// row opens its history: used against booked over a period, drag to zoom in
// (the zoomed window is fetched again at a finer step).

import { memo, useCallback, useMemo, useState } from "react";
import { api, qs } from "../api/client";
import type { ChipUsage, MetricsStatus, SliceUsage, UsageHistory, UsageList } from "../api/types";
import { LineChart, type Series } from "../components/Charts";
import { CheckFilter, FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { VirtualRows } from "../components/VirtualRows";
import { Badge, Banner, Drawer, ErrorNote, Loading, Segmented, UsageBar } from "../components/ui";
import { dateTime, duration, int, mb } from "../lib/format";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useLiveReload } from "../lib/useApi";
import {
  bookedUsedText,
  chipAicore,
  chipMemory,
  CHIP_SORTS,
  filterUsageChips,
  filterUsageSlices,
  flagView,
  healthView,
  historyCharts,
  historyUrl,
  HISTORY_RANGES,
  isHistoryRange,
  metricsBanner,
  percent,
  rangeWindow,
  sliceMemory,
  sortUsageChips,
  type BookedUsed,
  type ChipSort,
  type HistoryLine,
  type HistoryRange,
  type TimeWindow,
  type UsageKind,
} from "../lib/usage";
import { useClusters } from "../state/cluster";

/** Usage comes from Prometheus, not from live events: poll it now and then. */
const POLL_MS = 30_000;
/** Row height: .usage-chip-row's and .usage-slice-row's height in styles.css. */
const ROW = 30;

export function UsagePage() {
  const [tab, setTab] = useQueryParam("tab", "chips");
  const [, setChip] = useQueryParam("chip");
  const [, setSlice] = useQueryParam("slice");
  const current: UsageKind = tab === "slices" ? "slices" : "chips";
  const switchTo = (next: UsageKind) => {
    setChip("");
    setSlice("");
    setTab(next);
  };
  return (
    <>
      <div className="page-head">
        <h1>Usage</h1>
        <span className="sub">booked by slices, next to what they use</span>
      </div>
      <div className="panel">
        <div className="tabs" role="tablist">
          {(
            [
              ["chips", "Chips"],
              ["slices", "Slices"],
            ] as [UsageKind, string][]
          ).map(([key, label]) => (
            <button
              key={key}
              role="tab"
              className={current === key ? "on" : ""}
              aria-selected={current === key}
              onClick={() => switchTo(key)}
              data-testid={`usage-tab-${key}`}
            >
              {label}
            </button>
          ))}
        </div>
        {current === "chips" ? <ChipsTab /> : <SlicesTab />}
      </div>
    </>
  );
}

/** Why used figures are missing, when they are. */
export function MetricsBanner({ metrics }: { metrics: MetricsStatus | undefined }) {
  const text = metricsBanner(metrics);
  if (!text) return null;
  return (
    <div className="inset-top">
      <Banner kind={metrics?.configured ? "warn" : "info"} testId="metrics-banner">
        {text}
      </Banner>
    </div>
  );
}

/** Two layers on one bar: booked (light) and used (the stripe under it; red above what was booked). */
export function BookedUsedBar({ bar, text, title, testId }: { bar: BookedUsed; text?: string; title?: string; testId?: string }) {
  return (
    <div className="bar bu-bar" title={title ?? bookedUsedText(bar)} data-testid={testId} data-booked={bar.booked.toFixed(1)} data-used={bar.used === null ? "" : bar.used.toFixed(1)}>
      <div className="fill booked" style={{ width: `${bar.booked.toFixed(1)}%` }} />
      {bar.used !== null && <div className={`fill used${bar.over ? " over" : ""}`} style={{ width: `${bar.used.toFixed(1)}%` }} />}
      <span className="text">{text ?? bookedUsedText(bar)}</span>
    </div>
  );
}

export function Flags({ flags }: { flags: string[] }) {
  if (!flags.length) return <span className="muted">—</span>;
  return (
    <span className="flags" data-testid="flags">
      {flags.map((f) => {
        const v = flagView(f);
        return (
          <Badge key={f} kind={v.kind} title={v.title}>
            {v.label}
          </Badge>
        );
      })}
    </span>
  );
}

const mbRound = (v: number | null | undefined) => (v === null || v === undefined ? "—" : mb(Math.round(v)));

// --- chips ----------------------------------------------------------------------------

// The columns and height of a chip row are .usage-chip-row's in styles.css (a class, not a style per row).

const CHIP_SORT_OPTIONS = CHIP_SORTS.map((s) => ({ value: s.key, label: s.label }));

function ChipsTab() {
  const { cluster } = useClusters();
  const id = cluster!.id;
  const [nodeParam, setNodeParam] = useQueryParam("node");
  const [flagged, setFlagged] = useQueryParam("flagged");
  const [sortParam, setSort] = useQueryParam("sort", "node");
  const [chipParam, setChip] = useQueryParam("chip");
  const sort: ChipSort = CHIP_SORTS.some((s) => s.key === sortParam) ? (sortParam as ChipSort) : "node";

  const chips = useApi((signal) => api.get<UsageList<ChipUsage>>(`/api/usage/chips/${qs({ cluster: id })}`, signal), [id]);
  useLiveReload(chips.reload, 0, POLL_MS);
  const metrics = chips.data?.metrics;
  const ok = !!metrics?.available;
  const all = useMemo(() => chips.data?.results ?? [], [chips.data]);
  const rows = useMemo(
    () => sortUsageChips(filterUsageChips(all, { node: nodeParam, flaggedOnly: flagged === "1" }), sort, ok),
    [all, nodeParam, flagged, sort, ok],
  );
  const flaggedCount = useMemo(() => all.filter((c) => c.flags.length > 0).length, [all]);
  const selectedId = chipParam ? Number(chipParam) : null;
  const selected = selectedId === null ? null : (all.find((c) => c.chip === selectedId) ?? null);
  const selectedIndex = useMemo(() => (selectedId === null ? -1 : rows.findIndex((c) => c.chip === selectedId)), [rows, selectedId]);
  const select = useCallback((chip: number) => setChip(String(chip)), [setChip]);

  return (
    <>
      <FilterBar
        busy={chips.loading}
        summary={
          <span className="muted" data-testid="usage-chip-count">
            {chips.data ? `${int(rows.length)} of ${int(all.length)} chips · ${int(flaggedCount)} flagged` : ""}
          </span>
        }
        actions={
          <button className="btn small" onClick={chips.reload}>
            Refresh
          </button>
        }
      >
        <TextFilter label="node filter" placeholder="Filter nodes" value={nodeParam} onChange={setNodeParam} width={220} debounceMs={150} testId="usage-node-filter" />
        <CheckFilter label="Flagged only" checked={flagged === "1"} onChange={(on) => setFlagged(on ? "1" : "")} testId="flagged-only" />
        <span className="muted">Sort by</span>
        <SelectFilter label="sort" value={sort} onChange={setSort} options={CHIP_SORT_OPTIONS} testId="usage-sort" />
      </FilterBar>
      <MetricsBanner metrics={metrics} />
      <div className="inset-x">
        <ErrorNote error={chips.error} onRetry={chips.reload} />
      </div>
      <Legend />
      {!chips.data ? (
        chips.loading && <Loading label="Loading usage" />
      ) : rows.length === 0 ? (
        <div className="empty">{all.length ? "No chip matches the filters." : "No chip in this cluster."}</div>
      ) : (
        <div style={{ height: `min(${rows.length * ROW + 34}px, calc(100vh - 260px))` }} className="vbox">
          <VirtualRows
            count={rows.length}
            rowHeight={ROW}
            height="100%"
            scrollToIndex={selectedIndex}
            testId="usage-chips-table"
            header={
              <div className="vrow vhead usage-chip-row" role="row">
                <button onClick={() => setSort("node")}>Node{sort === "node" ? " ▲" : ""}</button>
                <span>#</span>
                <span>Type</span>
                <button onClick={() => setSort(sort === "aicore_used" ? "aicore_gap" : "aicore_used")} title="click: sort by used, again: by booked − used">
                  AICore booked · used{sort === "aicore_used" || sort === "aicore_gap" ? " ▼" : ""}
                </button>
                <button onClick={() => setSort(sort === "memory_used" ? "memory_gap" : "memory_used")} title="click: sort by used, again: by booked − used">
                  HBM booked · used{sort === "memory_used" || sort === "memory_gap" ? " ▼" : ""}
                </button>
                <span title="slices on the chip">Slices</span>
                <span title="HAMi's registration against the hardware (npu-exporter)">Health</span>
                <span>Flags</span>
              </div>
            }
            renderRow={(i) => {
              const c = rows[i];
              return <ChipUsageRow key={c.chip} chip={c} metricsOk={ok} selected={c.chip === selectedId} onSelect={select} />;
            }}
          />
        </div>
      )}
      {selectedId !== null && (
        <Drawer
          title={selected ? `${selected.node} · ${selected.common_word} #${selected.index}` : `Chip ${selectedId}`}
          onClose={() => setChip("")}
          actions={selected && selected.flags.length > 0 && <Flags flags={selected.flags} />}
        >
          {selected && <ChipSummary chip={selected} metricsOk={ok} />}
          <HistoryPanel key={`chips-${selectedId}`} kind="chips" id={selectedId} />
        </Drawer>
      )}
    </>
  );
}

function Legend() {
  return (
    <div className="legend usage-legend">
      <span>
        <span className="swatch booked" />
        booked
      </span>
      <span>
        <span className="swatch used" />
        used
      </span>
      <span>
        <span className="swatch over" />
        used above booked
      </span>
    </div>
  );
}

const ChipUsageRow = memo(function ChipUsageRow({
  chip: c,
  metricsOk,
  selected,
  onSelect,
}: {
  chip: ChipUsage;
  metricsOk: boolean;
  selected: boolean;
  onSelect: (id: number) => void;
}) {
  const aicore = chipAicore(c, metricsOk);
  const memory = chipMemory(c, metricsOk);
  const health = healthView(c);
  return (
    <div
      role="row"
      className={`vrow usage-chip-row${selected ? " selected" : ""}`}
      onClick={() => onSelect(c.chip)}
      data-chip-id={c.chip}
      data-testid="usage-chip-row"
    >
      <span className="ellipsis" title={c.node}>
        {c.node}
      </span>
      <span className="muted">{c.index}</span>
      <span>{c.common_word}</span>
      <BookedUsedBar
        bar={aicore}
        testId="aicore-bar"
        title={`AICore: ${c.aicore_booked} of ${c.aicore} booked; ${aicore.usedRaw === null ? "use not known" : `${percent(aicore.usedRaw)} used`}`}
      />
      <BookedUsedBar
        bar={memory}
        testId="memory-bar"
        title={`HBM: ${mb(c.memory_booked_mb)} of ${mb(c.memory_mb)} booked; ${memory.usedRaw === null ? "use not known" : `${mbRound(c.memory_used_mb)} used`}`}
      />
      <span className="muted">{c.slices}</span>
      <span>
        <Badge kind={health.kind} title={health.title}>
          {health.label}
        </Badge>
      </span>
      <span className="ellipsis">
        <Flags flags={c.flags} />
      </span>
    </div>
  );
});

function ChipSummary({ chip: c, metricsOk }: { chip: ChipUsage; metricsOk: boolean }) {
  const health = healthView(c);
  return (
    <div className="type-card mb-14">
      <div className="metrics" data-testid="usage-chip-summary">
        <span className="k">AICore</span>
        <span>
          {c.aicore_booked} of {c.aicore} booked · {metricsOk ? percent(c.aicore_used_percent) : "—"} used
        </span>
        <span className="k">HBM</span>
        <span>
          {mb(c.memory_booked_mb)} of {mb(c.memory_mb)} booked · {metricsOk ? mbRound(c.memory_used_mb) : "—"} used
        </span>
        <span className="k">Slices</span>
        <span>{c.slices}</span>
        <span className="k">Health</span>
        <span title={health.title}>{health.title}</span>
      </div>
      <div className="mt-8 small-text">
        <Link to={`/chips?chip=${c.chip}`}>Open in Nodes & chips</Link>
      </div>
    </div>
  );
}

// --- slices ---------------------------------------------------------------------------

// The columns and height of a slice row are .usage-slice-row's in styles.css.

const SLICE_FLAGS = [
  { value: "idle", label: "Idle" },
  { value: "over_memory", label: "Over memory" },
];

function SlicesTab() {
  const { cluster } = useClusters();
  const id = cluster!.id;
  const [flag, setFlag] = useQueryParam("flag");
  const [q, setQ] = useQueryParam("q");
  const [sliceParam, setSlice] = useQueryParam("slice");

  const slices = useApi(
    (signal) => api.get<UsageList<SliceUsage>>(`/api/usage/slices/${qs({ cluster: id, flag })}`, signal),
    [id, flag],
  );
  useLiveReload(slices.reload, 0, POLL_MS);
  const metrics = slices.data?.metrics;
  const ok = !!metrics?.available;
  const all = useMemo(() => slices.data?.results ?? [], [slices.data]);
  const rows = useMemo(() => filterUsageSlices(all, q), [all, q]);
  const selectedId = sliceParam ? Number(sliceParam) : null;
  const selected = selectedId === null ? null : (all.find((s) => s.slice === selectedId) ?? null);
  const selectedIndex = useMemo(() => (selectedId === null ? -1 : rows.findIndex((s) => s.slice === selectedId)), [rows, selectedId]);
  const select = useCallback((slice: number) => setSlice(String(slice)), [setSlice]);

  return (
    <>
      <FilterBar
        busy={slices.loading}
        summary={
          <span className="muted" data-testid="usage-slice-count">
            {slices.data ? `${int(rows.length)} of ${int(all.length)} slices` : ""}
          </span>
        }
        actions={
          <button className="btn small" onClick={slices.reload}>
            Refresh
          </button>
        }
      >
        <TextFilter
          label="search slices"
          placeholder="Search namespace, pod, queue, node or template"
          search
          value={q}
          onChange={setQ}
          width={300}
          debounceMs={200}
          testId="usage-slice-search"
        />
        <SelectFilter label="flag" value={flag} onChange={setFlag} options={SLICE_FLAGS} all="All slices" testId="usage-flag-filter" />
      </FilterBar>
      <MetricsBanner metrics={metrics} />
      <div className="inset-x">
        <ErrorNote error={slices.error} onRetry={slices.reload} />
      </div>
      {!slices.data ? (
        slices.loading && <Loading label="Loading usage" />
      ) : rows.length === 0 ? (
        <div className="empty">{flag || q ? "No slice matches." : "No slice in this cluster."}</div>
      ) : (
        <div style={{ height: `min(${rows.length * ROW + 34}px, calc(100vh - 240px))` }} className="vbox">
          <VirtualRows
            count={rows.length}
            rowHeight={ROW}
            height="100%"
            scrollToIndex={selectedIndex}
            testId="usage-slices-table"
            header={
              <div className="vrow vhead usage-slice-row" role="row">
                <span>Namespace</span>
                <span>Pod</span>
                <span>Queue</span>
                <span>Node · chip</span>
                <span>Template</span>
                <span title="% of the slice's own AICores">AICore used</span>
                <span>HBM used / booked</span>
                <span title="how long the slice has used no AICore">Idle for</span>
                <span>Flags</span>
              </div>
            }
            renderRow={(i) => {
              const s = rows[i];
              return <SliceUsageRow key={s.slice} slice={s} metricsOk={ok} selected={s.slice === selectedId} onSelect={select} />;
            }}
          />
        </div>
      )}
      {selectedId !== null && (
        <Drawer
          title={selected ? `${selected.namespace}/${selected.pod_name}` : `Slice ${selectedId}`}
          onClose={() => setSlice("")}
          actions={selected && selected.flags.length > 0 && <Flags flags={selected.flags} />}
        >
          {selected && <SliceSummary slice={selected} metricsOk={ok} />}
          <HistoryPanel key={`slices-${selectedId}`} kind="slices" id={selectedId} />
        </Drawer>
      )}
    </>
  );
}

const SliceUsageRow = memo(function SliceUsageRow({
  slice: s,
  metricsOk,
  selected,
  onSelect,
}: {
  slice: SliceUsage;
  metricsOk: boolean;
  selected: boolean;
  onSelect: (id: number) => void;
}) {
  const memory = sliceMemory(s, metricsOk);
  const core = metricsOk ? s.aicore_used_percent : null;
  return (
    <div
      role="row"
      className={`vrow usage-slice-row${selected ? " selected" : ""}`}
      onClick={() => onSelect(s.slice)}
      data-slice-id={s.slice}
      data-testid="usage-slice-row"
    >
      <span className="ellipsis" title={s.namespace}>
        {s.namespace}
      </span>
      <span className="ellipsis mono" title={`${s.pod_name} (container ${s.container_index})`}>
        {s.pod_name}
      </span>
      <span className="ellipsis">{s.queue || <span className="muted">—</span>}</span>
      <span className="ellipsis" title={`${s.node} #${s.chip_index ?? "?"} (${s.common_word})`}>
        {s.node} #{s.chip_index ?? "?"}
      </span>
      <span className="ellipsis">{s.template || <span className="muted">whole card</span>}</span>
      {core === null ? (
        <span className="muted" title={`${s.aicore} AICores booked; use not known`}>
          — <span className="tiny-text">of {s.aicore} cores</span>
        </span>
      ) : (
        <UsageBar used={core} total={100} text={`${percent(core)} of ${s.aicore} cores`} title={`${percent(core)} of the slice's ${s.aicore} AICores`} />
      )}
      {memory.usedRaw === null ? (
        <span className="muted">— / {mb(s.memory_mb)}</span>
      ) : (
        <UsageBar
          used={memory.usedRaw}
          total={100}
          text={`${mbRound(s.memory_used_mb)} / ${mb(s.memory_mb)}`}
          title={`${percent(memory.usedRaw)} of the ${mb(s.memory_mb)} booked`}
        />
      )}
      <span className="muted">{metricsOk && s.idle_seconds !== null ? duration(s.idle_seconds) : "—"}</span>
      <span className="ellipsis">
        <Flags flags={s.flags} />
      </span>
    </div>
  );
});

function SliceSummary({ slice: s, metricsOk }: { slice: SliceUsage; metricsOk: boolean }) {
  return (
    <div className="type-card mb-14">
      <div className="metrics" data-testid="usage-slice-summary">
        <span className="k">Chip</span>
        <span>
          {s.chip !== null ? (
            <Link to={`/chips?chip=${s.chip}`}>
              {s.node} #{s.chip_index ?? "?"}
            </Link>
          ) : (
            <span>{s.node}</span>
          )}{" "}
          <span className="muted">({s.common_word})</span>
        </span>
        <span className="k">Template</span>
        <span>{s.template || "whole card"}</span>
        <span className="k">Queue</span>
        <span>{s.queue || "—"}</span>
        <span className="k">AICore</span>
        <span>
          {s.aicore} booked · {metricsOk ? percent(s.aicore_used_percent) : "—"} used
        </span>
        <span className="k">HBM</span>
        <span>
          {mb(s.memory_mb)} booked · {metricsOk ? mbRound(s.memory_used_mb) : "—"} used
        </span>
        <span className="k">Idle for</span>
        <span>{metricsOk && s.idle_seconds !== null ? duration(s.idle_seconds) : "—"}</span>
      </div>
    </div>
  );
}

// --- history --------------------------------------------------------------------------

function timeText(ms: number, withDay: boolean): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return withDay ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}` : time;
}

const toSeries = (lines: HistoryLine[]): Series[] =>
  lines.map((l) => ({ name: l.name, color: l.color, points: l.points, dash: l.dashed ? [6, 4] : undefined }));

/**
 * Used against booked over a period (1h by default; 6h, 24h, 7d); dragging
 * across a chart fetches that window again at a finer step, "Back" returns to
 * the whole period.
 */
export function HistoryPanel({ kind, id }: { kind: UsageKind; id: number }) {
  const [rangeParam, setRange] = useQueryParam("range", "1h");
  const range: HistoryRange = isHistoryRange(rangeParam) ? rangeParam : "1h";
  const [now, setNow] = useState(() => Date.now());
  const [zoom, setZoom] = useState<TimeWindow | null>(null);
  const win = zoom ?? rangeWindow(range, now);
  const history = useApi(
    (signal) => api.get<UsageHistory>(historyUrl(kind, id, win), signal),
    [kind, id, win.start, win.end],
  );
  const data = history.data;
  const charts = useMemo(() => (data ? historyCharts(data) : null), [data]);
  const shown = data ? { start: Date.parse(data.start), end: Date.parse(data.end) } : win;
  const span = Math.max(60_000, shown.end - shown.start);
  const withDay = span > 86_400_000;
  const gapMs = data ? Math.max(3 * data.step * 1000, 60_000) : Infinity;
  const onZoom = useCallback((from: number, to: number) => setZoom({ start: Math.round(from), end: Math.round(to) }), []);
  const onReset = useCallback(() => setZoom(null), []);
  const chartKey = data ? `${data.start}|${data.end}|${data.step}` : "none";
  const usedMissing = charts && data && !data.metrics.available;

  return (
    <div data-testid="usage-history">
      <div className="toolbar history-bar">
        <h3>History</h3>
        <Segmented
          value={range}
          label="period"
          options={HISTORY_RANGES.map((r) => ({ key: r.key, label: r.label }))}
          onChange={(r) => {
            setZoom(null);
            setNow(Date.now());
            setRange(r);
          }}
        />
        <button
          className="btn small"
          onClick={() => {
            setZoom(null);
            setNow(Date.now());
          }}
          title="fetch up to now"
        >
          Now
        </button>
        <span className="grow" />
        {history.loading && <span className="spinner" />}
      </div>
      <div className="muted small-text mb-8" data-testid="history-window">
        {zoom ? "Zoomed to " : ""}
        {timeText(shown.start, withDay)} – {timeText(shown.end, withDay)}
        {data ? ` · a point every ${duration(data.step)}` : ""}
        {zoom && (
          <>
            {" · "}
            <button className="btn link small" onClick={onReset} data-testid="history-unzoom">
              back to the last {range}
            </button>
          </>
        )}
      </div>
      <ErrorNote error={history.error} onRetry={history.reload} />
      {usedMissing && (
        <div className="muted small-text mb-8">
          {metricsBanner(data.metrics)}
        </div>
      )}
      {!charts ? (
        history.loading && <Loading label="Loading the history" />
      ) : (
        <>
          <h4 className="chart-title">AICore, % {kind === "chips" ? "of the chip" : "of the slice"}</h4>
          <LineChart
            key={`aicore-${chartKey}`}
            series={toSeries(charts.aicore)}
            yMax={100}
            yFormat={(v) => `${Math.round(v)}%`}
            minSpan={span}
            until={shown.end}
            gapMs={gapMs}
            onZoom={onZoom}
            onResetZoom={onReset}
            empty="No AICore samples in this period."
          />
          <h4 className="chart-title mt-14">HBM</h4>
          <LineChart
            key={`memory-${chartKey}`}
            series={toSeries(charts.memory)}
            yFormat={(v) => mb(Math.round(v))}
            ySize={70}
            minSpan={span}
            until={shown.end}
            gapMs={gapMs}
            onZoom={onZoom}
            onResetZoom={onReset}
            empty="No HBM samples in this period."
          />
          {data && (
            <div className="muted tiny-text mt-6" title={dateTime(data.metrics.queried_at)}>
              Dashed: booked. Solid: used (Prometheus).
            </div>
          )}
        </>
      )}
    </div>
  );
}
