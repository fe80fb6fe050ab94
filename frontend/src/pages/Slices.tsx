// Slices: every vNPU held by a pod, searchable (pod, namespace, node, template),
// filtered by chip type and phase, sorted and paginated by the API
// (`?ordering=`); refreshed live.

import { useMemo } from "react";
import { api, qs } from "../api/client";
import type { Page, Slice } from "../api/types";
import { backToPageOne, FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui";
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
        <h1>Slices</h1>
        <span className="sub">{slices.data ? `${slices.data.count.toLocaleString()} slices` : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={slices.loading}>
          <TextFilter
            label="search slices"
            placeholder="Search pod, namespace, node or template"
            search
            value={q}
            onChange={refilter(setQ)}
            width={320}
            testId="slice-search"
          />
          <SelectFilter label="chip type" value={type} onChange={refilter(setType)} options={types} all="All chip types" />
          <SelectFilter label="phase" value={phase} onChange={refilter(setPhase)} options={PHASES} all="All phases" />
        </FilterBar>
        <ErrorNote error={slices.error} onRetry={slices.reload} />
        {!slices.data && slices.loading ? (
          <Loading />
        ) : slices.data && slices.data.results.length === 0 ? (
          <div className="empty">{q || type || phase ? "No slice matches." : "No slice in this cluster."}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="slices-table">
              <thead>
                <tr>
                  <SortHeader field="pod_name" label="Pod" ordering={ordering} onSort={sortBy} />
                  <SortHeader field="namespace" label="Namespace" ordering={ordering} onSort={sortBy} />
                  <SortHeader field="node_name" label="Node · chip" ordering={ordering} onSort={sortBy} />
                  <th>Chip type</th>
                  <SortHeader field="template" label="Template" ordering={ordering} onSort={sortBy} />
                  <SortHeader field="memory" label="Memory" ordering={ordering} onSort={sortBy} firstDir={-1} className="num" />
                  <th className="num">AICore</th>
                  <SortHeader field="priority" label="Priority" ordering={ordering} onSort={sortBy} firstDir={-1} />
                  <SortHeader field="phase" label="Phase" ordering={ordering} onSort={sortBy} />
                  <SortHeader field="started_at" label="Age" ordering={ordering} onSort={sortBy} firstDir={-1} invert />
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
                              <span data-testid="slice-unhealthy-chip" title="its chip is reported unhealthy: move it">
                                unhealthy chip
                              </span>
                            </Badge>
                          </>
                        )}
                      </td>
                      <td>{s.common_word}</td>
                      <td>{s.template || <span className="muted">whole card</span>}</td>
                      <td className="num">{mb(s.memory)}</td>
                      <td className="num">{s.aicore}</td>
                      <td>
                        {s.priority_class || "–"} <span className="muted">({s.priority})</span>
                      </td>
                      <td>{s.phase}</td>
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
