// Node config: the device plugin's per-node config (hami-device-node-config),
// beside Templates. Is it read at all (GET .../node-config/health/: the plugin
// version per node, the checks, and the DaemonSet patch and kubectl command to
// copy when it is not), each node's mode, slot count and entry, the version
// in effect on its plugin with "restart pending" and the restart
// (nodeconfig/InEffect.tsx), drift, the editor (a draft started from the live
// entries: validate, what-if, publish with a reason: nodeconfig/Draft.tsx and
// Publish.tsx) and the history with diff and rollback (nodeconfig/History.tsx).

import { useMemo, useState, type ReactNode } from "react";
import { api, qs } from "../api/client";
import type { Node, NodeConfigHealth, NodeConfigNode, NodeConfigNodeHealth, NodeConfigPublishResult, NodeConfigState, Page } from "../api/types";
import { Badge, Banner, CopyText, DiffView, ErrorNote, Loading } from "../components/ui";
import { groupByNode, type NodeGroup } from "../lib/chips";
import { Link } from "../lib/router";
import { useApi, useLiveReload } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";
import { DraftPanel } from "./nodeconfig/Draft";
import { NodeConfigHistory } from "./nodeconfig/History";
import { InEffectCell } from "./nodeconfig/InEffect";
import { AdoptDialog } from "./nodeconfig/Publish";

const STATUS_BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "hot" };

export function NodeConfigPage() {
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const id = cluster!.id;
  const health = useApi((signal) => api.get<NodeConfigHealth>(`/api/clusters/${id}/node-config/health/`, signal), [id]);
  const nodes = useApi((signal) => api.get<Page<Node>>(`/api/nodes/${qs({ cluster: id, page_size: 1000 })}`, signal), [id]);
  const state = useApi((signal) => api.get<NodeConfigState>(`/api/clusters/${id}/node-config/`, signal), [id]);
  const [published, setPublished] = useState<NodeConfigPublishResult | null>(null);
  const [historyTick, setHistoryTick] = useState(0);
  // The health is read from what sync mirrored: a changed DaemonSet or ConfigMap is an `object` delta.
  const objectTick = (live?.ticks.object ?? 0) + (live?.ticks.snapshot ?? 0);
  useLiveReload(health.reload, objectTick, 30_000);
  // The version in effect comes from the plugin pods, listed live: while a
  // restart is pending, read it often (a restarted pod's successor clears it).
  const pending = state.data?.nodes.some((n) => n.in_effect.restart_pending) ?? false;
  useLiveReload(state.reload, objectTick, pending ? 3000 : 30_000);
  const reloadAll = () => {
    state.reload();
    health.reload();
    setHistoryTick((n) => n + 1);
  };
  const chipsVersion = live?.chips.version ?? 0;
  const groups = useMemo(() => groupByNode(live?.chips.sorted() ?? []), [live, chipsVersion]); // eslint-disable-line react-hooks/exhaustive-deps
  const byName = useMemo(() => new Map(groups.map((g) => [g.node, g])), [groups]);
  const nodeRows = useMemo(() => new Map((nodes.data?.results ?? []).map((n) => [n.name, n])), [nodes.data]);

  return (
    <>
      <div className="page-head">
        <h1>Node config</h1>
        <span className="sub">the device plugin&apos;s per-node config: slicing mode, slot count, chips to ignore</span>
      </div>
      <ErrorNote error={health.error} onRetry={health.reload} />
      {!health.data ? (
        !health.error && <Loading label="Checking whether the device plugin reads the node config" />
      ) : (
        <>
          <ReadBanner health={health.data} />
          <ErrorNote error={state.error} onRetry={state.reload} />
          {state.data && <DriftBanner clusterId={id} state={state.data} onAdopted={reloadAll} />}
          {published && (
            <Banner kind="ok" testId="node-config-published">
              <b>Published v{published.number}</b> (resourceVersion {published.previous_resource_version || "none"} → {published.resource_version}). Each
              node whose entry changed shows <b>restart pending</b> below until its plugin pod restarts: restart it there.
            </Banner>
          )}
          <div className="panel">
            <div className="panel-head">
              <h2>Nodes</h2>
              <span className="right">plugin version from the DaemonSet&apos;s image{state.data && state.data.plugin_pods !== "live" ? `; plugin pods: ${state.data.plugin_pods}` : ""}</span>
            </div>
            <NodeTable
              health={health.data}
              groups={byName}
              nodes={nodeRows}
              entries={new Map((state.data?.nodes ?? []).map((n) => [n.name, n]))}
              clusterId={id}
              onRestarted={state.reload}
            />
          </div>
          <div className="panel">
            <div className="panel-head">
              <h2>Checks</h2>
            </div>
            <table className="data" data-testid="node-config-checks">
              <tbody>
                {health.data.checks.map((c) => (
                  <tr key={c.id}>
                    <td className="mono nowrap">{c.id}</td>
                    <td>
                      <Badge kind={STATUS_BADGE[c.check_status]}>{c.check_status}</Badge>
                    </td>
                    <td>
                      {c.message}
                      {c.fix && <div className="muted small-text">Fix: {c.fix}</div>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {state.data ? (
            <DraftPanel
              clusterId={id}
              state={state.data}
              names={[...new Set([...health.data.nodes.map((n) => n.name), ...byName.keys()])].sort()}
              groups={groups}
              nodes={nodeRows}
              onReload={reloadAll}
              onPublished={(result) => {
                setPublished(result);
                reloadAll();
              }}
            />
          ) : (
            !state.error && <Loading label="Reading the live node config" />
          )}
          <NodeConfigHistory clusterId={id} refreshTick={historyTick} onRolledBack={reloadAll} />
        </>
      )}
    </>
  );
}

/** Whether the plugin reads the file; when not, why, and the patch and command that wire it. */
function ReadBanner({ health }: { health: NodeConfigHealth }) {
  if (health.readable)
    return (
      <Banner kind={health.check_status === "warn" ? "warn" : "ok"} testId="node-config-read">
        The device plugin reads the node config{health.check_status === "warn" ? " (with warnings below)" : ""}. A change reaches a node when its plugin
        pod restarts.
      </Banner>
    );
  const failing = health.checks.filter((c) => c.check_status === "fail");
  return (
    <Banner kind="error" testId="node-config-not-read">
      <b>The device plugin does not read the node config</b>: nothing set here takes effect on any node until the DaemonSet is fixed.
      <ul className="plain-list">
        {failing.map((c) => (
          <li key={c.id}>
            {c.message}
            {c.fix && <span className="muted"> Fix: {c.fix}</span>}
          </li>
        ))}
      </ul>
      {health.kubectl && (
        <div className="mt-10">
          <div className="small-text">Apply this patch to the device plugin&apos;s DaemonSet:</div>
          <CopyText value={health.kubectl} testId="node-config-kubectl" />
        </div>
      )}
      {health.patch != null && (
        <details className="mt-10">
          <summary>The strategic-merge patch</summary>
          <pre className="code" data-testid="node-config-patch">
            {JSON.stringify(health.patch, null, 2)}
          </pre>
        </details>
      )}
    </Banner>
  );
}

/** A hand edit of the ConfigMap since the portal's last version: what changed, and adopting it (admin). */
function DriftBanner({ clusterId, state, onAdopted }: { clusterId: number; state: NodeConfigState; onAdopted: () => void }) {
  const { can } = useSession();
  const [adopting, setAdopting] = useState(false);
  if (state.drift.in_sync) return null;
  return (
    <Banner kind="error" testId="node-config-drift">
      <b>Drift:</b> {state.drift.why || `the ConfigMap differs from the portal's v${state.drift.baseline_version ?? "–"}`}. A publish is refused until an admin
      adopts the live node config.
      {can("admin") && (
        <div className="mt-6">
          <button className="btn small" onClick={() => setAdopting(true)} data-testid="node-config-adopt">
            Adopt the live node config…
          </button>
        </div>
      )}
      {state.drift.diff && (
        <details className="mt-6">
          <summary>What changed by hand</summary>
          <DiffView diff={state.drift.diff} />
        </details>
      )}
      {adopting && <AdoptDialog clusterId={clusterId} onClose={() => setAdopting(false)} onDone={onAdopted} />}
    </Banner>
  );
}

function NodeTable({
  health,
  groups,
  nodes,
  entries,
  clusterId,
  onRestarted,
}: {
  health: NodeConfigHealth;
  groups: Map<string, NodeGroup>;
  nodes: Map<string, Node>;
  entries: Map<string, NodeConfigNode>;
  clusterId: number;
  onRestarted: () => void;
}) {
  if (health.nodes.length === 0) return <div className="empty">No node runs the device plugin.</div>;
  return (
    <table className="data" data-testid="node-config-nodes">
      <thead>
        <tr>
          <th>Node</th>
          <th>Plugin</th>
          <th>Applies</th>
          <th>Mode</th>
          <th>Slots per chip</th>
          <th>Entry</th>
          <th>In effect</th>
          <th>Verdict</th>
        </tr>
      </thead>
      <tbody>
        {health.nodes.map((n) => (
          <NodeRow key={n.name} row={n} group={groups.get(n.name)} node={nodes.get(n.name)}>
            <InEffectCell clusterId={clusterId} entry={entries.get(n.name)} onRestarted={onRestarted} />
          </NodeRow>
        ))}
      </tbody>
    </table>
  );
}

function NodeRow({ row, group, node, children }: { row: NodeConfigNodeHealth; group: NodeGroup | undefined; node: Node | undefined; children: ReactNode }) {
  // Slots per chip as the chips registered them, by chip type ("7" or "4 (Ascend910B4), 7 (Ascend310P)").
  const slots = useMemo(() => {
    const by = new Map<string, Set<number>>();
    for (const c of group?.chips ?? []) by.set(c.type, (by.get(c.type) ?? new Set()).add(c.slots));
    return [...by].map(([t, s]) => `${[...s].join("/")}${by.size > 1 ? ` (${t})` : ""}`).join(", ");
  }, [group]);
  const isolated = group?.chips.filter((c) => c.state === "isolated" || c.state === "isolating").length ?? 0;
  return (
    <tr data-testid={`node-config-node-${row.name}`}>
      <td>
        <Link to={`/chips?node=${encodeURIComponent(row.name)}`}>{row.name}</Link>
        {isolated > 0 && <div className="muted small-text">{isolated} chip{isolated === 1 ? "" : "s"} isolated or isolating</div>}
      </td>
      <td>
        <div>{row.plugin_version ?? "unknown"}</div>
        <div className="muted tiny-text mono">{row.plugin_image}</div>
      </td>
      <td>{row.applies.length ? row.applies.join(", ") : <span className="muted">nothing</span>}</td>
      <td>{node ? (node.hami_vnpu_core ? "hami-core" : "template") : "–"}</td>
      <td>{slots || "–"}</td>
      <td>{row.has_entry === null ? <span className="muted">not mirrored</span> : row.has_entry ? row.entry : <span className="muted">none (defaults)</span>}</td>
      <td>{children}</td>
      <td>
        <Badge kind={STATUS_BADGE[row.check_status]}>{row.check_status}</Badge> <span className="small-text">{row.message}</span>
        {row.fix && <div className="muted small-text">Fix: {row.fix}</div>}
      </td>
    </tr>
  );
}

