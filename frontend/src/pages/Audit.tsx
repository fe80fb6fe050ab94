// The audit log: every change, who made it and why, with before and after.

import { Fragment, useEffect, useState } from "react";
import { api, qs } from "../api/client";
import type { AuditEvent, Page } from "../api/types";
import { DiffView, ErrorNote, Loading, Pager } from "../components/ui";
import { dateTime } from "../lib/format";
import { useQueryParam } from "../lib/router";
import { useApi, useDebounced } from "../lib/useApi";
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

export function AuditPage() {
  const { cluster, clusters } = useClusters();
  const [scope, setScope] = useQueryParam("scope", "cluster");
  const [action, setAction] = useQueryParam("action");
  const [actor, setActor] = useQueryParam("actor");
  const [objectType, setObjectType] = useQueryParam("object_type");
  const [since, setSince] = useQueryParam("since");
  const [pageParam, setPage] = useQueryParam("page", "1");
  const [actionInput, setActionInput] = useState(action);
  const [actorInput, setActorInput] = useState(actor);
  const actionQ = useDebounced(actionInput, 300);
  const actorQ = useDebounced(actorInput, 300);
  useEffect(() => {
    if (actionQ !== action) {
      setAction(actionQ);
      setPage("1");
    }
  }, [actionQ]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (actorQ !== actor) {
      setActor(actorQ);
      setPage("1");
    }
  }, [actorQ]); // eslint-disable-line react-hooks/exhaustive-deps
  const page = Math.max(1, Number(pageParam) || 1);
  const [open, setOpen] = useState<number | null>(null);

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

  return (
    <>
      <div className="page-head">
        <h1>Audit log</h1>
        <span className="sub">{events.data ? `${events.data.count.toLocaleString()} events` : ""}</span>
      </div>
      <div className="panel">
        <div className="toolbar">
          <select className="select" value={scope} onChange={(e) => setScope(e.target.value)} aria-label="scope">
            <option value="cluster">This cluster</option>
            <option value="all">All clusters and system</option>
          </select>
          <input className="input" placeholder="Action (prefix: deviceconfig., template.)" value={actionInput} onChange={(e) => setActionInput(e.target.value)} style={{ width: 250 }} aria-label="action" />
          <input className="input" placeholder="Actor" value={actorInput} onChange={(e) => setActorInput(e.target.value)} style={{ width: 130 }} aria-label="actor" />
          <select
            className="select"
            value={objectType}
            onChange={(e) => {
              setObjectType(e.target.value);
              setPage("1");
            }}
            aria-label="object type"
          >
            <option value="">All objects</option>
            {["cluster", "chiptype", "template", "deviceconfigversion", "apitoken", "workload"].map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
          <label className="muted" style={{ display: "inline-flex", gap: 6, alignItems: "center" }}>
            since
            <input
              className="input"
              type="datetime-local"
              value={since}
              onChange={(e) => {
                setSince(e.target.value);
                setPage("1");
              }}
            />
          </label>
          <span className="grow" />
          {events.loading && <span className="spinner" />}
        </div>
        <ErrorNote error={events.error} onRetry={events.reload} />
        {!events.data && events.loading ? (
          <Loading />
        ) : events.data?.results.length === 0 ? (
          <div className="empty">No event matches.</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="audit-table">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>Action</th>
                  <th>Object</th>
                  <th>Cluster</th>
                  <th>Reason</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {events.data?.results.map((e) => (
                  <Fragment key={e.id}>
                    <tr className={open === e.id ? "selected" : ""}>
                      <td className="nowrap">{dateTime(e.created_at)}</td>
                      <td>{e.actor_name || "–"}</td>
                      <td className="mono">{e.action}</td>
                      <td>{e.object_repr || `${e.object_type} ${e.object_id}`}</td>
                      <td>{clusterName(e.cluster)}</td>
                      <td style={{ maxWidth: 360 }}>{e.reason || <span className="muted">–</span>}</td>
                      <td>
                        {(e.before !== null || e.after !== null) && (
                          <button className="btn small" onClick={() => setOpen(open === e.id ? null : e.id)}>
                            {open === e.id ? "Hide" : "Changes"}
                          </button>
                        )}
                      </td>
                    </tr>
                    {open === e.id && (
                      <tr>
                        <td colSpan={7} style={{ background: "#fbfcfd" }}>
                          <DiffView diff={jsonDiff(e.before, e.after)} empty="No recorded change." />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {events.data && events.data.count > 0 && <Pager page={page} count={events.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />}
      </div>
    </>
  );
}
