// Preemptions: the proposals to evict lower-priority pods for a request
// (`/api/preemptions/`). Admins approve or reject a pending one with a
// reason (required); others read.

import { useState, type ReactNode } from "react";
import { api, qs } from "../api/client";
import type { Page, PreemptionProposal } from "../api/types";
import { backToPageOne, FilterBar, ScopeChip, StateFilter } from "../components/FilterBar";
import { ReasonModal } from "../components/ReasonModal";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui";
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
  noun = "proposal",
  children,
}: {
  proposal: Pick<PreemptionProposal, "id">;
  decision: Decision;
  onClose: () => void;
  onDone: () => void;
  path?: string;
  noun?: string;
  children?: ReactNode;
}) {
  const verb = decision === "approve" ? "Approve" : "Reject";
  return (
    <ReasonModal
      title={`${verb} ${noun} #${proposal.id}`}
      verb={verb}
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
  return (
    <>
      <button className="btn small primary" onClick={() => onDecide("approve")} data-testid={`approve-${testId}`}>
        Approve
      </button>{" "}
      <button className="btn small danger" onClick={() => onDecide("reject")} data-testid={`reject-${testId}`}>
        Reject
      </button>
    </>
  );
}

export function PreemptionsPage() {
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
        <h1>Preemptions</h1>
        <span className="sub">{proposals.data ? `${proposals.data.count.toLocaleString()} proposals` : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={proposals.loading}>
          <StateFilter
            value={state}
            states={PROPOSAL_STATES}
            onChange={backToPageOne(setPage)(setState)}
            testId="proposal-state"
          />
          {request && <ScopeChip label={`request #${request}`} onClear={() => setRequest("")} testId="proposal-request-filter" />}
        </FilterBar>
        <ErrorNote error={proposals.error} onRetry={reload} />
        {!proposals.data && proposals.loading ? (
          <Loading />
        ) : proposals.data && proposals.data.results.length === 0 ? (
          <div className="empty">{state ? "No proposal matches." : "No preemption proposal in this cluster."}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="preemptions-table">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>Request</th>
                  <th>Node · chip</th>
                  <th>State</th>
                  <th>Victims</th>
                  <th className="num">Time lost</th>
                  <th>Created</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {proposals.data?.results.map((p) => (
                  <tr key={p.id} data-testid={`proposal-${p.id}`}>
                    <td className="num mono">{p.id}</td>
                    <td>
                      <Link to={`/requests/${p.request}`}>#{p.request}</Link> <span className="muted">{p.request_namespace} · {p.request_queue} · prio {p.request_priority}</span>
                    </td>
                    <td className="nowrap" title={p.chip_uuid || undefined}>
                      {p.node || "–"}
                      {p.chip_uuid ? ` · ${shortUuid(p.chip_uuid)}` : ""}
                    </td>
                    <td>
                      <Badge kind={requestBadge(p.state)} title={p.reason || undefined}>
                        {p.state}
                      </Badge>
                      {p.auto_approved && <span className="muted"> auto</span>}
                      {p.decided_by && <div className="muted">by {p.decided_by}</div>}
                      {p.progress && (
                        <div className="muted" data-testid={`progress-${p.id}`}>
                          {p.progress}
                        </div>
                      )}
                    </td>
                    <td>
                      {p.victims.length === 0 ? (
                        <span className="muted">none</span>
                      ) : (
                        <ul className="plain-list">
                          {p.victims.map((v) => (
                            <li key={`${v.namespace}/${v.pod}`}>
                              <span className="mono">
                                {v.namespace}/{v.pod}
                              </span>{" "}
                              <span className="muted">
                                prio {v.priority} · loses {lostTime(v.lost_seconds)}
                              </span>
                            </li>
                          ))}
                        </ul>
                      )}
                      {p.crosses_queues.length > 0 && (
                        <div data-testid={`crosses-${p.id}`}>
                          <Badge kind="warn" title="Volcano's own preemption stays inside a queue">
                            crosses queues
                          </Badge>{" "}
                          <span className="muted">victims in {p.crosses_queues.join(", ")}</span>
                        </div>
                      )}
                      {p.caveat && (
                        <div data-testid={`caveat-${p.id}`}>
                          <Badge kind="warn" title="the scheduler picks the chip within the node itself">
                            not guaranteed
                          </Badge>{" "}
                          <span className="muted">{p.caveat.replace(/^not guaranteed: /, "")}</span>
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
