// The audit log: every change, who made it and why, with before and after.

import { api, qs } from "../api/client";
import type { AuditEvent, Page } from "../api/types";
import { EventTable, textOrDash, whenColumn, type EventColumn } from "../components/EventTable";
import { backToPageOne, FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { DiffView, ErrorNote, Loading, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { useQueryParam } from "../lib/router";
import { useApi } from "../lib/useApi";
import { useClusters } from "../state/cluster";

const PAGE_SIZE = 50;

/** A line diff of two JSON values, pretty-printed (enough to see what changed). */
export function jsonDiff(before: unknown, after: unknown): string {
  const a = before === null || before === undefined ? [] : JSON.stringify(before, null, 2).split("\n");
  const b = after === null || after === undefined ? [] : JSON.stringify(after, null, 2).split("\n");
  // LCS table: audit payloads are small (a config at most).
  const n = a.length;
  const m = b.length;
  if (n * m > 400_000) return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)].join("\n");
  const dp: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(` ${a[i]}`);
      i++;
      j++;
    } else if (j < m && (i >= n || dp[i][j + 1] >= dp[i + 1][j])) {
      out.push(`+${b[j++]}`);
    } else {
      out.push(`-${a[i++]}`);
    }
  }
  return out.join("\n");
}

const OBJECT_TYPES = ["cluster", "chiptype", "template", "deviceconfigversion", "apitoken", "workload"];

export function AuditPage() {
  const t = useT();
  const { cluster, clusters } = useClusters();
  const [scope, setScope] = useQueryParam("scope", "cluster");
  const [action, setAction] = useQueryParam("action");
  const [actor, setActor] = useQueryParam("actor");
  const [objectType, setObjectType] = useQueryParam("object_type");
  const [since, setSince] = useQueryParam("since");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const refilter = backToPageOne(setPage);

  const events = useApi(
    (signal) =>
      api.get<Page<AuditEvent>>(
        `/api/audit-events/${qs({
          cluster: scope === "cluster" ? cluster!.id : undefined,
          action,
          actor,
          object_type: objectType,
          since: since ? new Date(since).toISOString() : undefined,
          page,
          page_size: PAGE_SIZE,
        })}`,
        signal,
      ),
    [scope, cluster?.id, action, actor, objectType, since, page],
  );
  const clusterName = (id: number | null) => clusters.find((c) => c.id === id)?.name ?? (id === null ? "–" : `#${id}`);
  const columns: EventColumn<AuditEvent>[] = [
    whenColumn((e) => e.created_at),
    { header: t("audit.col.who"), cell: (e) => e.actor_name || "–" },
    { header: t("audit.col.action"), className: "mono", cell: (e) => e.action },
    { header: t("audit.col.object"), cell: (e) => e.object_repr || `${e.object_type} ${e.object_id}` },
    { header: t("audit.col.cluster"), cell: (e) => clusterName(e.cluster) },
    { header: t("audit.col.reason"), maxWidth: 360, cell: (e) => textOrDash(e.reason) },
  ];

  return (
    <>
      <div className="page-head">
        <h1>{t("audit.title")}</h1>
        <span className="sub">{events.data ? t("audit.count", { count: events.data.count }) : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={events.loading}>
          <SelectFilter
            label={t("audit.scope")}
            value={scope}
            onChange={setScope}
            options={[
              { value: "cluster", label: t("audit.scope.cluster") },
              { value: "all", label: t("audit.scope.all") },
            ]}
          />
          <TextFilter
            label={t("audit.action")}
            placeholder={t("audit.actionPlaceholder")}
            value={action}
            onChange={refilter(setAction)}
            width={250}
            debounceMs={300}
          />
          <TextFilter label={t("audit.actor")} placeholder={t("audit.actorPlaceholder")} value={actor} onChange={refilter(setActor)} width={130} debounceMs={300} />
          <SelectFilter
            label={t("audit.objectType")}
            value={objectType}
            onChange={refilter(setObjectType)}
            options={OBJECT_TYPES.map((type) => ({ value: type, label: t(`audit.objectType.${type}`) }))}
            all={t("audit.allObjects")}
          />
          <label className="muted inline-field">
            {t("audit.since")}
            <input className="input" type="datetime-local" value={since} onChange={(e) => refilter(setSince)(e.target.value)} />
          </label>
        </FilterBar>
        <ErrorNote error={events.error} onRetry={events.reload} />
        {!events.data && events.loading ? (
          <Loading />
        ) : (
          <EventTable
            rows={events.data?.results ?? []}
            rowKey={(e) => e.id}
            columns={columns}
            testId="audit-table"
            scroll
            empty={events.data ? t("audit.noMatch") : undefined}
            details={{
              has: (e) => e.before !== null || e.after !== null,
              render: (e) => <DiffView diff={jsonDiff(e.before, e.after)} empty={t("audit.noChange")} />,
              show: t("audit.changes"),
              hide: t("audit.details.hide"),
            }}
          />
        )}
        {events.data && events.data.count > 0 && <Pager page={page} count={events.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />}
      </div>
    </>
  );
}
