// A request's detail (`/requests/<id>`): its state and reason, its position
// while it waits, the timeline (submitted, reserved, pod created, bound and
// running, finished), node and chip, attempts, its preemption proposals, the
// scheduler's reason for its pending pod (mirrored by sync from the pod's
// FailedScheduling events), the job's log and result (components/LogPanel)
// and its audit trail. Refreshed on the live socket's request / proposal /
// pending deltas and every 5 s.

import { useCallback, useRef, useState } from "react";
import { api, qs } from "../api/client";
import type { AuditEvent, CiRequest, Page, PendingPod, PreemptionProposal } from "../api/types";
import { EventTable, type EventColumn } from "../components/EventTable";
import { LogPanel } from "../components/LogPanel";
import { Badge, CopyText, ErrorNote, Loading } from "../components/ui";
import { errorText } from "../lib/errors";
import { ago, dateTime, duration } from "../lib/format";
import { asked, booked, canCancel, requestBadge } from "../lib/queue";
import { chipNote, currentStep, isFinished, timeline, type TimelineStep } from "../lib/requestDetail";
import { Link } from "../lib/router";
import { useApi, useLiveReload, useNow } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";

type TimedStep = TimelineStep & {
  /** Seconds since the step before it that has a time. */
  took: number | null;
};

function timed(steps: readonly TimelineStep[]): TimedStep[] {
  return steps.map((step, i) => {
    const previous = steps.slice(0, i).reverse().find((s) => s.at)?.at;
    return { ...step, took: step.at && previous ? (Date.parse(step.at) - Date.parse(previous)) / 1000 : null };
  });
}

function timelineColumns(current: TimelineStep["key"]): EventColumn<TimedStep>[] {
  return [
    { header: "", cell: (step) => (step.at ? "●" : "○") },
    {
      header: "Step",
      cell: (step) => (
        <>
          <b>{step.label}</b>
          <div className="muted">{step.hint}</div>
        </>
      ),
    },
    {
      header: "When",
      className: "nowrap",
      title: (step) => (step.at ? dateTime(step.at) : undefined),
      cell: (step) => (
        <>
          {step.at ? dateTime(step.at) : <span className="muted">{step.key === current ? "" : "–"}</span>}
          {step.took !== null && step.took >= 0 && <div className="muted">+{duration(step.took)}</div>}
        </>
      ),
    },
  ];
}

export function RequestDetailPage({ id }: { id: number }) {
  const { live } = useClusters();
  const { me } = useSession();
  useLiveVersion(live);
  const now = useNow(1000);
  const request = useApi((s) => api.get<CiRequest>(`/api/requests/${id}/`, s), [id]);
  const r = request.data;
  const proposals = useApi((s) => api.get<Page<PreemptionProposal>>(`/api/preemptions/${qs({ request: id, page_size: 20 })}`, s), [id]);
  const podName = r && !isFinished(r.state) ? r.pod_name : "";
  const pending = useApi(
    podName && r ? (s) => api.get<Page<PendingPod>>(`/api/pending-pods/${qs({ cluster: r.cluster, namespace: r.namespace, name: podName })}`, s) : null,
    [podName, r?.cluster, r?.namespace],
  );
  const audit = useApi((s) => api.get<Page<AuditEvent>>(`/api/audit-events/${qs({ object_type: "request", object_id: id, page_size: 50 })}`, s), [id]);
  const tick = (live?.ticks.requests ?? 0) + (live?.ticks.proposal ?? 0) + (live?.ticks.pending ?? 0) + (live?.ticks.snapshot ?? 0);
  const reloadAll = () => {
    request.reload();
    proposals.reload();
    pending.reload();
    audit.reload();
  };
  const reloadRef = useRef(reloadAll);
  reloadRef.current = reloadAll;
  const reload = useCallback(() => reloadRef.current(), []);
  useLiveReload(reload, tick);

  const [cancelError, setCancelError] = useState<string | null>(null);
  const cancel = async () => {
    if (!r || !window.confirm(`Cancel request #${r.id} (${r.namespace})?`)) return;
    setCancelError(null);
    try {
      await api.del(`/api/requests/${r.id}/`);
      request.reload();
    } catch (e) {
      setCancelError(errorText(e));
    }
  };

  if (!r) {
    return (
      <>
        <div className="page-head">
          <h1>Request #{id}</h1>
          <span className="sub">
            <Link to="/requests">all requests</Link>
          </span>
        </div>
        <ErrorNote error={request.error} onRetry={request.reload} />
        {!request.error && <Loading />}
      </>
    );
  }

  const steps = timeline(r);
  const current = currentStep(steps);
  const note = chipNote(r);
  const schedulerReason = pending.data?.results[0]?.reason ?? "";
  return (
    <>
      <div className="page-head">
        <h1>Request #{r.id}</h1>
        <span className="sub">
          <Link to="/requests">all requests</Link>
        </span>
      </div>
      <ErrorNote error={request.error} onRetry={request.reload} />
      <div className="panel" data-testid="request-detail">
        <div className="panel-body">
          <div className="hstack gap-12 flex-wrap">
            <Badge kind={requestBadge(r.state)}>
              <span data-testid="detail-state">{r.state}</span>
            </Badge>
            {r.state === "pending" && r.position !== null && (
              <span data-testid="detail-position">
                position <b>{r.position}</b> in queue {r.queue}
              </span>
            )}
            <span className="muted">
              {asked(r)} of {r.chip_type} in {r.namespace} · queue {r.queue} · priority {r.priority || "default"} ({r.priority_value}) · by {r.submitted_by || "–"}
            </span>
            <span className="grow" />
            {canCancel(me.role, me.username, r) && (
              <button className="btn small danger" onClick={() => void cancel()} data-testid="detail-cancel">
                Cancel
              </button>
            )}
          </div>
          {cancelError && (
            <div className="field-error" role="alert">
              {cancelError}
            </div>
          )}
          {r.on_unhealthy_chip && (
            <p data-testid="detail-unhealthy-chip" className="field-error" role="alert">
              It runs on a chip its device plugin reports unhealthy (the plugin hands out a sick chip,
              and Volcano checks no health). Cancel it and submit it again to move it: the portal
              books no unhealthy chip.
            </p>
          )}
          {r.reason && (
            <p data-testid="detail-reason" className="pre-wrap">
              <b>{r.state === "running" || isFinished(r.state) ? "Reason: " : "Why it waits: "}</b>
              {r.reason}
            </p>
          )}
          {schedulerReason && (
            <p data-testid="detail-scheduler-reason">
              <b>The scheduler says: </b>
              <span className="mono">{schedulerReason}</span>
            </p>
          )}
        </div>
      </div>

      <div className="grid cols-2">
        <div className="panel">
          <div className="panel-head">
            <h2>Timeline</h2>
          </div>
          <div className="panel-body">
            <EventTable
              rows={timed(steps)}
              rowKey={(step) => step.key}
              columns={timelineColumns(current)}
              head={false}
              testId="detail-timeline"
              rowTestId={(step) => `step-${step.key}`}
              rowData={(step) => ({ done: step.at ? "yes" : "no" })}
              rowClass={(step) => (step.key === current ? "selected" : "")}
            />
            {!isFinished(r.state) && (
              <p className="muted">
                In this state for {ago(r.updated_at, now).replace(" ago", "")}
                {r.expires_at ? ` · expires ${dateTime(r.expires_at)}` : ""}
              </p>
            )}
          </div>
        </div>
        <div className="panel">
          <div className="panel-head">
            <h2>Placement</h2>
          </div>
          <div className="panel-body">
            <table className="data">
              <tbody>
                <tr>
                  <th>Node</th>
                  <td data-testid="detail-node">{r.node || <span className="muted">–</span>}</td>
                </tr>
                <tr>
                  <th>Chip</th>
                  <td data-testid="detail-chip">
                    {r.chip_uuid ? <CopyText value={r.chip_uuid} /> : <span className="muted">{note}</span>}
                  </td>
                </tr>
                <tr>
                  <th>Booked</th>
                  <td>{booked(r)}</td>
                </tr>
                <tr>
                  <th>Pod</th>
                  <td className="mono">{r.pod_name ? `${r.namespace}/${r.pod_name}` : <span className="muted">not created yet</span>}</td>
                </tr>
                <tr>
                  <th>Attempts</th>
                  <td data-testid="detail-attempts">{r.attempts ?? 0}</td>
                </tr>
                <tr>
                  <th>Time limit</th>
                  <td>{r.time_limit_seconds ? duration(r.time_limit_seconds) : <span className="muted">none</span>}</td>
                </tr>
                <tr>
                  <th>Image</th>
                  <td className="mono">
                    {r.workload && "image" in r.workload ? [r.workload.image, ...r.workload.command, ...r.workload.args].join(" ") : r.pod_template ? "pod template" : "–"}
                  </td>
                </tr>
              </tbody>
            </table>
          </div>
        </div>
      </div>

      <LogPanel request={r} />

      {r.pod_failures && r.pod_failures.length > 0 && (
        <div className="panel" data-testid="detail-pod-failures">
          <div className="panel-head">
            <h2>Pods that failed before they ran</h2>
          </div>
          <div className="panel-body">
            <ul className="plain-list">
              {r.pod_failures.map((f) => (
                <li key={f.pod}>
                  <span className="mono">{f.pod}</span> (attempt {f.attempt}){" "}
                  <span className="muted">
                    {f.node || "no node"}
                    {f.chip_uuid ? ` · chip ${f.chip_uuid}` : ""} · {ago(f.at, now)} · {f.reason}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        </div>
      )}

      {proposals.data && proposals.data.results.length > 0 && (
        <div className="panel" data-testid="detail-proposals">
          <div className="panel-head">
            <h2>Preemption proposals</h2>
          </div>
          <div className="panel-body">
            <ul className="plain-list">
              {proposals.data.results.map((p) => (
                <li key={p.id}>
                  <Link to={`/preemptions?request=${r.id}`}>proposal #{p.id}</Link> <Badge kind={requestBadge(p.state)}>{p.state}</Badge>{" "}
                  <span className="muted">
                    {p.node} · {p.victims.length} victim{p.victims.length === 1 ? "" : "s"} · {ago(p.created_at, now)}
                    {p.reason ? ` · ${p.reason}` : ""}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        </div>
      )}

      <div className="panel">
        <div className="panel-head">
          <h2>History</h2>
        </div>
        <div className="panel-body">
          {audit.data && audit.data.results.length === 0 ? (
            <div className="muted">No recorded change.</div>
          ) : (
            <ul className="plain-list" data-testid="detail-history">
              {audit.data?.results.map((e) => (
                <li key={e.id}>
                  <span className="mono">{e.action}</span> by {e.actor_name} <span className="muted">{dateTime(e.created_at)}</span>
                  {e.reason ? ` · ${e.reason}` : ""}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </>
  );
}
