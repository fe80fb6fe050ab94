// Slices: every vNPU held by a pod, searchable (pod, namespace, node, template),
// filtered by chip type and phase, sorted and paginated by the API
// (`?ordering=`); refreshed live.

import { useMemo } from "react";
import { api, qs } from "../api/client";
import type { Page, Slice } from "../api/types";
import { backToPageOne, FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { ageSeconds, dateTime, duration, mb } from "../lib/format";
import { orderingParam, orderingText, parseOrdering, toggleOrdering, type Ordering } from "../lib/ordering";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";

const PAGE_SIZE = 50;
const PHASES = ["Pending", "Running", "Succeeded", "Failed", "Unknown"];

/** The fields `/api/slices/?ordering=` accepts. */
export const SLICE_ORDERING = ["pod_name", "namespace", "node_name", "template", "memory", "priority", "started_at", "phase"] as const;
export type SliceOrderingField = (typeof SLICE_ORDERING)[number];
/** Rows that compare equal keep the server's default order across pages. */
const TIE_BREAKERS: readonly SliceOrderingField[] = ["namespace", "pod_name"];

/**
 * A sortable column header. `firstDir` is the direction of the first click;
 * `invert` shows the arrow for what the column displays (Age is the reverse
 * of started_at).
 */
function SortHeader({
  field,
  label,
  ordering,
  onSort,
  firstDir = 1,
  invert = false,
  className,
}: {
  field: SliceOrderingField;
  label: string;
  ordering: Ordering<SliceOrderingField> | null;
  onSort: (o: Ordering<SliceOrderingField>) => void;
  firstDir?: 1 | -1;
  invert?: boolean;
  className?: string;
}) {
  const active = ordering?.field === field;
  const shown = active ? (invert ? -ordering.dir : ordering.dir) : 0;
  return (
    <th className={className} aria-sort={shown === 1 ? "ascending" : shown === -1 ? "descending" : undefined}>
      <button className="sort" onClick={() => onSort(toggleOrdering(ordering, field, firstDir))} data-testid={`sort-${field}`}>
        {label}
        {shown === 1 ? " ▲" : shown === -1 ? " ▼" : ""}
      </button>
    </th>
  );
}
export function SlicesPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const now = useNow(10_000);
  const [q, setQ] = useQueryParam("q");
  const [type, setType] = useQueryParam("type");
  const [phase, setPhase] = useQueryParam("phase");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const [orderingParamText, setOrderingParam] = useQueryParam("ordering");
  const ordering = parseOrdering(orderingParamText, SLICE_ORDERING);
  const sortBy = (o: Ordering<SliceOrderingField>) => {
    setOrderingParam(orderingText(o));
    setPage("1");
  };
  const order = orderingParam(ordering, TIE_BREAKERS);
  const page = Math.max(1, Number(pageParam) || 1);
  const refilter = backToPageOne(setPage);

  const id = cluster!.id;
  const slices = useApi(
    (signal) =>
      api.get<Page<Slice>>(
        `/api/slices/${qs({ cluster: id, q, chip_type: type, phase, ordering: order, page, page_size: PAGE_SIZE })}`,
        signal,
      ),
    [id, q, type, phase, order, page],
  );
  useThrottledEffect(slices.reload, live?.ticks.slices ?? 0, 3000);

  const types = useMemo(() => {
    const set = new Set<string>();
    live?.chips.byId.forEach((c) => set.add(c.type));
    return [...set].sort();
  }, [live, live?.chips.version]); // eslint-disable-line react-hooks/exhaustive-deps
  const chipIds = useMemo(() => {
    const map = new Map<string, number>();
    live?.chips.byId.forEach((c) => map.set(c.uuid, c.id));
    return map;
  }, [live, live?.chips.version]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <>
      <div className="page-head">
        <h1>{t("slices.title")}</h1>
        <span className="sub">{slices.data ? t("slices.count", { count: slices.data.count }) : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={slices.loading}>
          <TextFilter
            label={t("slices.search")}
            placeholder={t("slices.searchPlaceholder")}
            search
            value={q}
            onChange={refilter(setQ)}
            width={320}
            testId="slice-search"
          />
          <SelectFilter label={t("slices.col.chipType")} value={type} onChange={refilter(setType)} options={types} all={t("slices.allChipTypes")} />
          <SelectFilter
            label={t("slices.col.phase")}
            value={phase}
            onChange={refilter(setPhase)}
            options={PHASES.map((p) => ({ value: p, label: t(`slices.phase.${p}`) }))}
            all={t("slices.allPhases")}
          />
        </FilterBar>
        <ErrorNote error={slices.error} onRetry={slices.reload} />
        {!slices.data && slices.loading ? (
          <Loading />
        ) : slices.data && slices.data.results.length === 0 ? (
          <div className="empty">{q || type || phase ? t("slices.noneMatch") : t("slices.none")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="slices-table">
              <thead>
                <tr>
                  <SortHeader field="pod_name" label={t("slices.col.pod")} ordering={ordering} onSort={sortBy} />
                  <SortHeader field="namespace" label={t("slices.col.namespace")} ordering={ordering} onSort={sortBy} />
                  <SortHeader field="node_name" label={t("slices.col.nodeChip")} ordering={ordering} onSort={sortBy} />
                  <th>{t("slices.col.chipType")}</th>
                  <SortHeader field="template" label={t("slices.col.template")} ordering={ordering} onSort={sortBy} />
                  <SortHeader field="memory" label={t("slices.col.memory")} ordering={ordering} onSort={sortBy} firstDir={-1} className="num" />
                  <th className="num">AICore</th>
                  <SortHeader field="priority" label={t("slices.col.priority")} ordering={ordering} onSort={sortBy} firstDir={-1} />
                  <SortHeader field="phase" label={t("slices.col.phase")} ordering={ordering} onSort={sortBy} />
                  <SortHeader field="started_at" label={t("slices.col.age")} ordering={ordering} onSort={sortBy} firstDir={-1} invert />
                </tr>
              </thead>
              <tbody>
                {slices.data?.results.map((s) => {
                  const chipId = chipIds.get(s.chip_uuid);
                  return (
                    <tr key={s.id}>
                      <td className="mono">{s.pod_name}</td>
                      <td>{s.namespace}</td>
                      <td className="nowrap">
                        {chipId !== undefined ? (
                          <Link to={`/chips?chip=${chipId}`}>
                            {s.node_name} #{s.chip_index ?? "?"}
                          </Link>
                        ) : (
                          <span>
                            {s.node_name} #{s.chip_index ?? "?"}
                          </span>
                        )}
                        {s.on_unhealthy_chip && (
                          <>
                            {" "}
                            <Badge kind="error">
                              <span data-testid="slice-unhealthy-chip" title={t("slices.unhealthyChipTitle")}>
                                {t("slices.unhealthyChip")}
                              </span>
                            </Badge>
                          </>
                        )}
                      </td>
                      <td>{s.common_word}</td>
                      <td>{s.template || <span className="muted">{t("slices.wholeCard")}</span>}</td>
                      <td className="num">{mb(s.memory)}</td>
                      <td className="num">{s.aicore}</td>
                      <td>
                        {s.priority_class || "–"} <span className="muted">({s.priority})</span>
                      </td>
                      <td>{PHASES.includes(s.phase) ? t(`slices.phase.${s.phase}`) : s.phase}</td>
                      <td className="nowrap" title={dateTime(s.started_at)}>
                        {s.started_at ? duration(ageSeconds(s.started_at, now)) : "–"}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        {slices.data && slices.data.count > 0 && (
          <Pager page={page} count={slices.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />
        )}
      </div>
    </>
  );
}
