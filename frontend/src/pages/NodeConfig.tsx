// Node config: the device plugin's per-node config (hami-device-node-config),
// beside Templates. Is it read at all (GET .../node-config/health/: the plugin
// version per node, the checks, and the DaemonSet patch and kubectl command to
// copy when it is not), each node's mode, slot count and entry as far as the
// portal knows them, and a what-if of a draft (pages/nodeconfig/WhatIf.tsx).
// Publish, versions, diff and rollback come with the node config editor's API
// (see the marked panel at the bottom).

import { useMemo } from "react";
import { api, qs } from "../api/client";
import type { Node, NodeConfigHealth, NodeConfigNodeHealth, Page } from "../api/types";
import { Badge, Banner, CopyText, ErrorNote, Loading } from "../components/ui";
import { groupByNode, type NodeGroup } from "../lib/chips";
import { Link } from "../lib/router";
import { useApi, useLiveReload } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { WhatIfPanel } from "./nodeconfig/WhatIf";

const STATUS_BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "hot" };

export function NodeConfigPage() {
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const id = cluster!.id;
  const health = useApi((signal) => api.get<NodeConfigHealth>(`/api/clusters/${id}/node-config/health/`, signal), [id]);
  const nodes = useApi((signal) => api.get<Page<Node>>(`/api/nodes/${qs({ cluster: id, page_size: 1000 })}`, signal), [id]);
  // The health is read from what sync mirrored: a changed DaemonSet or ConfigMap is an `object` delta.
  useLiveReload(health.reload, (live?.ticks.object ?? 0) + (live?.ticks.snapshot ?? 0), 30_000);
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
          <div className="panel">
            <div className="panel-head">
              <h2>Nodes</h2>
              <span className="right">plugin version from the DaemonSet&apos;s image</span>
            </div>
            <NodeTable health={health.data} groups={byName} nodes={nodeRows} />
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
          <WhatIfPanel
            clusterId={id}
            names={[...new Set([...health.data.nodes.map((n) => n.name), ...byName.keys()])].sort()}
            groups={groups}
            nodes={nodeRows}
          />
        </>
      )}
      <PublishPlaceholder />
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

function NodeTable({ health, groups, nodes }: { health: NodeConfigHealth; groups: Map<string, NodeGroup>; nodes: Map<string, Node> }) {
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
          <th>Verdict</th>
        </tr>
      </thead>
      <tbody>
        {health.nodes.map((n) => (
          <NodeRow key={n.name} row={n} group={groups.get(n.name)} node={nodes.get(n.name)} />
        ))}
      </tbody>
    </table>
  );
}

function NodeRow({ row, group, node }: { row: NodeConfigNodeHealth; group: NodeGroup | undefined; node: Node | undefined }) {
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
      <td>
        <Badge kind={STATUS_BADGE[row.check_status]}>{row.check_status}</Badge> <span className="small-text">{row.message}</span>
        {row.fix && <div className="muted small-text">Fix: {row.fix}</div>}
      </td>
    </tr>
  );
}

/**
 * INTEGRATION POINT (issue 32, the node config editor): publish with a reason,
 * the diff, versions, rollback and adopt live under
 * /api/clusters/<id>/node-config/ (GET current, validate, publish, versions,
 * diff, rollback, adopt), built on another branch. Wire them here, seeding the
 * what-if's draft from GET current, as pages/templates/Publish.tsx and
 * History.tsx do for the device config.
 */
function PublishPlaceholder() {
  return (
    <div className="panel" data-testid="node-config-publish-placeholder">
      <div className="panel-head">
        <h2>Publish and history</h2>
      </div>
      <div className="panel-body muted">
        Publishing a draft, its diff, the versions and rollback come with the node config editor; they are not in this build yet. The what-if above writes
        nothing.
      </div>
    </div>
  );
}
