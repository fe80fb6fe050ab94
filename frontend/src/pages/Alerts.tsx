// Alerts: the portal's alerts (`/api/alerts/`), from Alertmanager or, without
// one, evaluated by the portal. The Overview's panel (AlertsPanel) shows the
// counts and the first few; the page lists them all, and admins silence one
// for a while with a comment (`POST /api/alerts/silences/`).

import { useState } from "react";
import { api, ApiError } from "../api/client";
import type { AlertList, PortalAlert } from "../api/types";
import { FilterBar, SelectFilter } from "../components/FilterBar";
import { Badge, Banner, ErrorNote, Field, Loading, Modal } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { firingBySeverity, labelOf, objectLabels, SEVERITIES, SEVERITY_LABEL, severityBadge, SILENCE_DURATIONS, sourceNote, STATE_LABEL } from "../lib/alerts";
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
  const t = useT();
  const alerts = useAlerts();
  const list = alerts.data;
  const firing = list?.alerts.filter((a) => a.state === "firing") ?? [];
  const counts = firingBySeverity(list?.alerts ?? []);
  return (
    <div className="panel" data-testid="alerts-panel">
      <div className="panel-head">
        <h2>{t("alerts.title")}</h2>
        <Link to="/alerts">{t("alerts.all")}</Link>
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
                  <span data-testid={`alerts-count-${s}`}>{counts[s]}</span> {labelOf(SEVERITY_LABEL, s)}
                </Badge>
              ))}
            </div>
            {firing.length === 0 ? (
              !list.error && <div className="muted mt-8">{t("alerts.noneFiring")}</div>
            ) : (
              <ul className="plain-list mt-8">
                {firing.slice(0, PANEL_TOP).map((a) => (
                  <li key={alertKey(a)} data-testid="alerts-panel-item">
                    <Badge kind={severityBadge(a.severity)}>{labelOf(SEVERITY_LABEL, a.severity)}</Badge> <Link to={a.portal_path}>{a.summary}</Link>
                  </li>
                ))}
                {firing.length > PANEL_TOP && <li className="muted">{t("alerts.more", { count: firing.length - PANEL_TOP })}</li>}
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
  const t = useT();
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
        <h1>{t("alerts.title")}</h1>
        <span className="sub">
          {list ? t(list.source === "portal" ? "alerts.countFromPortal" : "alerts.countFromAlertmanager", { count: list.alerts.length }) : ""}
        </span>
      </div>
      <div className="panel">
        <FilterBar busy={alerts.loading}>
          <SelectFilter
            label={t("alerts.stateFilter")}
            value={state}
            onChange={setState}
            options={STATES.map((s) => ({ value: s, label: labelOf(STATE_LABEL, s) }))}
            all={t("alerts.allStates")}
            testId="alert-state"
          />
          <button className="btn small" onClick={alerts.reload}>
            {t("alerts.refresh")}
          </button>
        </FilterBar>
        <ErrorNote error={alerts.error} onRetry={alerts.reload} />
        {list && <SourceLine list={list} />}
        {!list ? (
          alerts.loading && <Loading />
        ) : shown.length === 0 ? (
          !list.error && <div className="empty">{state ? t("alerts.noneInState") : t("alerts.noneFiring")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="alerts-table">
              <thead>
                <tr>
                  <th>{t("alerts.col.severity")}</th>
                  <th>{t("alerts.col.alert")}</th>
                  <th>{t("alerts.col.state")}</th>
                  <th>{t("alerts.col.since")}</th>
                  <th>{t("alerts.col.links")}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {shown.map((a) => (
                  <tr key={alertKey(a)} data-testid={`alert-${a.name}`}>
                    <td>
                      <Badge kind={severityBadge(a.severity)}>{labelOf(SEVERITY_LABEL, a.severity)}</Badge>
                    </td>
                    <td>
                      <div className="alert-name">{a.name}</div>
                      <div>{a.summary}</div>
                      <div className="muted tiny-text mono">{objectLabels(a)}</div>
                    </td>
                    <td>
                      <Badge kind={a.state === "firing" ? severityBadge(a.severity) : ""}>{labelOf(STATE_LABEL, a.state)}</Badge>
                      {a.silenced_by.map((s) => (
                        <div key={s.id} className="muted" data-testid="silenced-by">
                          {t("alerts.silencedBy", { who: s.created_by || "?", until: dateTime(s.ends_at), comment: s.comment })}
                        </div>
                      ))}
                    </td>
                    <td className="nowrap" title={a.starts_at ? dateTime(a.starts_at) : t("alerts.evaluatedNow")}>
                      {a.starts_at ? ago(a.starts_at, now) : t("alerts.now")}
                    </td>
                    <td className="nowrap">
                      <Link to={a.portal_path}>{t("alerts.open")}</Link>
                      {" · "}
                      {a.runbook_url ? (
                        <a href={a.runbook_url} target="_blank" rel="noreferrer">
                          {t("alerts.runbook")}
                        </a>
                      ) : (
                        <span className="mono tiny-text" title={t("alerts.runbookTitle")}>
                          {a.runbook}
                        </span>
                      )}
                    </td>
                    <td className="nowrap">
                      {canSilence && a.state !== "silenced" && (
                        <button className="btn small" onClick={() => setSilencing(a)} data-testid={`silence-${a.name}`}>
                          {t("alerts.silenceFor")}
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
  const t = useT();
  const [duration, setDuration] = useState("2h");
  const [comment, setComment] = useState("");
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!comment.trim()) {
      setErrors({ comment: [t("alerts.sayWhy")] });
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
      title={t("alerts.silenceTitle", { name: alert.name })}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("alerts.close")}
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="silence-submit">
            {t("alerts.silence")}
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
      <Field label={t("alerts.for")} errors={errors.duration ?? []}>
        <select className="input" value={duration} onChange={(e) => setDuration(e.target.value)} aria-label={t("alerts.duration")} data-testid="silence-duration">
          {SILENCE_DURATIONS.map((d) => (
            <option key={d.value} value={d.value}>
              {t(d.label, { count: d.count })}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("alerts.comment")} errors={errors.comment ?? []} hint={t("alerts.commentHint")}>
        <textarea rows={3} value={comment} onChange={(e) => setComment(e.target.value)} aria-label={t("alerts.commentLabel")} data-testid="silence-comment" className="input full-width" />
      </Field>
    </Modal>
  );
}
