// Per node, the node config version its device plugin read at its start, and
// "restart pending" when a newer version changes its entry, with "Restart
// plugin on this node" (POST .../node-config/restart/ {node, reason}: that
// node's plugin pod is deleted, its DaemonSet makes a new one that reads the
// new entry). A 409 plugin_restart_blocked (a device-config restart awaits
// confirmation) is shown with the API's message.

import { useState, type ReactNode } from "react";
import { api } from "../../api/client";
import type { NodeConfigNode, NodePluginRestartResult } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Badge } from "../../components/ui";
import { useI18n } from "../../i18n/I18nProvider";
import { Link } from "../../lib/router";
import { useSession } from "../../state/session";

export function InEffectCell({ clusterId, entry, onRestarted }: { clusterId: number; entry: NodeConfigNode | undefined; onRestarted: () => void }) {
  const { t, intl } = useI18n();
  const { can } = useSession();
  const [asking, setAsking] = useState(false);
  const [restarted, setRestarted] = useState<string | null>(null);
  if (!entry) return <span className="muted">–</span>;
  const e = entry.in_effect;
  return (
    <div data-testid={`in-effect-${entry.name}`}>
      {e.version !== null ? <span>v{e.version}</span> : <span className="muted">{t("nodeConfig.unknown")}</span>}
      {e.restart_pending && (
        <>
          {" "}
          <Badge kind="warn">{t("nodeConfig.inEffect.restartPending")}</Badge>
        </>
      )}
      {e.why && <div className="muted small-text">{e.why}</div>}
      {restarted && !e.restart_pending && <div className="muted small-text">{t("nodeConfig.inEffect.replaced", { pod: restarted })}</div>}
      {restarted && e.restart_pending && <div className="small-text">{t("nodeConfig.inEffect.restarting", { pod: restarted })}</div>}
      {can("operator") && e.restart_pending && (
        <button className="btn small mt-6" onClick={() => setAsking(true)} data-testid={`restart-plugin-${entry.name}`}>
          {t("nodeConfig.inEffect.restartButton")}
        </button>
      )}
      {asking && (
        <ReasonModal
          title={t("nodeConfig.inEffect.title", { node: entry.name })}
          verb={t("nodeConfig.inEffect.verb")}
          testId="plugin-restart"
          onClose={() => setAsking(false)}
          submit={async (reason) => {
            const answer = await api.post<NodePluginRestartResult>(`/api/clusters/${clusterId}/node-config/restart/`, { node: entry.name, reason });
            setRestarted(answer.pod);
            setAsking(false);
            onRestarted();
          }}
        >
          <p className="small-text">
            {intl.formatMessage(
              { id: e.plugin_pod ? "nodeConfig.inEffect.explainPod" : "nodeConfig.inEffect.explain" },
              {
                node: entry.name,
                pod: e.plugin_pod,
                link: (chunks: ReactNode[]) => <Link to={`/chips?node=${encodeURIComponent(entry.name)}`}>{chunks}</Link>,
              },
            )}
          </p>
        </ReasonModal>
      )}
    </div>
  );
}
