// The Node config page's draft of one node (slicing mode, slot count, chips to
// ignore chosen from the node's chips by UUID) and what a draft would do
// (POST .../node-config/what-if/: stranded slices, room before and after,
// requests unblocked or blocked, drain first). The draft itself, validate and
// publish are pages/nodeconfig/Draft.tsx's.

import type { ReactNode } from "react";
import type { Node, NodeConfigWhatIf, NodeConfigWhatIfNode } from "../../api/types";
import { Badge, Banner, Field } from "../../components/ui";
import { useI18n, useT } from "../../i18n/I18nProvider";
import type { NodeGroup } from "../../lib/chips";
import { STATE_LOOK } from "../../lib/chipState";
import { mb } from "../../lib/format";
import type { DraftMode, NodeDraft } from "../../lib/nodeConfigDraft";
import { Link } from "../../lib/router";

export function DraftEditor({
  draft,
  base,
  group,
  node,
  errors,
  onChange,
  onRemove,
}: {
  draft: NodeDraft;
  /** the node's live entry (undefined: a new entry) */
  base: NodeDraft | undefined;
  group: NodeGroup | undefined;
  node: Node | undefined;
  errors: Map<string, string[]> | undefined;
  onChange: (change: Partial<NodeDraft>) => void;
  onRemove: () => void;
}) {
  const t = useT();
  const toggle = (uuid: string) => onChange({ ignore: draft.ignore.includes(uuid) ? draft.ignore.filter((u) => u !== uuid) : [...draft.ignore, uuid] });
  const now = node ? (node.hami_vnpu_core ? "hami-core" : "template") : t("nodeConfig.whatIf.modeUnknown");
  // UUIDs filtered out before the portal saw the chip: still the entry's, so still shown (and can be returned)
  const known = new Set((group?.chips ?? []).map((c) => c.uuid));
  const unseen = [...new Set([...(base?.ignore ?? []), ...draft.ignore])].filter((u) => !known.has(u)).sort();
  if (draft.remove)
    return (
      <div className="type-card mb-12" data-testid={`whatif-draft-${draft.name}`}>
        <div className="facts">
          <b>{draft.name}</b>
          <Badge kind="warn">{t("nodeConfig.whatIf.entryRemoved")}</Badge>
          <span className="muted">{t("nodeConfig.whatIf.runsOnDefaults")}</span>
          <span className="grow" />
          <button className="btn small" onClick={() => onChange({ remove: false })}>
            {t("nodeConfig.whatIf.keepEntry")}
          </button>
        </div>
      </div>
    );
  return (
    <div className="type-card mb-12" data-testid={`whatif-draft-${draft.name}`}>
      <div className="facts">
        <b>{draft.name}</b>
        <span className="muted">{t("nodeConfig.whatIf.now", { mode: now })}</span>
        {!base && <Badge kind="info">{t("nodeConfig.whatIf.newEntry")}</Badge>}
        <span className="grow" />
        <button className="btn small subtle-danger" onClick={onRemove} data-testid="whatif-remove">
          {base ? t("nodeConfig.whatIf.removeEntry") : t("nodeConfig.whatIf.remove")}
        </button>
      </div>
      <div className="form-grid">
        <Field label={t("nodeConfig.whatIf.mode")} errors={errors?.get("mode")}>
          <select
            value={draft.mode}
            onChange={(e) => onChange({ mode: e.target.value as DraftMode })}
            aria-label={t("nodeConfig.whatIf.modeLabel")}
            data-testid="whatif-mode"
          >
            {(!base || base.mode === "keep") && (
              <option value="keep">{base ? t("nodeConfig.whatIf.modeNotSet") : t("nodeConfig.whatIf.modeAsNow", { mode: now })}</option>
            )}
            <option value="template">{t("nodeConfig.whatIf.modeTemplate")}</option>
            <option value="hami-core">{t("nodeConfig.whatIf.modeHamiCore")}</option>
          </select>
        </Field>
        <Field label={t("nodeConfig.whatIf.slots")} errors={errors?.get("slots")} hint={t("nodeConfig.whatIf.slotsHint")}>
          <input
            className="input"
            value={draft.slots}
            onChange={(e) => onChange({ slots: e.target.value })}
            aria-label={t("nodeConfig.whatIf.slotsLabel")}
            data-testid="whatif-slots"
          />
        </Field>
      </div>
      <Field label={t("nodeConfig.whatIf.ignore")} errors={errors?.get("ignore")}>
        <div data-testid="whatif-chips">
          {(group?.chips ?? []).map((c) => (
            <label key={c.uuid} className="check-line">
              <input type="checkbox" checked={draft.ignore.includes(c.uuid)} onChange={() => toggle(c.uuid)} />
              <span>
                {c.type} #{c.index} <span className="mono muted">{c.uuid}</span> <Badge kind={STATE_LOOK[c.state].badge}>{STATE_LOOK[c.state].label}</Badge>
                {c.slotsUsed > 0 && <span className="muted"> · {t("nodeConfig.whatIf.slices", { count: c.slotsUsed })}</span>}
              </span>
            </label>
          ))}
          {unseen.map((uuid) => (
            <label key={uuid} className="check-line">
              <input type="checkbox" checked={draft.ignore.includes(uuid)} onChange={() => toggle(uuid)} />
              <span>
                <span className="mono muted">{uuid}</span> <span className="muted">{t("nodeConfig.whatIf.notRegistered")}</span>
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

/** Warnings by path, one banner each. */
export function WarningBanners({ warnings }: { warnings: readonly { field: string; message: string }[] }) {
  return (
    <>
      {warnings.map((w, i) => (
        <Banner key={i} kind="warn">
          {w.field ? <span className="mono">{w.field}: </span> : null}
          {w.message}
        </Banner>
      ))}
    </>
  );
}

export function WhatIfAnswer({ answer }: { answer: NodeConfigWhatIf }) {
  const { t, intl } = useI18n();
  const drainLinks: ReactNode[] = answer.drain_first.map((n, i) => (
    <span key={n}>
      {i > 0 && ", "}
      <Link to={`/chips?node=${encodeURIComponent(n)}`}>{t("nodeConfig.whatIf.cordonAndDrain", { node: n })}</Link>
    </span>
  ));
  return (
    <div className="mt-10" data-testid="whatif-answer">
      {!answer.readable && (
        <Banner kind="error" testId="whatif-not-read">
          {t("nodeConfig.whatIf.notRead", { why: answer.not_read_because.join("; ") })}
        </Banner>
      )}
      <WarningBanners warnings={answer.warnings} />
      {answer.drain_first.length > 0 && (
        <Banner kind="warn" testId="whatif-drain-first">
          {intl.formatMessage({ id: "nodeConfig.whatIf.drainFirst" }, { nodes: answer.drain_first.join(", "), links: drainLinks })}
        </Banner>
      )}
      {answer.unknown_nodes.length > 0 && <Banner kind="error">{t("nodeConfig.whatIf.noSuchNode", { nodes: answer.unknown_nodes.join(", ") })}</Banner>}
      {answer.nodes.map((n) => (
        <NodeEffect key={n.name} node={n} />
      ))}
      <RequestsEffect answer={answer} />
    </div>
  );
}

function NodeEffect({ node }: { node: NodeConfigWhatIfNode }) {
  const t = useT();
  const none = t("nodeConfig.whatIf.none");
  return (
    <div className="type-card mb-12" data-testid={`whatif-effect-${node.name}`}>
      <div className="facts">
        <b>{node.name}</b>
        <span>{t("nodeConfig.whatIf.modeChange", { mode: change(node.mode_before, node.mode_after) })}</span>
        {!node.changed && <span className="muted">{t("nodeConfig.whatIf.noChange")}</span>}
        {node.drain_first && <Badge kind="warn">{t("nodeConfig.whatIf.drainFirstBadge")}</Badge>}
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
          {t("nodeConfig.whatIf.ignoredByPlugin", { what: c })}
        </div>
      ))}
      {node.stranded_slices.length > 0 && (
        <table className="data mt-10" data-testid={`whatif-stranded-${node.name}`}>
          <thead>
            <tr>
              <th>{t("nodeConfig.whatIf.col.stranded")}</th>
              <th>{t("nodeConfig.whatIf.col.chip")}</th>
              <th>{t("nodeConfig.whatIf.col.why")}</th>
            </tr>
          </thead>
          <tbody>
            {node.stranded_slices.map((s) => (
              <tr key={`${s.namespace}/${s.pod}/${s.chip_uuid}`}>
                <td className="mono">
                  {s.namespace}/{s.pod} <span className="muted">{s.template || t("nodeConfig.whatIf.wholeCard")} · {mb(s.memory)}</span>
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
              <th>{t("nodeConfig.whatIf.col.room")}</th>
              <th className="num">{t("nodeConfig.whatIf.col.chipsInService")}</th>
              <th className="num">{t("nodeConfig.whatIf.col.freeSlots")}</th>
              <th className="num">{t("nodeConfig.whatIf.col.freeMemory")}</th>
              <th>{t("nodeConfig.whatIf.col.largestTemplate")}</th>
            </tr>
          </thead>
          <tbody>
            {node.room.map((r) => (
              <tr key={r.common_word}>
                <td>{r.common_word}</td>
                <td className="num">{change(r.before.eligible_chips, r.after.eligible_chips)}</td>
                <td className="num">{change(r.before.slots_free, r.after.slots_free)}</td>
                <td className="num">{change(r.before.memory_free, r.after.memory_free, mb)}</td>
                <td>{change(r.before.largest_template ?? none, r.after.largest_template ?? none)}</td>
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
  const t = useT();
  if (!answer.unblocked.length && !answer.blocked.length) return <div className="muted small-text">{t("nodeConfig.whatIf.noRequestChanges")}</div>;
  return (
    <ul className="plain-list small-text" data-testid="whatif-requests">
      {answer.unblocked.map((r) => (
        <li key={`u${r.id}`}>
          <Badge kind="ok">{t("nodeConfig.whatIf.unblocked")}</Badge> {r.label}{" "}
          <span className="muted">{t("nodeConfig.whatIf.fitsOn", { nodes: r.nodes_after.join(", ") })}</span>
        </li>
      ))}
      {answer.blocked.map((r) => (
        <li key={`b${r.id}`}>
          <Badge kind="hot">{t("nodeConfig.whatIf.blocked")}</Badge> {r.label}{" "}
          <span className="muted">{t("nodeConfig.whatIf.fittedOn", { nodes: r.nodes_before.join(", ") })}</span>
        </li>
      ))}
    </ul>
  );
}
