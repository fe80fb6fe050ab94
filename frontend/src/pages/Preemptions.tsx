// Preemptions: the proposals to evict lower-priority pods for a request
// (`/api/preemptions/`). Admins approve or reject a pending one with a
// reason (required); others read.

import { useState, type ReactNode } from "react";
import { api, qs } from "../api/client";
import type { Page, PreemptionProposal } from "../api/types";
import { backToPageOne, FilterBar, ScopeChip, SelectFilter } from "../components/FilterBar";
import { ReasonModal } from "../components/ReasonModal";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { ago, dateTime, shortUuid } from "../lib/format";
import { canDecide, lostTime, PROPOSAL_STATES, requestBadge } from "../lib/queue";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useLiveReload, useNow } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";

const PAGE_SIZE = 50;

export type Decision = "approve" | "reject";

/**
 * The reason form of an approve / reject: the reason is required; the API's
 * errors land on it or above it. `path` is the collection (a drain's decision
 * goes to /api/drains/).
 */
export function DecisionForm({
  proposal,
  decision,
  onClose,
  onDone,
  path = "/api/preemptions/",
  title,
  children,
}: {
  proposal: Pick<PreemptionProposal, "id">;
  decision: Decision;
  onClose: () => void;
  onDone: () => void;
  path?: string;
  /** the dialog's title (default: "Approve proposal #7" / "Reject proposal #7") */
  title?: string;
  children?: ReactNode;
}) {
  const t = useT();
  return (
    <ReasonModal
      title={title ?? t(`preemptions.decisionTitle.${decision}`, { id: proposal.id })}
      verb={t(`preemptions.decide.${decision}`)}
      tone={decision === "approve" ? "primary" : "danger"}
      onClose={onClose}
      submit={async (reason) => {
        await api.post(`${path}${proposal.id}/${decision}/`, { reason });
        onDone();
      }}
    >
      {children}
    </ReasonModal>
  );
}

/** Approve and Reject, side by side (test ids `approve-<testId>`, `reject-<testId>`). */
export function DecisionButtons({ testId, onDecide }: { testId: string; onDecide: (decision: Decision) => void }) {
  const t = useT();
  return (
    <>
      <button className="btn small primary" onClick={() => onDecide("approve")} data-testid={`approve-${testId}`}>
        {t("preemptions.decide.approve")}
      </button>{" "}
      <button className="btn small danger" onClick={() => onDecide("reject")} data-testid={`reject-${testId}`}>
        {t("preemptions.decide.reject")}
      </button>
    </>
  );
}

export function PreemptionsPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  const { me } = useSession();
  useLiveVersion(live);
  const now = useNow(5000);
  const [state, setState] = useQueryParam("state");
  // ?request=<id>: the proposals of one request (linked from its detail page)
  const [request, setRequest] = useQueryParam("request");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const id = cluster!.id;
  const proposals = useApi(
    (signal) => api.get<Page<PreemptionProposal>>(`/api/preemptions/${qs({ cluster: id, state, request, page, page_size: PAGE_SIZE })}`, signal),
    [id, state, request, page],
  );
  const tick = (live?.ticks.proposal ?? 0) + (live?.ticks.snapshot ?? 0);
  const { reload } = proposals;
  useLiveReload(reload, tick);
  const [deciding, setDeciding] = useState<{ proposal: PreemptionProposal; decision: Decision } | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>{t("preemptions.title")}</h1>
        <span className="sub">{proposals.data ? t("preemptions.count", { count: proposals.data.count }) : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={proposals.loading}>
          <SelectFilter
            label={t("preemptions.stateFilter")}
            value={state}
            onChange={backToPageOne(setPage)(setState)}
            options={PROPOSAL_STATES.map((s) => ({ value: s, label: t(`preemptions.state.${s}`) }))}
            all={t("preemptions.allStates")}
            testId="proposal-state"
          />
          {request && <ScopeChip label={t("preemptions.requestScope", { id: request })} onClear={() => setRequest("")} testId="proposal-request-filter" />}
        </FilterBar>
        <ErrorNote error={proposals.error} onRetry={reload} />
        {!proposals.data && proposals.loading ? (
          <Loading />
        ) : proposals.data && proposals.data.results.length === 0 ? (
          <div className="empty">{state ? t("preemptions.noMatch") : t("preemptions.none")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="preemptions-table">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>{t("preemptions.col.request")}</th>
                  <th>{t("preemptions.col.where")}</th>
                  <th>{t("preemptions.col.state")}</th>
                  <th>{t("preemptions.col.victims")}</th>
                  <th className="num">{t("preemptions.col.lost")}</th>
                  <th>{t("preemptions.col.created")}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {proposals.data?.results.map((p) => (
                  <tr key={p.id} data-testid={`proposal-${p.id}`}>
                    <td className="num mono">{p.id}</td>
                    <td>
                      <Link to={`/requests/${p.request}`}>#{p.request}</Link>{" "}
                      <span className="muted">
                        {p.request_namespace} · {p.request_queue} · {t("preemptions.prio", { priority: p.request_priority })}
                      </span>
                    </td>
                    <td className="nowrap" title={p.chip_uuid || undefined}>
                      {p.node || "–"}
                      {p.chip_uuid ? ` · ${shortUuid(p.chip_uuid)}` : ""}
                    </td>
                    <td>
                      <Badge kind={requestBadge(p.state)} title={p.reason || undefined}>
                        {t(`preemptions.state.${p.state}`)}
                      </Badge>
                      {p.auto_approved && <span className="muted"> {t("preemptions.auto")}</span>}
                      {p.decided_by && <div className="muted">{t("preemptions.by", { who: p.decided_by })}</div>}
                      {p.progress && (
                        <div className="muted" data-testid={`progress-${p.id}`}>
                          {p.progress}
                        </div>
                      )}
                    </td>
                    <td>
                      {p.victims.length === 0 ? (
                        <span className="muted">{t("preemptions.noVictim")}</span>
                      ) : (
                        <ul className="plain-list">
                          {p.victims.map((v) => (
                            <li key={`${v.namespace}/${v.pod}`}>
                              <span className="mono">
                                {v.namespace}/{v.pod}
                              </span>{" "}
                              <span className="muted">
                                {t("preemptions.victim", { priority: v.priority, lost: lostTime(v.lost_seconds) })}
                              </span>
                            </li>
                          ))}
                        </ul>
                      )}
                      {p.crosses_queues.length > 0 && (
                        <div data-testid={`crosses-${p.id}`}>
                          <Badge kind="warn" title={t("preemptions.crossesTitle")}>
                            {t("preemptions.crosses")}
                          </Badge>{" "}
                          <span className="muted">{t("preemptions.victimsIn", { queues: p.crosses_queues.join(", ") })}</span>
                        </div>
                      )}
                      {p.caveat && (
                        <div data-testid={`caveat-${p.id}`}>
                          <Badge kind="warn" title={t("preemptions.caveatTitle")}>
                            {t("preemptions.caveat")}
                          </Badge>{" "}
                          <span className="muted">{p.caveat.replace(/^(not guaranteed: |无法保证：)/, "")}</span>
                        </div>
                      )}
                    </td>
                    <td className="num">{lostTime(p.lost_seconds)}</td>
                    <td className="nowrap" title={dateTime(p.created_at)}>
                      {ago(p.created_at, now)}
                    </td>
                    <td className="nowrap">
                      {canDecide(me.role, p) && <DecisionButtons testId={String(p.id)} onDecide={(decision) => setDeciding({ proposal: p, decision })} />}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {proposals.data && proposals.data.count > 0 && (
          <Pager page={page} count={proposals.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />
        )}
      </div>
      {deciding && (
        <DecisionForm
          proposal={deciding.proposal}
          decision={deciding.decision}
          onClose={() => setDeciding(null)}
          onDone={() => {
            setDeciding(null);
            reload();
          }}
        />
      )}
    </>
  );
}
