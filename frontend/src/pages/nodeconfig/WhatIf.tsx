// The Node config page's what-if: edit a draft per node (slicing mode, slot
// count, chips to ignore chosen from the node's chips by UUID) and see what it
// would do (POST .../node-config/what-if/ {nodes}: stranded slices, room
// before and after, requests unblocked or blocked, drain first). Writes nothing.

import { useState } from "react";
import { api, ApiError } from "../../api/client";
import type { Node, NodeConfigWhatIf, NodeConfigWhatIfNode } from "../../api/types";
import { Badge, Banner, Field } from "../../components/ui";
import type { NodeGroup } from "../../lib/chips";
import { STATE_LOOK } from "../../lib/chipState";
import { errorText } from "../../lib/errors";
import { mb } from "../../lib/format";
import { emptyDraft, errorsByNode, slotsError, toEntries, type DraftMode, type NodeDraft } from "../../lib/nodeConfigDraft";
import { Link } from "../../lib/router";

type NodeErrors = Map<string, Map<string, string[]>>;

export function WhatIfPanel({
  clusterId,
  names,
  groups,
  nodes,
}: {
  clusterId: number;
  /** the nodes a draft may name (the plugin's nodes and those with chips) */
  names: readonly string[];
  groups: readonly NodeGroup[];
  nodes: Map<string, Node>;
}) {
  const [drafts, setDrafts] = useState<NodeDraft[]>([]);
  const [adding, setAdding] = useState("");
  const [answer, setAnswer] = useState<NodeConfigWhatIf | null>(null);
  const [errors, setErrors] = useState<NodeErrors>(new Map());
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const free = names.filter((n) => !drafts.some((d) => d.name === n));
  const update = (name: string, change: Partial<NodeDraft>) => setDrafts((all) => all.map((d) => (d.name === name ? { ...d, ...change } : d)));

  const run = async () => {
    const local: NodeErrors = new Map();
    for (const d of drafts) {
      const bad = slotsError(d.slots);
      if (bad) local.set(d.name, new Map([["slots", [bad]]]));
    }
    setErrors(local);
    setFormError(null);
    if (local.size || !drafts.length) return;
    const entries = toEntries(drafts);
    setBusy(true);
    try {
      const result = await api.post<NodeConfigWhatIf>(`/api/clusters/${clusterId}/node-config/what-if/`, { nodes: entries });
      setAnswer(result);
      // the draft's own errors against the cluster (unknown node, UUID not on it...) land on their node
      const issues: Record<string, string[]> = {};
      for (const e of result.errors) (issues[e.field] ??= []).push(e.message);
      setErrors(errorsByNode(issues, entries));
    } catch (e) {
      setAnswer(null);
      if (e instanceof ApiError && e.body.errors) setErrors(errorsByNode(e.body.errors, entries));
      setFormError(e instanceof ApiError ? e.body.message || errorText(e) : errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="panel" data-testid="node-config-whatif">
      <div className="panel-head">
        <h2>What if</h2>
        <span className="right">a draft per node; nothing is written</span>
      </div>
      <div className="panel-body">
        <div className="toolbar flat">
          <select value={adding} onChange={(e) => setAdding(e.target.value)} aria-label="node to edit" data-testid="whatif-node">
            <option value="">Add a node to the draft…</option>
            {free.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
          <button
            className="btn small"
            disabled={!adding}
            onClick={() => {
              setDrafts((all) => [...all, emptyDraft(adding)]);
              setAdding("");
            }}
            data-testid="whatif-add"
          >
            Add
          </button>
        </div>
        {drafts.map((d) => (
          <DraftEditor
            key={d.name}
            draft={d}
            group={groups.find((g) => g.node === d.name)}
            node={nodes.get(d.name)}
            errors={errors.get(d.name)}
            onChange={(change) => update(d.name, change)}
            onRemove={() => setDrafts((all) => all.filter((x) => x.name !== d.name))}
          />
        ))}
        {errors.get("")?.get("")?.map((m, i) => (
          <div key={i} className="field-error" role="alert">
            {m}
          </div>
        ))}
        {formError && (
          <div className="field-error" role="alert" data-testid="whatif-error">
            {formError}
          </div>
        )}
        <button className="btn primary mt-10" disabled={busy || !drafts.length} onClick={() => void run()} data-testid="whatif-run">
          Show what it would do
        </button>
        {answer && <WhatIfAnswer answer={answer} />}
      </div>
    </div>
  );
}

function DraftEditor({
  draft,
  group,
  node,
  errors,
  onChange,
  onRemove,
}: {
  draft: NodeDraft;
  group: NodeGroup | undefined;
  node: Node | undefined;
  errors: Map<string, string[]> | undefined;
  onChange: (change: Partial<NodeDraft>) => void;
  onRemove: () => void;
}) {
  const toggle = (uuid: string) => onChange({ ignore: draft.ignore.includes(uuid) ? draft.ignore.filter((u) => u !== uuid) : [...draft.ignore, uuid] });
  return (
    <div className="type-card mb-12" data-testid={`whatif-draft-${draft.name}`}>
      <div className="facts">
        <b>{draft.name}</b>
        <span className="muted">now: {node ? (node.hami_vnpu_core ? "hami-core" : "template") : "mode unknown"}</span>
        <span className="grow" />
        <button className="btn small subtle-danger" onClick={onRemove}>
          Remove
        </button>
      </div>
      <div className="form-grid">
        <Field label="Slicing mode" errors={errors?.get("mode")}>
          <select value={draft.mode} onChange={(e) => onChange({ mode: e.target.value as DraftMode })} aria-label="slicing mode" data-testid="whatif-mode">
            <option value="keep">as the device config says (no key)</option>
            <option value="template">template (hami-vnpu-core: false)</option>
            <option value="hami-core">hami-core (hami-vnpu-core: true)</option>
          </select>
        </Field>
        <Field label="Slots per chip (vDeviceCount)" errors={errors?.get("slots")} hint="Empty: memory over the smallest template.">
          <input className="input" value={draft.slots} onChange={(e) => onChange({ slots: e.target.value })} aria-label="slot count" data-testid="whatif-slots" />
        </Field>
      </div>
      <Field label="Chips to ignore (filterDevices, by UUID)" errors={errors?.get("ignore")}>
        <div data-testid="whatif-chips">
          {(group?.chips ?? []).map((c) => (
            <label key={c.uuid} className="check-line">
              <input type="checkbox" checked={draft.ignore.includes(c.uuid)} onChange={() => toggle(c.uuid)} />
              <span>
                {c.type} #{c.index} <span className="mono muted">{c.uuid}</span> <Badge kind={STATE_LOOK[c.state].badge}>{STATE_LOOK[c.state].label}</Badge>
                {c.slotsUsed > 0 && <span className="muted"> · {c.slotsUsed} slices</span>}
              </span>
            </label>
          ))}
        </div>
      </Field>
      {errors?.get("")?.map((m, i) => (
        <div key={i} className="field-error" role="alert">
          {m}
        </div>
      ))}
    </div>
  );
}

function WhatIfAnswer({ answer }: { answer: NodeConfigWhatIf }) {
  return (
    <div className="mt-10" data-testid="whatif-answer">
      {!answer.readable && (
        <Banner kind="error" testId="whatif-not-read">
          Nothing changes while the device plugin does not read the node config: {answer.not_read_because.join("; ")}
        </Banner>
      )}
      {answer.warnings.map((w, i) => (
        <Banner key={i} kind="warn">
          {w.field ? <span className="mono">{w.field}: </span> : null}
          {w.message}
        </Banner>
      ))}
      {answer.drain_first.length > 0 && (
        <Banner kind="warn" testId="whatif-drain-first">
          Running slices block the mode switch on {answer.drain_first.join(", ")}: drain first (
          {answer.drain_first.map((n, i) => (
            <span key={n}>
              {i > 0 && ", "}
              <Link to={`/chips?node=${encodeURIComponent(n)}`}>Cordon and drain {n}</Link>
            </span>
          ))}
          ).
        </Banner>
      )}
      {answer.unknown_nodes.length > 0 && <Banner kind="error">No such node: {answer.unknown_nodes.join(", ")}</Banner>}
      {answer.nodes.map((n) => (
        <NodeEffect key={n.name} node={n} />
      ))}
      <RequestsEffect answer={answer} />
    </div>
  );
}

function NodeEffect({ node }: { node: NodeConfigWhatIfNode }) {
  return (
    <div className="type-card mb-12" data-testid={`whatif-effect-${node.name}`}>
      <div className="facts">
        <b>{node.name}</b>
        <span>
          mode {node.mode_before}
          {node.mode_after !== node.mode_before ? ` → ${node.mode_after}` : ""}
        </span>
        {!node.changed && <span className="muted">no change</span>}
        {node.drain_first && <Badge kind="warn">drain first</Badge>}
      </div>
      {node.changes.length > 0 && (
        <ul className="plain-list small-text">
          {node.changes.map((c, i) => (
            <li key={i}>{c}</li>
          ))}
        </ul>
      )}
      {node.ignored.map((c, i) => (
        <div key={i} className="muted small-text">
          Ignored by this plugin version: {c}
        </div>
      ))}
      {node.stranded_slices.length > 0 && (
        <table className="data mt-10" data-testid={`whatif-stranded-${node.name}`}>
          <thead>
            <tr>
              <th>Stranded slice</th>
              <th>Chip</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {node.stranded_slices.map((s) => (
              <tr key={`${s.namespace}/${s.pod}/${s.chip_uuid}`}>
                <td className="mono">
                  {s.namespace}/{s.pod} <span className="muted">{s.template || "whole card"} · {mb(s.memory)}</span>
                </td>
                <td>#{s.chip_index}</td>
                <td className="small-text">{s.reasons.join("; ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {node.room.length > 0 && (
        <table className="data mt-10">
          <thead>
            <tr>
              <th>Room</th>
              <th className="num">Chips in service</th>
              <th className="num">Free slots</th>
              <th className="num">Free memory</th>
              <th>Largest template that fits</th>
            </tr>
          </thead>
          <tbody>
            {node.room.map((r) => (
              <tr key={r.common_word}>
                <td>{r.common_word}</td>
                <td className="num">{change(r.before.eligible_chips, r.after.eligible_chips)}</td>
                <td className="num">{change(r.before.slots_free, r.after.slots_free)}</td>
                <td className="num">{change(r.before.memory_free, r.after.memory_free, mb)}</td>
                <td>{change(r.before.largest_template ?? "none", r.after.largest_template ?? "none")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function change<T>(before: T, after: T, show: (v: T) => string = String): string {
  return before === after ? show(before) : `${show(before)} → ${show(after)}`;
}

function RequestsEffect({ answer }: { answer: NodeConfigWhatIf }) {
  if (!answer.unblocked.length && !answer.blocked.length) return <div className="muted small-text">No pending request of the portal changes.</div>;
  return (
    <ul className="plain-list small-text" data-testid="whatif-requests">
      {answer.unblocked.map((r) => (
        <li key={`u${r.id}`}>
          <Badge kind="ok">unblocked</Badge> {r.label} <span className="muted">fits on {r.nodes_after.join(", ")}</span>
        </li>
      ))}
      {answer.blocked.map((r) => (
        <li key={`b${r.id}`}>
          <Badge kind="hot">blocked</Badge> {r.label} <span className="muted">fitted on {r.nodes_before.join(", ")}</span>
        </li>
      ))}
    </ul>
  );
}
