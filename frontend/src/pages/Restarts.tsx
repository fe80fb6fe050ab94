// Restart state of the components that read the device config only at start:
// after a publish they run the old config until their pods are replaced.

import { useState, type ReactNode } from "react";
import { api } from "../api/client";
import type { ComponentRestart, ConfigInEffect, RestartStates } from "../api/types";
import { Badge, Banner, ErrorNote, Modal } from "../components/ui";
import { useI18n } from "../i18n/I18nProvider";
import { ago } from "../lib/format";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";

// label: the message id of the state's name.
const STATE: Record<string, { kind: string; label: string }> = {
  restart_pending: { kind: "warn", label: "restarts.state.restartPending" },
  rolling: { kind: "info", label: "restarts.state.rolling" },
  in_effect: { kind: "ok", label: "restarts.state.inEffect" },
  missing: { kind: "fail", label: "restarts.state.missing" },
  unknown: { kind: "", label: "restarts.state.unknown" },
};

const bold = (chunks: ReactNode[]) => <b>{chunks}</b>;

export function RestartsPanel({ clusterId, refreshTick = 0 }: { clusterId: number; refreshTick?: number }) {
  const { t, intl } = useI18n();
  const { live } = useClusters();
  const { can } = useSession();
  const now = useNow(5000);
  const restarts = useApi((signal) => api.get<RestartStates>(`/api/clusters/${clusterId}/restarts/`, signal), [clusterId, refreshTick]);
  useThrottledEffect(restarts.reload, live?.ticks.object ?? 0, 2000);
  const rolling = restarts.data?.components.some((c) => c.restart_state === "rolling");
  useThrottledEffect(restarts.reload, rolling ? Math.floor(now / 5000) : 0, 4000);
  // The components a confirmation is about: one row's, or every one pending.
  const [confirm, setConfirm] = useState<ComponentRestart[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const pending = restarts.data?.components.filter((c) => c.restart_state === "restart_pending") ?? [];

  // One request per component, in turn (each is its own audited restart); the
  // first failure stops there and stays in the dialog, the others done are kept.
  const restart = async (components: ComponentRestart[]) => {
    setBusy(true);
    setError(null);
    try {
      for (const c of components) {
        await api.post(`/api/clusters/${clusterId}/restarts/${encodeURIComponent(c.component)}/`, { confirm: true });
      }
      setConfirm(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      restarts.reload();
    }
  };

  return (
    <div className="panel" data-testid="restarts">
      <div className="panel-head">
        <h2>{t("restarts.title")}</h2>
        <span className="right hstack gap-8">
          {restarts.data?.config_version != null
            ? t("restarts.configChanged", { version: restarts.data.config_version, ago: ago(restarts.data.config_changed_at, now) })
            : t("restarts.subtitle")}
          {can("operator") && pending.length > 1 && (
            <button className="btn small primary" onClick={() => setConfirm(pending)} data-testid="restart-all">
              {t("restarts.restartAll", { count: pending.length })}
            </button>
          )}
        </span>
      </div>
      <ErrorNote error={restarts.error} onRetry={restarts.reload} />
      {restarts.data?.in_effect && <InEffectNote effect={restarts.data.in_effect} />}
      <table className="data">
        <thead>
          <tr>
            <th>{t("restarts.col.component")}</th>
            <th>{t("restarts.col.state")}</th>
            <th title={t("restarts.col.loadedTitle")}>{t("restarts.col.loaded")}</th>
            <th>{t("restarts.col.pods")}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {restarts.data?.components.map((c) => {
            const s = STATE[c.restart_state] ?? STATE.unknown;
            const stale = c.pods.filter((p) => p.stale).length;
            return (
              <tr key={c.component}>
                <td>
                  <div>{c.component}</div>
                  <div className="muted tiny-text">
                    {c.kind} · {c.namespace}
                  </div>
                </td>
                <td>
                  <Badge kind={s.kind} title={c.message}>
                    {t(s.label)}
                  </Badge>
                  <div className="muted tiny-text maxw-260">
                    {c.message}
                  </div>
                </td>
                <td className="nowrap mono" data-testid={`loaded-${c.component}`}>
                  {c.loaded_version != null ? `v${c.loaded_version}` : "–"}
                </td>
                <td className="nowrap">
                  {t("restarts.ready", { ready: c.pods.filter((p) => p.ready).length, count: c.pods.length })}
                  {stale ? <span className="warn-text"> · {t("restarts.onOldConfig", { count: stale })}</span> : null}
                </td>
                <td>
                  {can("operator") && c.restart_state !== "missing" && (
                    <button className={`btn small${c.restart_state === "restart_pending" ? " primary" : ""}`} onClick={() => setConfirm([c])}>
                      {t("restarts.restart")}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {confirm && confirm.length > 0 && (
        <Modal
          title={confirm.length === 1 ? t("restarts.confirmOne", { name: confirm[0].component }) : t("restarts.confirmMany", { count: confirm.length })}
          onClose={() => setConfirm(null)}
          footer={
            <>
              <button className="btn" onClick={() => setConfirm(null)}>
                {t("restarts.cancel")}
              </button>
              <button className="btn danger solid" disabled={busy} onClick={() => void restart(confirm)} data-testid="restart-confirm">
                {busy ? t("restarts.restarting") : confirm.length === 1 ? t("restarts.everyPod") : t("restarts.everyPodOfAll", { count: confirm.length })}
              </button>
            </>
          }
        >
          {confirm.length === 1 ? (
            <p>
              {intl.formatMessage(
                { id: "restarts.explainOne" },
                { kind: confirm[0].kind, name: `${confirm[0].namespace}/${confirm[0].component}`, b: bold },
              )}{" "}
              {confirm[0].message}
            </p>
          ) : (
            <>
              <p>{t("restarts.explainMany")}</p>
              <ul className="bullets" data-testid="restart-all-list">
                {confirm.map((c) => (
                  <li key={c.component}>
                    {c.kind} <b>{c.namespace}/{c.component}</b>: {c.message}
                  </li>
                ))}
              </ul>
            </>
          )}
          {error ? <ErrorNote error={error} /> : null}
        </Modal>
      )}
    </div>
  );
}

/**
 * Which version places requests now. Until the scheduler restarts it is the
 * one it loaded, not the published one: the portal books, fits and shows room
 * by it, and says so here.
 */
export function InEffectNote({ effect }: { effect: ConfigInEffect }) {
  const { t, intl } = useI18n();
  if (effect.version == null) return null;
  return (
    <div className="panel-body pb-0" data-testid="config-in-effect">
      {effect.pending_restart ? (
        <Banner kind="warn" testId="config-in-effect-pending">
          {intl.formatMessage(
            { id: "restarts.inEffectPending" },
            { version: effect.version, loadedBy: effect.loaded_by, published: effect.published, b: bold },
          )}
        </Banner>
      ) : (
        <span className="muted">{t("restarts.inEffect", { version: effect.version, why: effect.why })}</span>
      )}
    </div>
  );
}
