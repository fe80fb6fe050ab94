// A drain's plan and its dialog, for a chip (the chip drawer) or a whole node
// (the node panel's "Cordon and drain"): GET .../drain/ says every pod holding
// a slice there, the PodDisruptionBudgets that cover it and what will happen
// to it; POST .../drain/ {reason} cordons and drains.

import { api } from "../../api/client";
import type { Drain, DrainPlan } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Badge, Banner, ErrorNote, Loading } from "../../components/ui";
import { mb } from "../../lib/format";
import { Link } from "../../lib/router";
import { useApi } from "../../lib/useApi";

export type DrainTarget = { kind: "chips" | "nodes"; id: number };

/** What a drain will do: a banner when an admin must approve, then every pod and its fate. */
export function DrainPlanView({ plan }: { plan: DrainPlan }) {
  const held = plan.drain !== null;
  return (
    <div data-testid="drain-plan">
      <p className="muted small-text">
        Cordons {plan.chips.length === 1 ? "the chip" : `${plan.chips.length} chips of ${plan.node}`} at once (the portal places nothing more there), then
        evicts every pod holding a slice there through the Eviction API (PodDisruptionBudgets respected): the portal&apos;s own requests go back to
        Pending and are placed elsewhere; pods the portal did not make wait for an admin&apos;s approval.
      </p>
      {held && (
        <Banner kind="warn">
          An open drain already holds these chips: <Link to={`/drains?drain=${plan.drain}`}>drain #{plan.drain}</Link>.
        </Banner>
      )}
      {plan.needs_approval && (
        <Banner kind="warn">
          <span data-testid="drain-needs-approval">
            Pods the portal did not make are there: they are evicted only once an admin approves this drain (on the Drains page).
          </span>
        </Banner>
      )}
      {plan.pods.length === 0 ? (
        <div className="empty">No slice there: the drain only cordons, and is drained at once.</div>
      ) : (
        <table className="data mb-12" data-testid="drain-plan-pods">
          <thead>
            <tr>
              <th>Pod</th>
              <th>Slices</th>
              <th>Whose</th>
              <th>Budgets</th>
              <th>What happens</th>
            </tr>
          </thead>
          <tbody>
            {plan.pods.map((p) => (
              <tr key={`${p.namespace}/${p.pod}`}>
                <td>
                  <div className="mono">{p.pod}</div>
                  <div className="muted tiny-text">
                    {p.namespace} · prio {p.priority}
                    {p.priority_class ? ` (${p.priority_class})` : ""}
                  </div>
                </td>
                <td>
                  {p.templates.join(", ") || "whole card"} <span className="muted">{mb(p.memory)}</span>
                </td>
                <td>
                  {p.foreign ? (
                    <Badge kind="warn" title="not the portal's: evicted only once an admin approves">
                      foreign
                    </Badge>
                  ) : (
                    <Link to={`/requests/${p.request}`}>request #{p.request}</Link>
                  )}
                </td>
                <td>
                  {p.pdbs.length === 0 ? (
                    <span className="muted">none</span>
                  ) : (
                    p.pdbs.map((b) => (
                      <div key={b.name} className="nowrap">
                        <span className="mono">{b.name}</span>{" "}
                        <Badge kind={b.disruptions_allowed > 0 ? "ok" : "hot"} title="disruptions the budget allows now; 0 holds the eviction back">
                          {b.disruptions_allowed} allowed
                        </Badge>
                      </div>
                    ))
                  )}
                </td>
                <td className="small-text">{p.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** "Drain" / "Cordon and drain": the plan first, then the reason; `onDone` gets the drain created. */
export function DrainDialog({ target, title, onClose, onDone }: { target: DrainTarget; title: string; onClose: () => void; onDone: (drain: Drain) => void }) {
  const path = `/api/${target.kind}/${target.id}/drain/`;
  const plan = useApi((signal) => api.get<DrainPlan>(path, signal), [path]);
  return (
    <ReasonModal
      title={title}
      verb={target.kind === "nodes" ? "Cordon and drain" : "Drain"}
      tone="danger"
      testId="drain"
      disabled={!plan.data || plan.data.drain !== null}
      onClose={onClose}
      submit={async (reason) => onDone(await api.post<Drain>(path, { reason }))}
    >
      <ErrorNote error={plan.error} onRetry={plan.reload} />
      {plan.data ? <DrainPlanView plan={plan.data} /> : !plan.error && <Loading label="Reading the plan from the cluster" />}
    </ReasonModal>
  );
}

/** One line on a drain: its state, and its progress or what waits. */
export function drainSummary(d: Pick<Drain, "id" | "state" | "progress" | "victims">): string {
  const waiting = d.state === "pending" && d.victims.some((v) => v.foreign && !v.approved);
  return `Drain #${d.id}: ${d.state}${waiting ? " (foreign pods wait for an admin's approval)" : ""}${d.progress ? ` · ${d.progress}` : ""}`;
}
