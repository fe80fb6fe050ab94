// Restart state of the components that read the device config only at start:
// after a publish they run the old config until their pods are replaced.

import { useState } from "react";
import { api } from "../api/client";
import type { ComponentRestart, ConfigInEffect, RestartStates } from "../api/types";
import { Badge, Banner, ErrorNote, Modal } from "../components/ui";
import { ago } from "../lib/format";
import { useApi, useNow, useThrottledEffect } from "../lib/useApi";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";

const STATE: Record<string, { kind: string; label: string }> = {
  restart_pending: { kind: "warn", label: "restart pending" },
  rolling: { kind: "info", label: "rolling" },
  in_effect: { kind: "ok", label: "in effect" },
  missing: { kind: "fail", label: "missing" },
  unknown: { kind: "", label: "unknown" },
};

export function RestartsPanel({ clusterId, refreshTick = 0 }: { clusterId: number; refreshTick?: number }) {
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
        <h2>Restarts</h2>
        <span className="right hstack gap-8">
          {restarts.data?.config_version != null
            ? `config v${restarts.data.config_version} changed ${ago(restarts.data.config_changed_at, now)}`
            : "components that read the device config at start"}
          {can("operator") && pending.length > 1 && (
            <button className="btn small primary" onClick={() => setConfirm(pending)} data-testid="restart-all">
              Restart all {pending.length} pending
            </button>
          )}
        </span>
      </div>
      <ErrorNote error={restarts.error} onRetry={restarts.reload} />
      {restarts.data?.in_effect && <InEffectNote effect={restarts.data.in_effect} />}
      <table className="data">
        <thead>
          <tr>
            <th>Component</th>
            <th>State</th>
            <th title="the device-config version its oldest pod read when it started">Loaded</th>
            <th>Pods</th>
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
                    {s.label}
                  </Badge>
                  <div className="muted tiny-text maxw-260">
                    {c.message}
                  </div>
                </td>
                <td className="nowrap mono" data-testid={`loaded-${c.component}`}>
                  {c.loaded_version != null ? `v${c.loaded_version}` : "–"}
                </td>
                <td className="nowrap">
                  {c.pods.filter((p) => p.ready).length}/{c.pods.length} ready
                  {stale ? <span className="warn-text"> · {stale} on old config</span> : null}
                </td>
                <td>
                  {can("operator") && c.restart_state !== "missing" && (
                    <button className={`btn small${c.restart_state === "restart_pending" ? " primary" : ""}`} onClick={() => setConfirm([c])}>
                      Restart
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
          title={confirm.length === 1 ? `Restart ${confirm[0].component}?` : `Restart ${confirm.length} components?`}
          onClose={() => setConfirm(null)}
          footer={
            <>
              <button className="btn" onClick={() => setConfirm(null)}>
                Cancel
              </button>
              <button className="btn danger solid" disabled={busy} onClick={() => void restart(confirm)} data-testid="restart-confirm">
                {busy ? "Restarting…" : confirm.length === 1 ? "Restart every pod" : `Restart every pod of all ${confirm.length}`}
              </button>
            </>
          }
        >
          {confirm.length === 1 ? (
            <p>
              Every pod of the {confirm[0].kind} <b>{confirm[0].namespace}/{confirm[0].component}</b> is replaced (a rolling restart), so that it reads
              the device config again. {confirm[0].message}
            </p>
          ) : (
            <>
              <p>Every pod of each is replaced (a rolling restart, one component after the other), so that they read the device config again:</p>
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
  if (effect.version == null) return null;
  return (
    <div className="panel-body pb-0" data-testid="config-in-effect">
      {effect.pending_restart ? (
        <Banner kind="warn" testId="config-in-effect-pending">
          Requests are placed by <b>v{effect.version}</b>, which {effect.loaded_by} loaded when it started; the published <b>v{effect.published}</b>{" "}
          takes effect when it restarts. Fit answers and room follow v{effect.version} until then.
        </Banner>
      ) : (
        <span className="muted">
          Requests are placed by v{effect.version} ({effect.why}).
        </span>
      )}
    </div>
  );
}
