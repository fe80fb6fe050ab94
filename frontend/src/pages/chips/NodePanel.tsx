// The node view: when the chips page shows one node (a click on a node of the
// heat map, or ?node= naming it), its states at a glance and the node's acts:
// "Cordon and drain" (every chip of the node: the node drain, with its plan)
// and "Uncordon node" when chips of it are cordoned.

import { useMemo, useState } from "react";
import { api, qs } from "../../api/client";
import type { Drain, Node, Page } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Badge, Banner } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { STATE_LOOK, STATE_ORDER, stateLabel, stateTitle } from "../../lib/chipState";
import type { NodeGroup } from "../../lib/chips";
import { Link } from "../../lib/router";
import { useApi } from "../../lib/useApi";
import { useSession } from "../../state/session";
import { DrainDialog, drainSummary } from "./DrainPlan";

export function NodePanel({ group, clusterId }: { group: NodeGroup; clusterId: number }) {
  const t = useT();
  const { can } = useSession();
  const nodes = useApi(
    (signal) => api.get<Page<Node>>(`/api/nodes/${qs({ cluster: clusterId, name: group.node, page_size: 50 })}`, signal),
    [clusterId, group.node],
  );
  const node = nodes.data?.results.find((n) => n.name === group.node);
  const [open, setOpen] = useState<"drain" | "uncordon" | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const counts = useMemo(() => {
    const by = new Map<string, number>();
    for (const c of group.chips) by.set(c.state, (by.get(c.state) ?? 0) + 1);
    return STATE_ORDER.filter((s) => by.has(s)).map((s) => [s, by.get(s)!] as const);
  }, [group]);
  const cordoned = group.totals.cordoned > 0;
  const done = (text: string) => {
    setOpen(null);
    setResult(text);
  };
  return (
    <div className="toolbar" data-testid="node-panel">
      <b>{group.node}</b>
      {node && !node.ready && <Badge kind="hot">{t("chips.node.notReady")}</Badge>}
      {counts.map(([state, n]) => (
        <Badge key={state} kind={STATE_LOOK[state].badge} title={stateTitle(state, t)}>
          {n} {stateLabel(state, t)}
        </Badge>
      ))}
      <span className="grow" />
      {node && can("operator") && (
        <>
          <button className="btn small danger" onClick={() => setOpen("drain")} data-testid="node-drain">
            {t("chips.node.drain")}
          </button>
          {cordoned && (
            <button className="btn small" onClick={() => setOpen("uncordon")} data-testid="node-uncordon">
              {t("chips.node.uncordon")}
            </button>
          )}
        </>
      )}
      {result && (
        <div className="full-width">
          <Banner kind="ok" testId="node-act-result">
            {result} · <Link to="/drains">{t("chips.node.drainsLink")}</Link>
          </Banner>
        </div>
      )}
      {open === "drain" && node && (
        <DrainDialog
          target={{ kind: "nodes", id: node.id }}
          title={t("chips.node.drainTitle", { node: node.name })}
          onClose={() => setOpen(null)}
          onDone={(d: Drain) => done(drainSummary(d, t))}
        />
      )}
      {open === "uncordon" && node && (
        <ReasonModal
          title={t("chips.node.uncordonTitle", { node: node.name })}
          verb={t("chips.act.uncordon")}
          testId="uncordon"
          onClose={() => setOpen(null)}
          submit={async (reason) => {
            const back = await api.post<unknown[]>(`/api/nodes/${node.id}/uncordon/`, { reason });
            done(t("chips.node.uncordoned", { count: back.length, node: node.name }));
          }}
        >
          <p className="small-text">{t("chips.node.uncordonExplain", { node: node.name })}</p>
        </ReasonModal>
      )}
    </div>
  );
}
