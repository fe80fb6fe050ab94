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
import { useT } from "../i18n/I18nProvider";
import { dateTime, duration, mb } from "../lib/format";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useLiveReload } from "../lib/useApi";
import {
  bookedUsedText,
  chipAicore,
  chipMemory,
  CHIP_SORTS,
  chipSortOptions,
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
/** A table's height: its rows and header, at most the window's height less `rest` px. */
// i18n-ignore: a CSS length
const tableHeight = (rows: number, rest: number) => `min(${rows * ROW + 34}px, calc(100vh - ${rest}px))`;

export function UsagePage() {
  const t = useT();
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
        <h1>{t("usage.title")}</h1>
        <span className="sub">{t("usage.sub")}</span>
      </div>
      <div className="panel">
        <div className="tabs" role="tablist">
          {(["chips", "slices"] as UsageKind[]).map((key) => (
            <button
              key={key}
              role="tab"
              className={current === key ? "on" : ""}
              aria-selected={current === key}
              onClick={() => switchTo(key)}
              data-testid={`usage-tab-${key}`}
            >
              {t(`usage.tab.${key}`)}
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

function ChipsTab() {
  const t = useT();
  const { cluster } = useClusters();
  const id = cluster!.id;
  const [nodeParam, setNodeParam] = useQueryParam("node");
  const [flagged, setFlagged] = useQueryParam("flagged");
  const [sortParam, setSort] = useQueryParam("sort", "node");
  const [chipParam, setChip] = useQueryParam("chip");
  const sort: ChipSort = CHIP_SORTS.some((s) => s === sortParam) ? (sortParam as ChipSort) : "node";

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
            {chips.data ? t("usage.chipCount", { shown: rows.length, total: all.length, flagged: flaggedCount }) : ""}
          </span>
        }
        actions={
          <button className="btn small" onClick={chips.reload}>
            {t("usage.refresh")}
          </button>
        }
      >
        <TextFilter label={t("usage.nodeFilter")} placeholder={t("usage.nodeFilterPlaceholder")} value={nodeParam} onChange={setNodeParam} width={220} debounceMs={150} testId="usage-node-filter" />
        <CheckFilter label={t("usage.flaggedOnly")} checked={flagged === "1"} onChange={(on) => setFlagged(on ? "1" : "")} testId="flagged-only" />
        <span className="muted">{t("usage.sortBy")}</span>
        <SelectFilter label={t("usage.sort")} value={sort} onChange={setSort} options={chipSortOptions()} testId="usage-sort" />
      </FilterBar>
      <MetricsBanner metrics={metrics} />
      <div className="inset-x">
        <ErrorNote error={chips.error} onRetry={chips.reload} />
      </div>
      <Legend />
      {!chips.data ? (
        chips.loading && <Loading label={t("usage.loading")} />
      ) : rows.length === 0 ? (
        <div className="empty">{all.length ? t("usage.noChipMatches") : t("usage.noChip")}</div>
      ) : (
        <div style={{ height: tableHeight(rows.length, 260) }} className="vbox">
          <VirtualRows
            count={rows.length}
            rowHeight={ROW}
            height="100%"
            scrollToIndex={selectedIndex}
            testId="usage-chips-table"
            header={
              <div className="vrow vhead usage-chip-row" role="row">
                <button onClick={() => setSort("node")}>
                  {t("usage.col.node")}
                  {sort === "node" ? " ▲" : ""}
                </button>
                <span>#</span>
                <span>{t("usage.col.type")}</span>
                <button onClick={() => setSort(sort === "aicore_used" ? "aicore_gap" : "aicore_used")} title={t("usage.col.sortHint")}>
                  {t("usage.col.aicoreBookedUsed")}
                  {sort === "aicore_used" || sort === "aicore_gap" ? " ▼" : ""}
                </button>
                <button onClick={() => setSort(sort === "memory_used" ? "memory_gap" : "memory_used")} title={t("usage.col.sortHint")}>
                  {t("usage.col.hbmBookedUsed")}
                  {sort === "memory_used" || sort === "memory_gap" ? " ▼" : ""}
                </button>
                <span title={t("usage.col.slicesTitle")}>{t("usage.col.slices")}</span>
                <span title={t("usage.col.healthTitle")}>{t("usage.col.health")}</span>
                <span>{t("usage.col.flags")}</span>
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
          title={selected ? `${selected.node} · ${selected.common_word} #${selected.index}` : t("usage.chipTitle", { id: selectedId })}
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
  const t = useT();
  return (
    <div className="legend usage-legend">
      <span>
        <span className="swatch booked" />
        {t("usage.legend.booked")}
      </span>
      <span>
        <span className="swatch used" />
        {t("usage.legend.used")}
      </span>
      <span>
        <span className="swatch over" />
        {t("usage.legend.over")}
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
  const t = useT();
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
        title={t("usage.chipAicoreTitle", {
          booked: c.aicore_booked,
          total: c.aicore,
          use: aicore.usedRaw === null ? t("usage.useUnknown") : t("usage.usedAmount", { amount: percent(aicore.usedRaw) }),
        })}
      />
      <BookedUsedBar
        bar={memory}
        testId="memory-bar"
        title={t("usage.chipHbmTitle", {
          booked: mb(c.memory_booked_mb),
          total: mb(c.memory_mb),
          use: memory.usedRaw === null ? t("usage.useUnknown") : t("usage.usedAmount", { amount: mbRound(c.memory_used_mb) }),
        })}
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
  const t = useT();
  const health = healthView(c);
  return (
    <div className="type-card mb-14">
      <div className="metrics" data-testid="usage-chip-summary">
        <span className="k">{t("usage.aicore")}</span>
        <span>{t("usage.ofBookedUsed", { booked: c.aicore_booked, total: c.aicore, used: metricsOk ? percent(c.aicore_used_percent) : "—" })}</span>
        <span className="k">{t("usage.hbm")}</span>
        <span>
          {t("usage.ofBookedUsed", { booked: mb(c.memory_booked_mb), total: mb(c.memory_mb), used: metricsOk ? mbRound(c.memory_used_mb) : "—" })}
        </span>
        <span className="k">{t("usage.col.slices")}</span>
        <span>{c.slices}</span>
        <span className="k">{t("usage.col.health")}</span>
        <span title={health.title}>{health.title}</span>
      </div>
      <div className="mt-8 small-text">
        <Link to={`/chips?chip=${c.chip}`}>{t("usage.openInChips")}</Link>
      </div>
    </div>
  );
}

// --- slices ---------------------------------------------------------------------------

// The columns and height of a slice row are .usage-slice-row's in styles.css.

/** The flags the slices tab filters by (their words: usage.sliceFlag.<flag>). */
const SLICE_FLAGS = ["idle", "over_memory"];

function SlicesTab() {
  const t = useT();
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
            {slices.data ? t("usage.sliceCount", { shown: rows.length, total: all.length }) : ""}
          </span>
        }
        actions={
          <button className="btn small" onClick={slices.reload}>
            {t("usage.refresh")}
          </button>
        }
      >
        <TextFilter
          label={t("usage.searchSlices")}
          placeholder={t("usage.searchPlaceholder")}
          search
          value={q}
          onChange={setQ}
          width={300}
          debounceMs={200}
          testId="usage-slice-search"
        />
        <SelectFilter
          label={t("usage.flag")}
          value={flag}
          onChange={setFlag}
          options={SLICE_FLAGS.map((f) => ({ value: f, label: t(`usage.sliceFlag.${f}`) }))}
          all={t("usage.allSlices")}
          testId="usage-flag-filter"
        />
      </FilterBar>
      <MetricsBanner metrics={metrics} />
      <div className="inset-x">
        <ErrorNote error={slices.error} onRetry={slices.reload} />
      </div>
      {!slices.data ? (
        slices.loading && <Loading label={t("usage.loading")} />
      ) : rows.length === 0 ? (
        <div className="empty">{flag || q ? t("usage.noSliceMatches") : t("usage.noSlice")}</div>
      ) : (
        <div style={{ height: tableHeight(rows.length, 240) }} className="vbox">
          <VirtualRows
            count={rows.length}
            rowHeight={ROW}
            height="100%"
            scrollToIndex={selectedIndex}
            testId="usage-slices-table"
            header={
              <div className="vrow vhead usage-slice-row" role="row">
                <span>{t("usage.col.namespace")}</span>
                <span>Pod</span>
                <span>{t("usage.col.queue")}</span>
                <span>{t("usage.col.nodeChip")}</span>
                <span>{t("usage.col.template")}</span>
                <span title={t("usage.col.aicoreUsedTitle")}>{t("usage.col.aicoreUsed")}</span>
                <span>{t("usage.col.hbmUsedBooked")}</span>
                <span title={t("usage.col.idleForTitle")}>{t("usage.col.idleFor")}</span>
                <span>{t("usage.col.flags")}</span>
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
          title={selected ? `${selected.namespace}/${selected.pod_name}` : t("usage.sliceTitle", { id: selectedId })}
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
  const t = useT();
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
      <span className="ellipsis mono" title={t("usage.podTitle", { pod: s.pod_name, index: s.container_index })}>
        {s.pod_name}
      </span>
      <span className="ellipsis">{s.queue || <span className="muted">—</span>}</span>
      <span className="ellipsis" title={`${s.node} #${s.chip_index ?? "?"} (${s.common_word})`}>
        {s.node} #{s.chip_index ?? "?"}
      </span>
      <span className="ellipsis">{s.template || <span className="muted">{t("usage.wholeCard")}</span>}</span>
      {core === null ? (
        <span className="muted" title={t("usage.coresUnknownTitle", { cores: s.aicore })}>
          — <span className="tiny-text">{t("usage.ofCores", { cores: s.aicore })}</span>
        </span>
      ) : (
        <UsageBar
          used={core}
          total={100}
          text={t("usage.pctOfCores", { pct: percent(core), cores: s.aicore })}
          title={t("usage.pctOfSliceCores", { pct: percent(core), cores: s.aicore })}
        />
      )}
      {memory.usedRaw === null ? (
        <span className="muted">— / {mb(s.memory_mb)}</span>
      ) : (
        <UsageBar
          used={memory.usedRaw}
          total={100}
          text={`${mbRound(s.memory_used_mb)} / ${mb(s.memory_mb)}`}
          title={t("usage.pctOfBooked", { pct: percent(memory.usedRaw), amount: mb(s.memory_mb) })}
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
  const t = useT();
  return (
    <div className="type-card mb-14">
      <div className="metrics" data-testid="usage-slice-summary">
        <span className="k">{t("usage.chip")}</span>
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
        <span className="k">{t("usage.col.template")}</span>
        <span>{s.template || t("usage.wholeCard")}</span>
        <span className="k">{t("usage.col.queue")}</span>
        <span>{s.queue || "—"}</span>
        <span className="k">{t("usage.aicore")}</span>
        <span>{t("usage.bookedDotUsed", { booked: s.aicore, used: metricsOk ? percent(s.aicore_used_percent) : "—" })}</span>
        <span className="k">{t("usage.hbm")}</span>
        <span>{t("usage.bookedDotUsed", { booked: mb(s.memory_mb), used: metricsOk ? mbRound(s.memory_used_mb) : "—" })}</span>
        <span className="k">{t("usage.col.idleFor")}</span>
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
  const t = useT();
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
  // The lines' names are words: read again when the language changes (t does).
  const charts = useMemo(() => (data ? historyCharts(data) : null), [data, t]);
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
        <h3>{t("usage.history.title")}</h3>
        <Segmented
          value={range}
          label={t("usage.history.period")}
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
          title={t("usage.history.nowTitle")}
        >
          {t("usage.history.now")}
        </button>
        <span className="grow" />
        {history.loading && <span className="spinner" />}
      </div>
      <div className="muted small-text mb-8" data-testid="history-window">
        {t(zoom ? "usage.history.zoomedWindow" : "usage.history.window", { from: timeText(shown.start, withDay), to: timeText(shown.end, withDay) })}
        {data ? ` · ${t("usage.history.every", { step: duration(data.step) })}` : ""}
        {zoom && (
          <>
            {" · "}
            <button className="btn link small" onClick={onReset} data-testid="history-unzoom">
              {t("usage.history.back", { range })}
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
        history.loading && <Loading label={t("usage.history.loading")} />
      ) : (
        <>
          <h4 className="chart-title">{t(kind === "chips" ? "usage.history.aicoreOfChip" : "usage.history.aicoreOfSlice")}</h4>
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
            empty={t("usage.history.noAicore")}
          />
          <h4 className="chart-title mt-14">{t("usage.history.hbm")}</h4>
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
            empty={t("usage.history.noHbm")}
          />
          {data && (
            <div className="muted tiny-text mt-6" title={dateTime(data.metrics.queried_at)}>
              {t("usage.history.legend")}
            </div>
          )}
        </>
      )}
    </div>
  );
}
