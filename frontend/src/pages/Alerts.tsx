// Alerts: the portal's alerts (`/api/alerts/`), from Alertmanager or, without
// one, evaluated by the portal. The Overview's panel (AlertsPanel) shows the
// counts and the first few; the page lists them all, and admins silence one
// for a while with a comment (`POST /api/alerts/silences/`).

import { useState } from "react";
import { api, ApiError } from "../api/client";
import type { AlertList, PortalAlert } from "../api/types";
import { FilterBar, StateFilter } from "../components/FilterBar";
import { Badge, Banner, ErrorNote, Field, Loading, Modal } from "../components/ui";
import { firingBySeverity, objectLabels, SEVERITIES, severityBadge, SILENCE_DURATIONS, sourceNote } from "../lib/alerts";
import { errorText, mapErrors } from "../lib/errors";
import { ago, dateTime } from "../lib/format";
import { Link, useQueryParam } from "../lib/router";
import { useApi, useNow } from "../lib/useApi";
import { useSession } from "../state/session";

const PANEL_TOP = 5;

function useAlerts() {
  return useApi((signal) => api.get<AlertList>("/api/alerts/", signal), []);
}

function SourceLine({ list }: { list: AlertList }) {
  const note = sourceNote(list);
  return note ? (
    <Banner kind={note.kind} testId="alerts-source">
      {note.text}
    </Banner>
  ) : null;
}

/** The Overview's panel: firing counts by severity, the first few, a link to the page. */
export function AlertsPanel() {
  const alerts = useAlerts();
  const list = alerts.data;
  const firing = list?.alerts.filter((a) => a.state === "firing") ?? [];
  const counts = firingBySeverity(list?.alerts ?? []);
  return (
    <div className="panel" data-testid="alerts-panel">
      <div className="panel-head">
        <h2>Alerts</h2>
        <Link to="/alerts">All alerts</Link>
      </div>
      <div className="panel-body">
        <ErrorNote error={alerts.error} onRetry={alerts.reload} />
        {!list ? (
          alerts.loading && <Loading />
        ) : (
          <>
            <SourceLine list={list} />
            <div className="alert-counts">
              {SEVERITIES.map((s) => (
                <Badge key={s} kind={counts[s] ? severityBadge(s) : ""}>
                  <span data-testid={`alerts-count-${s}`}>{counts[s]}</span> {s}
                </Badge>
              ))}
            </div>
            {firing.length === 0 ? (
              !list.error && <div className="muted mt-8">No alert is firing.</div>
            ) : (
              <ul className="plain-list mt-8">
                {firing.slice(0, PANEL_TOP).map((a) => (
                  <li key={alertKey(a)} data-testid="alerts-panel-item">
                    <Badge kind={severityBadge(a.severity)}>{a.severity}</Badge> <Link to={a.portal_path}>{a.summary}</Link>
                  </li>
                ))}
                {firing.length > PANEL_TOP && <li className="muted">and {firing.length - PANEL_TOP} more</li>}
              </ul>
            )}
          </>
        )}
      </div>
    </div>
  );
}

function alertKey(alert: PortalAlert): string {
  return JSON.stringify(Object.entries(alert.labels).sort());
}

const STATES = ["firing", "silenced", "suppressed"];

export function AlertsPage() {
  const { can } = useSession();
  const now = useNow(10_000);
  const alerts = useAlerts();
  const [state, setState] = useQueryParam("state");
  const [silencing, setSilencing] = useState<PortalAlert | null>(null);
  const list = alerts.data;
  const shown = (list?.alerts ?? []).filter((a) => !state || a.state === state);
  const canSilence = can("admin") && !!list?.notifications_configured;
  return (
    <>
      <div className="page-head">
        <h1>Alerts</h1>
        <span className="sub">{list ? `${list.alerts.length} alerts · from ${list.source === "portal" ? "the portal" : "Alertmanager"}` : ""}</span>
      </div>
      <div className="panel">
        <FilterBar busy={alerts.loading}>
          <StateFilter value={state} states={STATES} onChange={setState} testId="alert-state" />
          <button className="btn small" onClick={alerts.reload}>
            Refresh
          </button>
        </FilterBar>
        <ErrorNote error={alerts.error} onRetry={alerts.reload} />
        {list && <SourceLine list={list} />}
        {!list ? (
          alerts.loading && <Loading />
        ) : shown.length === 0 ? (
          !list.error && <div className="empty">{state ? "No alert in that state." : "No alert is firing."}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="alerts-table">
              <thead>
                <tr>
                  <th>Severity</th>
                  <th>Alert</th>
                  <th>State</th>
                  <th>Since</th>
                  <th>Links</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {shown.map((a) => (
                  <tr key={alertKey(a)} data-testid={`alert-${a.name}`}>
                    <td>
                      <Badge kind={severityBadge(a.severity)}>{a.severity}</Badge>
                    </td>
                    <td>
                      <div className="alert-name">{a.name}</div>
                      <div>{a.summary}</div>
                      <div className="muted tiny-text mono">{objectLabels(a)}</div>
                    </td>
                    <td>
                      <Badge kind={a.state === "firing" ? severityBadge(a.severity) : ""}>{a.state}</Badge>
                      {a.silenced_by.map((s) => (
                        <div key={s.id} className="muted" data-testid="silenced-by">
                          by {s.created_by || "?"} until {dateTime(s.ends_at)}: {s.comment}
                        </div>
                      ))}
                    </td>
                    <td className="nowrap" title={a.starts_at ? dateTime(a.starts_at) : "evaluated by the portal: true now"}>
                      {a.starts_at ? ago(a.starts_at, now) : "now"}
                    </td>
                    <td className="nowrap">
                      <Link to={a.portal_path}>Open</Link>
                      {" · "}
                      {a.runbook_url ? (
                        <a href={a.runbook_url} target="_blank" rel="noreferrer">
                          Runbook
                        </a>
                      ) : (
                        <span className="mono tiny-text" title="the runbook section in the portal's documentation">
                          {a.runbook}
                        </span>
                      )}
                    </td>
                    <td className="nowrap">
                      {canSilence && a.state !== "silenced" && (
                        <button className="btn small" onClick={() => setSilencing(a)} data-testid={`silence-${a.name}`}>
                          Silence for…
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      {silencing && (
        <SilenceForm
          alert={silencing}
          onClose={() => setSilencing(null)}
          onDone={() => {
            setSilencing(null);
            alerts.reload();
          }}
        />
      )}
    </>
  );
}

/** "Silence for…": a duration and a required comment; the API's errors land on their fields. */
export function SilenceForm({ alert, onClose, onDone }: { alert: PortalAlert; onClose: () => void; onDone: () => void }) {
  const [duration, setDuration] = useState("2h");
  const [comment, setComment] = useState("");
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!comment.trim()) {
      setErrors({ comment: ["Say why: the comment is kept with the silence and in the audit log."] });
      return;
    }
    setBusy(true);
    setErrors({});
    setFormError(null);
    try {
      await api.post("/api/alerts/silences/", { labels: alert.labels, duration, comment: comment.trim() });
      onDone();
    } catch (e) {
      if (e instanceof ApiError) {
        const mapped = mapErrors(e.body, ["duration", "comment"]);
        setErrors(mapped.fields);
        setFormError(mapped.form.length ? mapped.form.join(" ") : Object.keys(mapped.fields).length ? null : errorText(e));
      } else {
        setFormError(errorText(e));
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={`Silence ${alert.name}`}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Close
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="silence-submit">
            Silence
          </button>
        </>
      }
    >
      {formError && (
        <div className="field-error" role="alert" data-testid="silence-error">
          {formError}
        </div>
      )}
      <p className="muted">{objectLabels(alert)}</p>
      <Field label="For" errors={errors.duration ?? []}>
        <select className="input" value={duration} onChange={(e) => setDuration(e.target.value)} aria-label="duration" data-testid="silence-duration">
          {SILENCE_DURATIONS.map((d) => (
            <option key={d.value} value={d.value}>
              {d.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Comment" errors={errors.comment ?? []} hint="Kept with the silence in Alertmanager and in the audit log.">
        <textarea rows={3} value={comment} onChange={(e) => setComment(e.target.value)} aria-label="comment" data-testid="silence-comment" className="input full-width" />
      </Field>
    </Modal>
  );
}
