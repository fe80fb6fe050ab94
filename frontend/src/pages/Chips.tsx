// Nodes and chips: a heat map of every chip (or node) and a virtualised table,
// both filtered by node, chip type and state, live from the WebSocket. A click
// opens the chip: its slices, its history (slices placed and released, from the
// API) and how its usage and health changed since the page opened.

import { memo, useCallback, useMemo, useState } from "react";
import { api, qs } from "../api/client";
import type { Page, Slice, Template } from "../api/types";
import { FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { Heatmap } from "../components/Heatmap";
import { VirtualRows } from "../components/VirtualRows";
import { Badge, CellBar, CopyText, Drawer, ErrorNote, Loading, Segmented, UsageBar } from "../components/ui";
import { ChipActions } from "./chips/ChipActions";
import { SuggestionsPanel } from "./chips/Suggestions";
import { NodePanel } from "./chips/NodePanel";
import { ChipHistory } from "./ChipHistory";
import { useT } from "../i18n/I18nProvider";
import {
  filterChips,
  fittingTemplates,
  groupByNode,
  isFull,
  METRICS,
  sortChips,
  totalsByType,
  type Chip,
  type ChipState,
  templatesByType,
  type TemplatesByType,
  type Metric,
  type SortKey,
} from "../lib/chips";
import { STATE_LOOK, stateLabel, stateTitle, type ChipStateName } from "../lib/chipState";
import { ago, dateTime, duration, ageSeconds, mb, pctText } from "../lib/format";
import type { HeatMode } from "../lib/heatmap";
import { useQueryParam } from "../lib/router";
import { useApi, useNow } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";

/** The state filter's options (their words: chips.stateOption.<value>). */
const STATE_OPTIONS: ChipState[] = [
  "all",
  "healthy",
  "unhealthy",
  "cordoned",
  "draining",
  "drained",
  "isolating",
  "isolated",
  "restoring",
  "free",
  "full",
  "busy",
  "idle",
];

/** Row height: .chip-row's height in styles.css, where its columns are too (a class, not a style per row). */
const ROW = 30;

export function ChipsPage() {
  const t = useT();
  const { live, cluster } = useClusters();
  useLiveVersion(live);
  const templates = useClusterTemplates(cluster?.id ?? null);
  const [roomFor, setRoomFor] = useQueryParam("room");
  const [nodeParam, setNodeParam] = useQueryParam("node");
  const [type, setType] = useQueryParam("type");
  const [state, setState] = useQueryParam("state", "all");
  const [metric, setMetric] = useQueryParam("metric", "memory");
  const [view, setView] = useQueryParam("view", "");
  const [chipParam, setChipParam] = useQueryParam("chip");
  // a suggestion's act, opened in that chip's drawer
  const [request, setRequest] = useState<{ chip: number; act: "isolate" | "restore" } | null>(null);
  const [sortKey, setSortKey] = useState<SortKey>("node");
  const [sortDir, setSortDir] = useState<1 | -1>(1);

  const chipsVersion = live?.chips.version ?? 0;
  const all = useMemo(() => live?.chips.sorted() ?? [], [live, chipsVersion]); // eslint-disable-line react-hooks/exhaustive-deps
  const types = useMemo(() => [...new Set(all.map((c) => c.type))].sort(), [all]);
  const filtered = useMemo(
    () => filterChips(all, { node: nodeParam, type, state: state as ChipState, templates, roomFor }),
    [all, nodeParam, type, state, templates, roomFor],
  );
  const groups = useMemo(() => groupByNode(filtered), [filtered]);
  const sorted = useMemo(() => sortChips(filtered, { key: sortKey, dir: sortDir }), [filtered, sortKey, sortDir]);
  const typeTotals = useMemo(() => totalsByType(filtered), [filtered]);
  const mode: HeatMode = view === "node" || view === "chip" ? view : all.length > 3000 ? "node" : "chip";
  // ?chip= is a chip's id, or its UUID in the links of the alerts.
  const selectedId = useMemo(() => chipFromParam(chipParam, all), [chipParam, all]);
  const selected = selectedId !== null ? (live?.chips.byId.get(selectedId) ?? null) : null;
  const selectedIndex = useMemo(() => (selectedId === null ? -1 : sorted.findIndex((c) => c.id === selectedId)), [sorted, selectedId]);
  const unhealthy = useMemo(() => filtered.filter((c) => !c.healthy).length, [filtered]);
  const m = metric as Metric;
  const selectChip = useCallback((id: number) => setChipParam(String(id)), [setChipParam]);

  const sortBy = (key: SortKey) => {
    if (key === sortKey) setSortDir(sortDir === 1 ? -1 : 1);
    else {
      setSortKey(key);
      setSortDir(key === "node" || key === "type" ? 1 : -1);
    }
  };
  const arrow = (key: SortKey) => (key === sortKey ? (sortDir === 1 ? " ▲" : " ▼") : "");

  if (!live || (live.connection !== "live" && live.chips.size === 0)) {
    return <Loading label={t("chips.waiting")} />;
  }

  const now = Date.now();
  const flashSince = now - 1600;

  return (
    <>
      <div className="page-head">
        <h1>{t("chips.title")}</h1>
        <span className="sub" data-testid="chip-count">
          {t("chips.count", { shown: filtered.length, total: all.length, nodes: groups.length, unhealthy })}
        </span>
      </div>

      {cluster && (
        <SuggestionsPanel
          clusterId={cluster.id}
          tick={chipsVersion}
          onAct={(chip, act) => {
            setRequest({ chip, act });
            setChipParam(String(chip));
          }}
        />
      )}

      <div className="panel">
        <FilterBar
          actions={
            <>
              <span className="muted">{t("chips.colourBy")}</span>
              <Segmented
                value={m}
                onChange={(v) => setMetric(v)}
                options={METRICS.map((key) => ({ key, label: t(`chips.metric.${key}`) }))}
                label={t("chips.metricLabel")}
              />
              <Segmented
                value={mode}
                onChange={(v) => setView(v)}
                label={t("chips.granularity")}
                options={[
                  { key: "chip", label: t("chips.perChip") },
                  { key: "node", label: t("chips.perNode") },
                ]}
              />
            </>
          }
        >
          <TextFilter
            label={t("chips.nodeFilter")}
            placeholder={t("chips.nodeFilterPlaceholder")}
            value={nodeParam}
            onChange={setNodeParam}
            width={240}
            debounceMs={150}
            testId="node-filter"
          />
          <SelectFilter label={t("chips.typeFilter")} value={type} onChange={setType} options={types} all={t("chips.allTypes")} testId="type-filter" />
          <SelectFilter
            label={t("chips.stateFilter")}
            value={state}
            onChange={setState}
            options={STATE_OPTIONS.map((value) => ({ value, label: t(`chips.stateOption.${value}`) }))}
            testId="state-filter"
          />
          <SelectFilter
            label={t("chips.roomFilter")}
            value={roomFor}
            onChange={setRoomFor}
            all={t("chips.roomForAny")}
            groups={[...templates].map(([cw, list]) => ({
              group: cw,
              options: list.map((tpl) => ({ value: tpl.name, label: t("chips.roomForOne", { name: tpl.name, memory: mb(tpl.memory) }) })),
            }))}
            testId="room-filter"
          />
        </FilterBar>
        <div className="toolbar type-totals">
          {[...typeTotals.entries()].map(([chipType, v]) => (
            <span key={chipType} className="type-total">
              <b>{chipType}</b>
              <span className="muted">{t("chips.typeChips", { count: v.chips })}</span>
              <span className="w-140">
                <UsageBar used={v.memUsed} total={v.mem} text={t("chips.typeMem", { pct: pctText(v.memUsed, v.mem) })} />
              </span>
              <span className="w-110">
                <UsageBar used={v.slotsUsed} total={v.slots} text={t("chips.typeSlots", { used: v.slotsUsed, total: v.slots })} />
              </span>
            </span>
          ))}
          <span className="grow" />
          <span className="legend">
            <span>
              {t("chips.legend.idle")} <span className="ramp" /> {t("chips.legend.full")}
            </span>
            {mode === "chip" ? (
              <span>
                <span className="swatch unhealthy-chip" />
                {t("chips.legend.unhealthy")}
              </span>
            ) : (
              <span>
                <span className="swatch unhealthy-node" />
                {t("chips.legend.unhealthyNode")}
              </span>
            )}
            <span>{mode === "node" ? t("chips.legend.cellNode") : t("chips.legend.cellChip")}</span>
            {mode === "chip" && <StateLegend />}
          </span>
        </div>
        {groups.length === 1 && cluster && <NodePanel group={groups[0]} clusterId={cluster.id} />}
        <Heatmap
          groups={groups}
          metric={m}
          mode={mode}
          selectedId={selectedId}
          version={chipsVersion}
          onSelectChip={(c) => setChipParam(String(c.id))}
          onSelectNode={(node) => {
            setNodeParam(node);
            setView("chip");
          }}
        />
      </div>

      {/* i18n-ignore: a CSS length */}
      <div className="panel vpanel" style={{ height: `min(${sorted.length * ROW + 34}px, calc(100vh - 160px))` }}>
        <VirtualRows
          count={sorted.length}
          rowHeight={ROW}
          height="100%"
          scrollToIndex={selectedIndex}
          testId="chips-table"
          header={
            <div className="vrow vhead chip-row" role="row" aria-rowindex={1}>
              <button onClick={() => sortBy("node")}>
                {t("chips.col.node")}
                {arrow("node")}
              </button>
              <button onClick={() => sortBy("type")}>
                {t("chips.col.type")}
                {arrow("type")}
              </button>
              <span>#</span>
              <button onClick={() => sortBy("health")}>
                {t("chips.col.state")}
                {arrow("health")}
              </button>
              <button onClick={() => sortBy("memory")}>
                {t("chips.metric.memory")}
                {arrow("memory")}
              </button>
              <button onClick={() => sortBy("slots")}>
                {t("chips.metric.slots")}
                {arrow("slots")}
              </button>
              <button onClick={() => sortBy("aicore")}>
                {t("chips.metric.aicore")}
                {arrow("aicore")}
              </button>
              <button onClick={() => sortBy("aicpu")}>
                {t("chips.metric.aicpu")}
                {arrow("aicpu")}
              </button>
              <span>UUID</span>
            </div>
          }
          renderRow={(i) => {
            const c = sorted[i];
            // No key: VirtualRows keys its slots, and a slot's row is patched for its next chip.
            return (
              <ChipRowView
                rowIndex={i + 2}
                chip={c}
                templates={templates}
                selected={c.id === selectedId}
                flash={(live.chips.changedAt.get(c.id) ?? 0) > flashSince}
                onSelect={selectChip}
              />
            );
          }}
        />
        {sorted.length === 0 && <div className="empty">{t("chips.noMatch")}</div>}
      </div>

      {selectedId !== null && (
        <ChipDrawer
          chipId={selectedId}
          chip={selected}
          templates={templates}
          request={request?.chip === selectedId ? request.act : null}
          onRequestTaken={() => setRequest(null)}
          onClose={() => setChipParam("")}
        />
      )}
    </>
  );
}

/**
 * One table row; memoised: a chip object is replaced only when its row changes.
 * Kept to one box per cell (CellBar, the badge as the cell): a fast scroll
 * mounts some twenty rows a frame, and each box costs style, layout and paint.
 */
const ChipRowView = memo(function ChipRowView({
  rowIndex,
  chip: c,
  templates,
  selected,
  flash,
  onSelect,
}: {
  /** aria-rowindex (the header is row 1): VirtualRows' DOM order is the visual order only up to a rotation */
  rowIndex: number;
  chip: Chip;
  templates: TemplatesByType;
  selected: boolean;
  flash: boolean;
  onSelect: (id: number) => void;
}) {
  return (
    <div
      role="row"
      aria-rowindex={rowIndex}
      className={`vrow chip-row${selected ? " selected" : ""}${flash ? " flash" : ""}`}
      onClick={() => onSelect(c.id)}
      data-chip-id={c.id}
      data-testid="chip-row"
    >
      <span className="ellipsis" title={c.node}>
        {c.node}
      </span>
      <span>{c.type}</span>
      <span className="muted">{c.index}</span>
      <ChipStateBadge chip={c} templates={templates} />
      <CellBar used={c.memUsed} total={c.mem} text={`${mb(c.memUsed)} / ${mb(c.mem)}`} />
      <CellBar used={c.slotsUsed} total={c.slots} text={`${c.slotsUsed} / ${c.slots}`} />
      <CellBar used={c.coreUsed} total={c.core} text={`${c.coreUsed} / ${c.core}`} />
      <CellBar used={c.cpuUsed} total={c.cpu} text={c.cpu ? `${c.cpuUsed} / ${c.cpu}` : "–"} />
      <span className="mono ellipsis muted" title={c.uuid}>
        {c.uuid}
      </span>
    </div>
  );
});

function ChipStateBadge({ chip, templates }: { chip: Chip; templates: TemplatesByType }) {
  const t = useT();
  const look = STATE_LOOK[chip.state];
  const title = stateTitle(chip.state, t);
  const label = stateLabel(chip.state, t);
  // one box per cell (see ChipRowView): a sick chip that is also drained or isolated says both in its text
  const sick = !chip.healthy && chip.state !== "unhealthy";
  if (chip.state === "healthy" && isFull(chip, templates))
    return (
      <Badge kind="info" title={t("chips.badge.fullTitle")}>
        {t("chips.badge.full")}
      </Badge>
    );
  return (
    <Badge kind={look.badge} title={sick ? t("chips.badge.sickTitle", { title }) : title}>
      {chip.state === "unhealthy"
        ? t("chips.badge.unhealthy")
        : chip.state === "healthy"
          ? t("chips.badge.ok")
          : sick
            ? t("chips.badge.sick", { label })
            : label}
    </Badge>
  );
}

/** The heat map's look per chip state (components/Heatmap.tsx draws the same): swatch class, the states it stands for. */
const STATE_SWATCHES: [string, ChipStateName[]][] = [
  ["cordoned", ["cordoned"]],
  ["draining", ["draining"]],
  ["drained", ["drained"]],
  ["pending", ["isolating", "restoring"]],
  ["isolated", ["isolated"]],
];

function StateLegend() {
  const t = useT();
  return (
    <>
      {STATE_SWATCHES.map(([swatch, states]) => (
        <span key={swatch}>
          <span className={`swatch ${swatch}`} />
          {states.map((s) => stateLabel(s, t)).join(" / ")}
        </span>
      ))}
    </>
  );
}

/** The cluster's templates by chip type (room is room for a template). */
function useClusterTemplates(clusterId: number | null): TemplatesByType {
  const answer = useApi(
    clusterId === null ? null : (signal) => api.get<Page<Template>>(`/api/templates/${qs({ cluster: clusterId, page_size: 1000 })}`, signal),
    [clusterId],
  );
  return useMemo(() => templatesByType(answer.data?.results ?? []), [answer.data]);
}

function ChipDrawer({
  chipId,
  chip,
  templates,
  request,
  onRequestTaken,
  onClose,
}: {
  chipId: number;
  chip: Chip | null;
  templates: TemplatesByType;
  request: "isolate" | "restore" | null;
  onRequestTaken: () => void;
  onClose: () => void;
}) {
  const t = useT();
  const { live, cluster } = useClusters();
  const now = useNow(5000);
  const slices = useApi(
    (signal) => api.get<Page<Slice>>(`/api/slices/${qs({ chip: chipId, page_size: 200 })}`, signal),
    // The chip object is replaced on every change of its row: refetch its slices then.
    [chipId, chip],
  );
  // Usage and health as the socket saw them change (the API's history has slices only).
  const changes = live?.chips.history.get(chipId) ?? [];

  return (
    <Drawer
      title={chip ? `${chip.node} · ${chip.type} #${chip.index}` : t("chips.drawer.gone", { id: chipId })}
      onClose={onClose}
      actions={chip && <ChipStateBadge chip={chip} templates={templates} />}
    >
      {!chip ? (
        <div className="empty">{t("chips.drawer.notInCluster")}</div>
      ) : (
        <>
          <div className="muted mb-12">
            <CopyText value={chip.uuid} testId="chip-uuid" />
          </div>
          {cluster && (
            <ChipActions chip={chip} slices={slices.data?.results} clusterId={cluster.id} request={request} onRequestTaken={onRequestTaken} />
          )}
          <div className="type-card">
            <div className="metrics" data-testid="chip-metrics">
              <span className="k">{t("chips.metric.memory")}</span>
              <UsageBar
                used={chip.memUsed}
                total={chip.mem}
                text={t("chips.drawer.usedFree", { used: mb(chip.memUsed), total: mb(chip.mem), free: mb(chip.mem - chip.memUsed) })}
              />
              <span className="k">{t("chips.metric.slots")}</span>
              <UsageBar
                used={chip.slotsUsed}
                total={chip.slots}
                text={t("chips.drawer.usedFree", { used: chip.slotsUsed, total: chip.slots, free: chip.slots - chip.slotsUsed })}
              />
              <span className="k">{t("chips.metric.aicore")}</span>
              <UsageBar used={chip.coreUsed} total={chip.core} text={`${chip.coreUsed} / ${chip.core}`} />
              <span className="k">{t("chips.metric.aicpu")}</span>
              <UsageBar used={chip.cpuUsed} total={chip.cpu} text={chip.cpu ? `${chip.cpuUsed} / ${chip.cpu}` : t("chips.drawer.notReported")} />
            </div>
            <RoomLine chip={chip} templates={templates} />
          </div>
          <h3 className="section-title">{t("chips.drawer.slices")}</h3>
          <ErrorNote error={slices.error} onRetry={slices.reload} />
          {slices.data && slices.data.results.length === 0 ? (
            <div className="empty">{t("chips.drawer.noSlice")}</div>
          ) : (
            <table className="data" data-testid="chip-slices">
              <thead>
                <tr>
                  <th>Pod</th>
                  <th>{t("chips.col.template")}</th>
                  <th className="num">{t("chips.metric.memory")}</th>
                  <th>{t("chips.col.priority")}</th>
                  <th>{t("chips.col.phase")}</th>
                  <th>{t("chips.col.age")}</th>
                </tr>
              </thead>
              <tbody>
                {slices.data?.results.map((s) => (
                  <tr key={s.id}>
                    <td>
                      <div className="mono">{s.pod_name}</div>
                      <div className="muted tiny-text">
                        {s.namespace}
                      </div>
                    </td>
                    <td>{s.template || <span className="muted">{t("chips.wholeCard")}</span>}</td>
                    <td className="num">{mb(s.memory)}</td>
                    <td>
                      {s.priority_class || "–"} <span className="muted">({s.priority})</span>
                    </td>
                    <td>{s.phase}</td>
                    <td className="nowrap" title={dateTime(s.started_at)}>
                      {s.started_at ? duration(ageSeconds(s.started_at, now)) : "–"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h3 className="section-title">{t("chips.drawer.history")}</h3>
          <ChipHistory key={chipId} chipId={chipId} refresh={chip} now={now} />
          {changes.length > 0 && (
            <>
              <h3 className="section-title">{t("chips.drawer.changes")}</h3>
              <table className="data" data-testid="chip-changes">
                <thead>
                  <tr>
                    <th>{t("chips.col.when")}</th>
                    <th className="num">{t("chips.col.slotsUsed")}</th>
                    <th className="num">{t("chips.col.memoryUsed")}</th>
                    <th>{t("chips.col.health")}</th>
                  </tr>
                </thead>
                <tbody>
                  {[...changes].reverse().map((p, i) => (
                    <tr key={i}>
                      <td>{p.t ? ago(new Date(p.t).toISOString(), now) : t("chips.drawer.atPageLoad")}</td>
                      <td className="num">{p.slotsUsed}</td>
                      <td className="num">{mb(p.memUsed)}</td>
                      <td>{p.healthy ? stateLabel("healthy", t) : <span className="health-x">{stateLabel("unhealthy", t)}</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </>
      )}
    </Drawer>
  );
}

/** Which templates still fit on the chip, and the largest of them. */
function RoomLine({ chip, templates }: { chip: Chip; templates: TemplatesByType }) {
  const t = useT();
  if (!templates.get(chip.type)?.length) return null;
  const fits = fittingTemplates(chip, templates);
  return (
    <div className="muted mt-10 small-text" data-testid="chip-room">
      {fits.length
        ? t("chips.room", { names: fits.map((f) => f.name).join(", "), largest: fits[fits.length - 1].name })
        : t("chips.noRoom")}
    </div>
  );
}

/** The chip `?chip=` names: an id, or a UUID (null when no chip has it). */
export function chipFromParam(param: string, chips: readonly Pick<Chip, "id" | "uuid">[]): number | null {
  if (!param) return null;
  if (/^\d+$/.test(param)) return Number(param);
  return chips.find((c) => c.uuid === param)?.id ?? null;
}
