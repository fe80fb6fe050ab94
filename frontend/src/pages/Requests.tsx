// Requests: the queue of CI requests of the cluster (`/api/requests/`),
// filtered by state and queue, refreshed on the `requests` / `proposal`
// deltas of the live socket and every 5 s. Operators cancel their own
// unfinished requests, admins any.

import { useState } from "react";
import { api, qs } from "../api/client";
import type { CiRequest, Page } from "../api/types";
import { backToPageOne, FilterBar, SelectFilter, TextFilter } from "../components/FilterBar";
import { Badge, CopyText, ErrorNote, Loading, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { errorText } from "../lib/errors";
import { ago, dateTime, shortUuid } from "../lib/format";
import { asked, booked, canCancel, REQUEST_STATES, requestBadge } from "../lib/queue";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useLiveReload, useNow } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";

const PAGE_SIZE = 50;

export function RequestsPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  const { me, can } = useSession();
  useLiveVersion(live);
  const now = useNow(5000);
  const [state, setState] = useQueryParam("state");
  const [queue, setQueue] = useQueryParam("queue");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const refilter = backToPageOne(setPage);
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  const toggle = (id: number) =>
    setExpanded((open) => {
      const next = new Set(open);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  const id = cluster!.id;
  const requests = useApi(
    (signal) =>
      api.get<Page<CiRequest>>(`/api/requests/${qs({ cluster: id, state, queue, page, page_size: PAGE_SIZE })}`, signal),
    [id, state, queue, page],
  );
  const tick = (live?.ticks.requests ?? 0) + (live?.ticks.proposal ?? 0) + (live?.ticks.snapshot ?? 0);
  const { reload } = requests;
  useLiveReload(reload, tick);

  const [cancelError, setCancelError] = useState<{ id: number; text: string } | null>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const cancel = async (r: CiRequest) => {
    if (!window.confirm(t("requests.cancelConfirm", { id: r.id, namespace: r.namespace }))) return;
    setBusy(r.id);
    setCancelError(null);
    try {
      await api.del(`/api/requests/${r.id}/`);
      reload();
    } catch (e) {
      setCancelError({ id: r.id, text: errorText(e) });
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <div className="page-head">
        <h1>{t("requests.title")}</h1>
        <span className="sub">{requests.data ? t("requests.count", { count: requests.data.count }) : ""}</span>
        {can("operator") && (
          <Link to="/requests/new" className="btn primary push-right" data-testid="request-new">
            {t("requests.submitTitle")}
          </Link>
        )}
      </div>
      <div className="panel">
        <FilterBar busy={requests.loading}>
          <SelectFilter
            label={t("requests.col.state")}
            value={state}
            options={REQUEST_STATES.map((s) => ({ value: s, label: t(`requests.state.${s}`) }))}
            all={t("requests.allStates")}
            onChange={refilter(setState)}
            testId="request-state"
          />
          <TextFilter
            label={t("requests.col.queue")}
            placeholder={t("requests.col.queue")}
            search
            value={queue}
            onChange={refilter(setQueue)}
            debounceMs={300}
            testId="request-queue"
          />
        </FilterBar>
        <ErrorNote error={requests.error} onRetry={reload} />
        {!requests.data && requests.loading ? (
          <Loading />
        ) : requests.data && requests.data.results.length === 0 ? (
          <div className="empty">{state || queue ? t("requests.noneMatch") : t("requests.none")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="requests-table">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>{t("requests.col.state")}</th>
                  <th>{t("requests.col.queue")}</th>
                  <th>{t("requests.col.by")}</th>
                  <th className="num" title={t("requests.col.positionTitle")}>{t("requests.col.position")}</th>
                  <th>{t("requests.col.asked")}</th>
                  <th>{t("requests.col.booked")}</th>
                  <th>{t("requests.col.priority")}</th>
                  <th>{t("requests.col.nodeChip")}</th>
                  <th>{t("requests.col.pod")}</th>
                  <th>{t("requests.col.reason")}</th>
                  <th>{t("requests.col.created")}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {requests.data?.results.map((r) => (
                  <tr key={r.id} data-testid={`request-${r.id}`}>
                    <td className="num mono">
                      <Link to={`/requests/${r.id}`} data-testid={`open-${r.id}`}>
                        {r.id}
                      </Link>
                    </td>
                    <td>
                      <Badge kind={requestBadge(r.state)}>{t(`requests.state.${r.state}`)}</Badge>
                    </td>
                    <td>{r.queue}</td>
                    <td className="nowrap" data-testid="submitted-by">
                      {r.submitted_by || "–"}
                    </td>
                    <td className="num">{r.state === "pending" && r.position !== null ? r.position : "–"}</td>
                    <td className="nowrap">
                      {asked(r)}
                      <div className="muted">
                        {t("requests.chipTypeIn", { chipType: r.chip_type, namespace: r.namespace })}
                      </div>
                    </td>
                    <td className="nowrap">{booked(r)}</td>
                    <td className="nowrap">
                      {r.priority || "–"}
                      <div className="muted">{r.priority_value}</div>
                    </td>
                    <td className="nowrap" title={r.chip_uuid ?? undefined}>
                      {r.node || "–"}
                      {r.chip_uuid && (
                        <div className="muted">
                          <CopyText value={r.chip_uuid} shown={shortUuid(r.chip_uuid)} />
                        </div>
                      )}
                    </td>
                    <td className="mono nowrap">{r.pod_name || "–"}</td>
                    <td className="reason">
                      {/* two lines at most; a click shows the whole reason */}
                      <div
                        className={expanded.has(r.id) ? "expandable" : "clamp-2 expandable"}
                        title={expanded.has(r.id) ? t("requests.reasonFold") : t("requests.reasonUnfold")}
                        onClick={() => toggle(r.id)}
                        data-testid="request-reason"
                      >
                        {r.reason || <span className="muted">–</span>}
                      </div>
                      {cancelError?.id === r.id && (
                        <div className="field-error" role="alert">
                          {cancelError.text}
                        </div>
                      )}
                    </td>
                    <td className="nowrap" title={t("requests.timesTitle", {
                        created: dateTime(r.created_at),
                        running: r.running_at ? dateTime(r.running_at) : "none",
                        finished: r.finished_at ? dateTime(r.finished_at) : "none",
                      })}>
                      {ago(r.created_at, now)}
                      {r.running_at && <div className="muted">{t("requests.runningSince", { ago: ago(r.running_at, now) })}</div>}
                    </td>
                    <td>
                      {canCancel(me.role, me.username, r) && (
                        <button className="btn small" disabled={busy === r.id} onClick={() => void cancel(r)} data-testid={`cancel-${r.id}`}>
                          {t("requests.cancel")}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {requests.data && requests.data.count > 0 && (
          <Pager page={page} count={requests.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />
        )}
      </div>
    </>
  );
}
