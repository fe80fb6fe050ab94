// Per node, the node config version its device plugin read at its start, and
// "restart pending" when a newer version changes its entry, with "Restart
// plugin on this node" (POST .../node-config/restart/ {node, reason}: that
// node's plugin pod is deleted, its DaemonSet makes a new one that reads the
// new entry). A 409 plugin_restart_blocked (a device-config restart awaits
// confirmation) is shown with the API's message.

import { useState } from "react";
import { api } from "../../api/client";
import type { NodeConfigNode, NodePluginRestartResult } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Badge } from "../../components/ui";
import { Link } from "../../lib/router";
import { useSession } from "../../state/session";

export function InEffectCell({ clusterId, entry, onRestarted }: { clusterId: number; entry: NodeConfigNode | undefined; onRestarted: () => void }) {
  const { can } = useSession();
  const [asking, setAsking] = useState(false);
  const [restarted, setRestarted] = useState<string | null>(null);
  if (!entry) return <span className="muted">–</span>;
  const e = entry.in_effect;
  return (
    <div data-testid={`in-effect-${entry.name}`}>
      {e.version !== null ? <span>v{e.version}</span> : <span className="muted">unknown</span>}
      {e.restart_pending && (
        <>
          {" "}
          <Badge kind="warn">restart pending</Badge>
        </>
      )}
      {e.why && <div className="muted small-text">{e.why}</div>}
      {restarted && !e.restart_pending && <div className="muted small-text">plugin pod {restarted} replaced</div>}
      {restarted && e.restart_pending && <div className="small-text">Restarting: {restarted} deleted, waiting for its successor…</div>}
      {can("operator") && e.restart_pending && (
        <button className="btn small mt-6" onClick={() => setAsking(true)} data-testid={`restart-plugin-${entry.name}`}>
          Restart plugin on this node
        </button>
      )}
      {asking && (
        <ReasonModal
          title={`Restart the device plugin on ${entry.name}?`}
          verb="Restart"
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
            Deletes the device plugin pod on {entry.name}
            {e.plugin_pod ? ` (${e.plugin_pod})` : ""}; its DaemonSet makes a new one, which reads the node config&apos;s newest entry for this node. While it
            restarts the node registers no chips for a moment; running containers are not touched. A mode switch under running slices breaks them:{" "}
            <Link to={`/chips?node=${encodeURIComponent(entry.name)}`}>cordon and drain {entry.name}</Link> first.
          </p>
        </ReasonModal>
      )}
    </div>
  );
}
