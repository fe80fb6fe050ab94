// A request's detail (`/requests/<id>`): its state and reason, its position
// while it waits, the timeline (submitted, reserved, pod created, bound and
// running, finished), node and chip, attempts, its preemption proposals, the
// scheduler's reason for its pending pod (mirrored by sync from the pod's
// FailedScheduling events), the job's log and result (components/LogPanel)
// and its audit trail. Refreshed on the live socket's request / proposal /
// pending deltas and every 5 s.

import { useCallback, useRef, useState, type ReactNode } from "react";
import { api, qs } from "../api/client";
import type { AuditEvent, CiRequest, Page, PendingPod, PreemptionProposal } from "../api/types";
import { EventTable, type EventColumn } from "../components/EventTable";
import { LogPanel } from "../components/LogPanel";
import { Badge, CopyText, ErrorNote, Loading } from "../components/ui";
import { useI18n } from "../i18n/I18nProvider";
import type { Translate } from "../i18n/intl";
import { errorText } from "../lib/errors";
import { ageSeconds, ago, dateTime, duration } from "../lib/format";
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

const bold = (chunks: ReactNode[]) => <b>{chunks}</b>;
const mono = (chunks: ReactNode[]) => <span className="mono">{chunks}</span>;

function timelineColumns(current: TimelineStep["key"], t: Translate): EventColumn<TimedStep>[] {
  return [
    { header: "", cell: (step) => (step.at ? "●" : "○") },
    {
      header: t("requests.detail.step"),
      cell: (step) => (
        <>
          <b>{step.label}</b>
          <div className="muted">{step.hint}</div>
        </>
      ),
    },
    {
      header: t("requests.detail.when"),
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
  const { t, intl } = useI18n();
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
    if (!r || !window.confirm(t("requests.cancelConfirm", { id: r.id, namespace: r.namespace }))) return;
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
          <h1>{t("requests.detail.title", { id })}</h1>
          <span className="sub">
            <Link to="/requests">{t("requests.detail.all")}</Link>
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
        <h1>{t("requests.detail.title", { id: r.id })}</h1>
        <span className="sub">
          <Link to="/requests">{t("requests.detail.all")}</Link>
        </span>
      </div>
      <ErrorNote error={request.error} onRetry={request.reload} />
      <div className="panel" data-testid="request-detail">
        <div className="panel-body">
          <div className="hstack gap-12 flex-wrap">
            <Badge kind={requestBadge(r.state)}>
              <span data-testid="detail-state">{t(`requests.state.${r.state}`)}</span>
            </Badge>
            {r.state === "pending" && r.position !== null && (
              <span data-testid="detail-position">
                {intl.formatMessage({ id: "requests.detail.position" }, { position: r.position, queue: r.queue, b: bold })}
              </span>
            )}
            <span className="muted">
              {t("requests.detail.summary", {
                asked: asked(r),
                chipType: r.chip_type,
                namespace: r.namespace,
                queue: r.queue,
                priority: r.priority || t("requests.detail.priorityDefault"),
                value: r.priority_value,
                by: r.submitted_by || "–",
              })}
            </span>
            <span className="grow" />
            {canCancel(me.role, me.username, r) && (
              <button className="btn small danger" onClick={() => void cancel()} data-testid="detail-cancel">
                {t("requests.cancel")}
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
              {t("requests.detail.unhealthyChip")}
            </p>
          )}
          {r.reason && (
            <p data-testid="detail-reason" className="pre-wrap">
              <b>{r.state === "running" || isFinished(r.state) ? t("requests.detail.reason") : t("requests.detail.whyWaits")}</b>
              {r.reason}
            </p>
          )}
          {schedulerReason && (
            <p data-testid="detail-scheduler-reason">
              <b>{t("requests.detail.schedulerSays")}</b>
              <span className="mono">{schedulerReason}</span>
            </p>
          )}
        </div>
      </div>

      <div className="grid cols-2">
        <div className="panel">
          <div className="panel-head">
            <h2>{t("requests.detail.timeline")}</h2>
          </div>
          <div className="panel-body">
            <EventTable
              rows={timed(steps)}
              rowKey={(step) => step.key}
              columns={timelineColumns(current, t)}
              head={false}
              testId="detail-timeline"
              rowTestId={(step) => `step-${step.key}`}
              rowData={(step) => ({ done: step.at ? "yes" : "no" })}
              rowClass={(step) => (step.key === current ? "selected" : "")}
            />
            {!isFinished(r.state) && (
              <p className="muted">
                {t("requests.detail.inStateFor", { duration: duration(ageSeconds(r.updated_at, now)) })}
                {r.expires_at ? t("requests.detail.expires", { time: dateTime(r.expires_at) }) : ""}
              </p>
            )}
          </div>
        </div>
        <div className="panel">
          <div className="panel-head">
            <h2>{t("requests.detail.placement")}</h2>
          </div>
          <div className="panel-body">
            <table className="data">
              <tbody>
                <tr>
                  <th>{t("requests.detail.node")}</th>
                  <td data-testid="detail-node">{r.node || <span className="muted">–</span>}</td>
                </tr>
                <tr>
                  <th>{t("requests.detail.chip")}</th>
                  <td data-testid="detail-chip">
                    {r.chip_uuid ? <CopyText value={r.chip_uuid} /> : <span className="muted">{note}</span>}
                  </td>
                </tr>
                <tr>
                  <th>{t("requests.col.booked")}</th>
                  <td>{booked(r)}</td>
                </tr>
                <tr>
                  <th>{t("requests.col.pod")}</th>
                  <td className="mono">{r.pod_name ? `${r.namespace}/${r.pod_name}` : <span className="muted">{t("requests.detail.notCreated")}</span>}</td>
                </tr>
                <tr>
                  <th>{t("requests.detail.attempts")}</th>
                  <td data-testid="detail-attempts">{r.attempts ?? 0}</td>
                </tr>
                <tr>
                  <th>{t("requests.detail.timeLimit")}</th>
                  <td>{r.time_limit_seconds ? duration(r.time_limit_seconds) : <span className="muted">{t("requests.detail.noTimeLimit")}</span>}</td>
                </tr>
                <tr>
                  <th>{t("requests.detail.image")}</th>
                  <td className="mono">
                    {r.workload && "image" in r.workload ? [r.workload.image, ...r.workload.command, ...r.workload.args].join(" ") : r.pod_template ? t("requests.detail.podTemplate") : "–"}
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
            <h2>{t("requests.detail.podFailures")}</h2>
          </div>
          <div className="panel-body">
            <ul className="plain-list">
              {r.pod_failures.map((f) => (
                <li key={f.pod}>
                  <span className="mono">{f.pod}</span> {t("requests.detail.attempt", { attempt: f.attempt })}{" "}
                  <span className="muted">
                    {f.node || t("requests.detail.noNode")}
                    {f.chip_uuid ? t("requests.detail.failureChip", { chip: f.chip_uuid }) : ""} · {ago(f.at, now)} · {f.reason}
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
            <h2>{t("requests.detail.proposals")}</h2>
          </div>
          <div className="panel-body">
            <ul className="plain-list">
              {proposals.data.results.map((p) => (
                <li key={p.id}>
                  <Link to={`/preemptions?request=${r.id}`}>{t("requests.detail.proposal", { id: p.id })}</Link>{" "}
                  <Badge kind={requestBadge(p.state)}>{t(`requests.proposalState.${p.state}`)}</Badge>{" "}
                  <span className="muted">
                    {p.node} · {t("requests.detail.victims", { count: p.victims.length })} · {ago(p.created_at, now)}
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
          <h2>{t("requests.detail.history")}</h2>
        </div>
        <div className="panel-body">
          {audit.data && audit.data.results.length === 0 ? (
            <div className="muted">{t("requests.detail.noHistory")}</div>
          ) : (
            <ul className="plain-list" data-testid="detail-history">
              {audit.data?.results.map((e) => (
                <li key={e.id}>
                  {intl.formatMessage({ id: "requests.detail.historyEntry" }, { action: e.action, actor: e.actor_name, mono })}{" "}
                  <span className="muted">{dateTime(e.created_at)}</span>
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
