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
import { useI18n, useT } from "../i18n/I18nProvider";
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
// A check's status in words, by message id.
const STATUS_LABEL: Record<string, string> = { ok: "nodeConfig.status.ok", warn: "nodeConfig.status.warn", fail: "nodeConfig.status.fail" };

const bold = (chunks: ReactNode[]) => <b>{chunks}</b>;

function StatusBadge({ status }: { status: string }) {
  const t = useT();
  return <Badge kind={STATUS_BADGE[status]}>{STATUS_LABEL[status] ? t(STATUS_LABEL[status]) : status}</Badge>;
}

export function NodeConfigPage() {
  const { t, intl } = useI18n();
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
        <h1>{t("nodeConfig.title")}</h1>
        <span className="sub">{t("nodeConfig.subtitle")}</span>
      </div>
      <ErrorNote error={health.error} onRetry={health.reload} />
      {!health.data ? (
        !health.error && <Loading label={t("nodeConfig.checkingRead")} />
      ) : (
        <>
          <ReadBanner health={health.data} />
          <ErrorNote error={state.error} onRetry={state.reload} />
          {state.data && <DriftBanner clusterId={id} state={state.data} onAdopted={reloadAll} />}
          {published && (
            <Banner kind="ok" testId="node-config-published">
              {intl.formatMessage(
                { id: "nodeConfig.published" },
                {
                  number: published.number,
                  previous: published.previous_resource_version || t("nodeConfig.published.none"),
                  resourceVersion: published.resource_version,
                  b: bold,
                },
              )}
            </Banner>
          )}
          <div className="panel">
            <div className="panel-head">
              <h2>{t("nodeConfig.nodes")}</h2>
              <span className="right">
                {state.data && state.data.plugin_pods !== "live"
                  ? t("nodeConfig.pluginVersionFromPods", { pods: state.data.plugin_pods })
                  : t("nodeConfig.pluginVersionFrom")}
              </span>
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
              <h2>{t("nodeConfig.checks")}</h2>
            </div>
            <table className="data" data-testid="node-config-checks">
              <tbody>
                {health.data.checks.map((c) => (
                  <tr key={c.id}>
                    <td className="mono nowrap">{c.id}</td>
                    <td>
                      <StatusBadge status={c.check_status} />
                    </td>
                    <td>
                      {c.message}
                      {c.fix && <div className="muted small-text">{t("nodeConfig.fix", { fix: c.fix })}</div>}
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
            !state.error && <Loading label={t("nodeConfig.readingLive")} />
          )}
          <NodeConfigHistory clusterId={id} refreshTick={historyTick} onRolledBack={reloadAll} />
        </>
      )}
    </>
  );
}

/** Whether the plugin reads the file; when not, why, and the patch and command that wire it. */
function ReadBanner({ health }: { health: NodeConfigHealth }) {
  const { t, intl } = useI18n();
  if (health.readable)
    return (
      <Banner kind={health.check_status === "warn" ? "warn" : "ok"} testId="node-config-read">
        {health.check_status === "warn" ? t("nodeConfig.readWithWarnings") : t("nodeConfig.read")}
      </Banner>
    );
  const failing = health.checks.filter((c) => c.check_status === "fail");
  return (
    <Banner kind="error" testId="node-config-not-read">
      {intl.formatMessage({ id: "nodeConfig.notRead" }, { b: bold })}
      <ul className="plain-list">
        {failing.map((c) => (
          <li key={c.id}>
            {c.message}
            {c.fix && <span className="muted"> {t("nodeConfig.fix", { fix: c.fix })}</span>}
          </li>
        ))}
      </ul>
      {health.kubectl && (
        <div className="mt-10">
          <div className="small-text">{t("nodeConfig.applyPatch")}</div>
          <CopyText value={health.kubectl} testId="node-config-kubectl" />
        </div>
      )}
      {health.patch != null && (
        <details className="mt-10">
          <summary>{t("nodeConfig.strategicPatch")}</summary>
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
  const { t, intl } = useI18n();
  const { can } = useSession();
  const [adopting, setAdopting] = useState(false);
  if (state.drift.in_sync) return null;
  return (
    <Banner kind="error" testId="node-config-drift">
      {intl.formatMessage(
        { id: "nodeConfig.drift" },
        { why: state.drift.why || t("nodeConfig.drift.differs", { version: state.drift.baseline_version ?? "–" }), b: bold },
      )}
      {can("admin") && (
        <div className="mt-6">
          <button className="btn small" onClick={() => setAdopting(true)} data-testid="node-config-adopt">
            {t("nodeConfig.adopt")}
          </button>
        </div>
      )}
      {state.drift.diff && (
        <details className="mt-6">
          <summary>{t("nodeConfig.changedByHand")}</summary>
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
  const t = useT();
  if (health.nodes.length === 0) return <div className="empty">{t("nodeConfig.noPluginNode")}</div>;
  return (
    <table className="data" data-testid="node-config-nodes">
      <thead>
        <tr>
          <th>{t("nodeConfig.col.node")}</th>
          <th>{t("nodeConfig.col.plugin")}</th>
          <th>{t("nodeConfig.col.applies")}</th>
          <th>{t("nodeConfig.col.mode")}</th>
          <th>{t("nodeConfig.col.slots")}</th>
          <th>{t("nodeConfig.col.entry")}</th>
          <th>{t("nodeConfig.col.inEffect")}</th>
          <th>{t("nodeConfig.col.verdict")}</th>
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
  const t = useT();
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
        {isolated > 0 && <div className="muted small-text">{t("nodeConfig.isolated", { count: isolated })}</div>}
      </td>
      <td>
        <div>{row.plugin_version ?? t("nodeConfig.unknown")}</div>
        <div className="muted tiny-text mono">{row.plugin_image}</div>
      </td>
      <td>{row.applies.length ? row.applies.join(", ") : <span className="muted">{t("nodeConfig.nothing")}</span>}</td>
      <td>{node ? (node.hami_vnpu_core ? "hami-core" : "template") : "–"}</td>
      <td>{slots || "–"}</td>
      <td>
        {row.has_entry === null ? (
          <span className="muted">{t("nodeConfig.notMirrored")}</span>
        ) : row.has_entry ? (
          row.entry
        ) : (
          <span className="muted">{t("nodeConfig.noEntry")}</span>
        )}
      </td>
      <td>{children}</td>
      <td>
        <StatusBadge status={row.check_status} /> <span className="small-text">{row.message}</span>
        {row.fix && <div className="muted small-text">{t("nodeConfig.fix", { fix: row.fix })}</div>}
      </td>
    </tr>
  );
}

