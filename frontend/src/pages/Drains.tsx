// Drains (`/api/drains/`): every drain of a chip or a node, open and past,
// each pod's eviction, and for admins the decision on pods the portal did not
// make (approve: they are evicted too; reject: they keep running and the chips
// stay cordoned), with a reason. Beside Preemptions, which decides the same way.

import { useState, type ReactNode } from "react";
import { api, qs } from "../api/client";
import type { Drain, DrainState, Page } from "../api/types";
import { backToPageOne, FilterBar, ScopeChip, SelectFilter } from "../components/FilterBar";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { ago, dateTime, shortUuid } from "../lib/format";
import { requestBadge } from "../lib/queue";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useLiveReload, useNow } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";
import { useRichT } from "../i18n/rich";
import { DecisionButtons, DecisionForm, type Decision } from "./Preemptions";

const PAGE_SIZE = 50;
export const DRAIN_STATES: readonly DrainState[] = ["pending", "evicting", "drained", "rejected", "failed", "uncordoned"];

/** An admin decides a pending drain that has foreign pods not approved yet. */
export function awaitsDecision(d: Pick<Drain, "state" | "victims">): boolean {
  return d.state === "pending" && d.victims.some((v) => v.foreign && !v.approved);
}

function drainBadge(state: DrainState): string {
  return state === "drained" || state === "uncordoned" ? "ok" : requestBadge(state);
}

export function DrainsPage() {
  const t = useT();
  const rich = useRichT();
  const { cluster, live } = useClusters();
  const { can } = useSession();
  useLiveVersion(live);
  const now = useNow(5000);
  const [state, setState] = useQueryParam("state");
  // ?drain=<id>: one drain (linked from a chip's drawer)
  const [only, setOnly] = useQueryParam("drain");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const id = cluster!.id;
  const drains = useApi(
    (signal) =>
      only
        ? api.get<Drain>(`/api/drains/${only}/`, signal).then((d): Page<Drain> => ({ count: 1, next: null, previous: null, results: [d] }))
        : api.get<Page<Drain>>(`/api/drains/${qs({ cluster: id, state, page, page_size: PAGE_SIZE })}`, signal),
    [id, state, page, only],
  );
  // A drain moves as its chips do (cordon, slices leaving): refetch on their deltas.
  const tick = (live?.chips.version ?? 0) + (live?.ticks.slices ?? 0) + (live?.ticks.snapshot ?? 0);
  const { reload } = drains;
  useLiveReload(reload, tick);
  const [deciding, setDeciding] = useState<{ drain: Drain; decision: Decision } | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>{t("drains.title")}</h1>
        <span className="sub">{drains.data ? t("drains.count", { count: drains.data.count }) : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={drains.loading}>
          <SelectFilter
            label={t("drains.stateFilter")}
            value={state}
            onChange={backToPageOne(setPage)(setState)}
            options={DRAIN_STATES.map((s) => ({ value: s, label: t(`drains.state.${s}`) }))}
            all={t("drains.allStates")}
            testId="drain-state"
          />
          {only && <ScopeChip label={t("drains.scope", { id: only })} onClear={() => setOnly("")} />}
        </FilterBar>
        <ErrorNote error={drains.error} onRetry={reload} />
        {!drains.data && drains.loading ? (
          <Loading />
        ) : drains.data && drains.data.results.length === 0 ? (
          <div className="empty">{state ? t("drains.noMatch") : t("drains.none")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="drains-table">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>{t("drains.col.what")}</th>
                  <th>{t("drains.col.state")}</th>
                  <th>{t("drains.col.pods")}</th>
                  <th>{t("drains.col.asked")}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {drains.data?.results.map((d) => (
                  <tr key={d.id} data-testid={`drain-${d.id}`}>
                    <td className="num mono">{d.id}</td>
                    <td>
                      <div>
                        {rich("drains.what", {
                          scope: d.scope === "node" ? "node" : "chip",
                          node: d.node,
                          link: (chunks: ReactNode[]) => <Link to={`/chips?node=${encodeURIComponent(d.node)}`}>{chunks}</Link>,
                        })}
                      </div>
                      <div className="muted tiny-text mono">{d.chip_uuids.map(shortUuid).join(", ")}</div>
                    </td>
                    <td>
                      <Badge kind={drainBadge(d.state)}>{t(`drains.state.${d.state}`)}</Badge>
                      {awaitsDecision(d) && <div className="muted">{t("drains.awaits")}</div>}
                      {d.decided_by && (
                        <div className="muted">
                          {d.decision_reason ? t("drains.byReason", { who: d.decided_by, reason: d.decision_reason }) : t("drains.by", { who: d.decided_by })}
                        </div>
                      )}
                      {d.progress && (
                        <div className="muted small-text" data-testid={`drain-progress-${d.id}`}>
                          {d.progress}
                        </div>
                      )}
                    </td>
                    <td>
                      {d.victims.length === 0 ? (
                        <span className="muted">{t("drains.noPod")}</span>
                      ) : (
                        <ul className="plain-list">
                          {d.victims.map((v) => (
                            <li key={`${v.namespace}/${v.pod}`}>
                              <span className="mono">
                                {v.namespace}/{v.pod}
                              </span>{" "}
                              {v.foreign ? (
                                <Badge kind="warn">{t("drains.foreign")}</Badge>
                              ) : (
                                v.request && <Link to={`/requests/${v.request}`}>#{v.request}</Link>
                              )}{" "}
                              <span className="muted">
                                {v.evicted
                                  ? t("drains.victim.evicted")
                                  : v.blocked
                                    ? t("drains.victim.blocked", { why: v.blocked })
                                    : v.approved
                                      ? t("drains.victim.approved")
                                      : t("drains.victim.waiting")}
                                {v.requeued ? ` · ${t("drains.victim.requeued")}` : ""}
                                {v.last_error ? ` · ${v.last_error}` : ""}
                              </span>
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td className="nowrap" title={dateTime(d.created_at)}>
                      {ago(d.created_at, now)}
                      <div className="muted">
                        {t("drains.asked", { who: d.requested_by ?? "–", reason: d.reason })}
                      </div>
                    </td>
                    <td className="nowrap">
                      {can("admin") && awaitsDecision(d) && <DecisionButtons testId={`drain-${d.id}`} onDecide={(decision) => setDeciding({ drain: d, decision })} />}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {drains.data && drains.data.count > PAGE_SIZE && (
          <Pager page={page} count={drains.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />
        )}
      </div>
      {deciding && (
        <DecisionForm
          proposal={deciding.drain}
          decision={deciding.decision}
          path="/api/drains/"
          title={t(`drains.decisionTitle.${deciding.decision}`, { id: deciding.drain.id })}
          onClose={() => setDeciding(null)}
          onDone={() => {
            setDeciding(null);
            reload();
          }}
        >
          <p className="small-text">
            {t(`drains.decisionExplain.${deciding.decision}`)}
          </p>
        </DecisionForm>
      )}
    </>
  );
}
