// The node config editor: a draft per node started from the live entries
// (GET .../node-config/), edited, then checked (POST .../validate/: errors and
// warnings by path, put back on the node and field they name), asked what it
// would do (POST .../what-if/ of the text the edits make), and published with
// a reason (pages/nodeconfig/Publish.tsx). Only what changed is sent, as
// per-node edits, with the version the draft started from.

import { useEffect, useMemo, useState } from "react";
import { api, ApiError } from "../../api/client";
import type { Node, NodeConfigPublishResult, NodeConfigState, NodeConfigValidation, NodeConfigWhatIf } from "../../api/types";
import { Banner } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import type { NodeGroup } from "../../lib/chips";
import { errorText } from "../../lib/errors";
import {
  draftOf,
  emptyDraft,
  entryNames,
  errorsByNode,
  issueRecord,
  liveDrafts,
  slotsError,
  toEdits,
  type NodeDraft,
  type NodeEdit,
} from "../../lib/nodeConfigDraft";
import { useSession } from "../../state/session";
import { PublishDialog } from "./Publish";
import { DraftEditor, WarningBanners, WhatIfAnswer } from "./WhatIf";

type NodeErrors = Map<string, Map<string, string[]>>;

/** What the drafts started from: the live entries and the version they were read at. */
interface Seed {
  version: number | null;
  bases: Map<string, NodeDraft>;
}

function seedOf(state: NodeConfigState): Seed {
  return { version: state.baseline_version, bases: new Map(liveDrafts(state.nodes).map((d) => [d.name, d])) };
}

export function DraftPanel({
  clusterId,
  state,
  names,
  groups,
  nodes,
  onPublished,
  onReload,
}: {
  clusterId: number;
  state: NodeConfigState;
  /** the nodes a draft may name (the plugin's nodes and those with chips) */
  names: readonly string[];
  groups: readonly NodeGroup[];
  nodes: Map<string, Node>;
  onPublished: (result: NodeConfigPublishResult) => void;
  /** read the live node config again */
  onReload: () => void;
}) {
  const t = useT();
  const { can } = useSession();
  const [seed, setSeed] = useState<Seed>(() => seedOf(state));
  const [drafts, setDrafts] = useState<NodeDraft[]>(() => [...seed.bases.values()]);
  const [adding, setAdding] = useState("");
  const [errors, setErrors] = useState<NodeErrors>(new Map());
  const [checked, setChecked] = useState<NodeConfigValidation | null>(null);
  const [answer, setAnswer] = useState<NodeConfigWhatIf | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [publishing, setPublishing] = useState<{ edits: NodeEdit[]; text: string } | null>(null);
  const edits = useMemo(() => toEdits(drafts, seed.bases), [drafts, seed]);
  const dirty = edits.length > 0;

  // The live node config changed (a publish, a hand edit, an adoption): start
  // again from it, unless there are edits to keep (a publish of those is then
  // refused as stale, and says so). Right after our own publish the mirror may
  // still hold the text before it (drift, same version): wait for it.
  useEffect(() => {
    if (dirty || (!state.drift.in_sync && state.baseline_version === seed.version)) return;
    const next = seedOf(state);
    setSeed(next);
    setDrafts([...next.bases.values()]);
  }, [state]); // eslint-disable-line react-hooks/exhaustive-deps

  const free = names.filter((n) => !drafts.some((d) => d.name === n));
  const update = (name: string, change: Partial<NodeDraft>) => {
    setChecked(null);
    setAnswer(null);
    setDrafts((all) => all.map((d) => (d.name === name ? { ...d, ...change } : d)));
  };
  const remove = (name: string) => {
    if (seed.bases.has(name)) update(name, { remove: true });
    else setDrafts((all) => all.filter((d) => d.name !== name));
  };
  const restart = () => {
    const next = seedOf(state);
    setSeed(next);
    setDrafts([...next.bases.values()]);
    setErrors(new Map());
    setChecked(null);
    setAnswer(null);
    setFormError(null);
  };

  /** The draft's own checks before anything is sent (the slot counts, and that something changed). */
  const localCheck = (): boolean => {
    const local: NodeErrors = new Map();
    for (const d of drafts) {
      const bad = d.remove ? null : slotsError(d.slots);
      if (bad) local.set(d.name, new Map([["slots", [bad]]]));
    }
    setErrors(local);
    setFormError(null);
    setAnswer(null);
    if (!local.size && !edits.length) setFormError(t("nodeConfig.draft.nothingToCheck"));
    return !local.size && edits.length > 0;
  };

  /** Validate the edits: the text they make, its errors on their fields (null when refused, or invalid and `strict`). */
  const validate = async (strict: boolean): Promise<NodeConfigValidation | null> => {
    try {
      const result = await api.post<NodeConfigValidation>(`/api/clusters/${clusterId}/node-config/validate/`, { nodes: edits });
      setChecked(result);
      setErrors(errorsByNode(issueRecord(result.errors), entryNames(result.text)));
      return strict && !result.valid ? null : result;
    } catch (e) {
      setChecked(null);
      if (e instanceof ApiError && e.body.errors) setErrors(errorsByNode(e.body.errors, edits));
      setFormError(e instanceof ApiError ? e.body.message || errorText(e) : errorText(e));
      return null;
    }
  };

  const run = (step: "validate" | "what-if" | "publish") => async () => {
    if (!localCheck()) return;
    setBusy(true);
    try {
      const result = await validate(step !== "validate");
      if (!result) return;
      if (step === "what-if") {
        setAnswer(await api.post<NodeConfigWhatIf>(`/api/clusters/${clusterId}/node-config/what-if/`, { text: result.text }));
      } else if (step === "publish") {
        setPublishing({ edits, text: result.text });
      }
    } catch (e) {
      setFormError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="panel" data-testid="node-config-editor">
      <div className="panel-head">
        <h2>{t("nodeConfig.draft.title")}</h2>
        <span className="right">
          {seed.version ? t("nodeConfig.draft.howToVersion", { version: seed.version }) : t("nodeConfig.draft.howTo")}
        </span>
      </div>
      <div className="panel-body">
        <div className="toolbar flat">
          <select value={adding} onChange={(e) => setAdding(e.target.value)} aria-label={t("nodeConfig.draft.nodeToEdit")} data-testid="whatif-node">
            <option value="">{t("nodeConfig.draft.addNode")}</option>
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
              setDrafts((all) => [...all, seed.bases.get(adding) ?? emptyDraft(adding)]);
              setAdding("");
            }}
            data-testid="whatif-add"
          >
            {t("nodeConfig.draft.add")}
          </button>
          <span className="grow" />
          {dirty && (
            <button className="btn small" onClick={restart} data-testid="draft-discard">
              {t("nodeConfig.draft.discard")}
            </button>
          )}
        </div>
        {drafts.length === 0 && <div className="muted mb-12">{t("nodeConfig.draft.noEntries")}</div>}
        {drafts.map((d) => (
          <DraftEditor
            key={d.name}
            draft={d}
            base={seed.bases.get(d.name)}
            group={groups.find((g) => g.node === d.name)}
            node={nodes.get(d.name)}
            errors={errors.get(d.name)}
            onChange={(change) => update(d.name, change)}
            onRemove={() => remove(d.name)}
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
        {checked && <Checked result={checked} />}
        <div className="hstack gap-8 mt-10">
          <button className="btn" disabled={busy || !dirty} onClick={() => void run("validate")()} data-testid="draft-validate">
            {t("nodeConfig.draft.validate")}
          </button>
          <button className="btn" disabled={busy || !dirty} onClick={() => void run("what-if")()} data-testid="whatif-run">
            {t("nodeConfig.draft.whatIf")}
          </button>
          {can("operator") && (
            <button className="btn primary" disabled={busy || !dirty} onClick={() => void run("publish")()} data-testid="draft-publish">
              {t("nodeConfig.draft.publish")}
            </button>
          )}
          {!dirty && <span className="muted small-text">{t("nodeConfig.draft.equalsLive")}</span>}
        </div>
        {answer && <WhatIfAnswer answer={answer} />}
      </div>
      {publishing && (
        <PublishDialog
          clusterId={clusterId}
          edits={publishing.edits}
          text={publishing.text}
          expectedVersion={seed.version}
          onClose={() => setPublishing(null)}
          onReload={() => {
            setPublishing(null);
            restart();
            onReload();
          }}
          onDone={(result) => {
            setPublishing(null);
            setChecked(null);
            // the published text is the new live one: start from it (the state read that follows confirms it)
            const published = new Map(seed.bases);
            for (const d of drafts) {
              if (d.remove) published.delete(d.name);
              else published.set(d.name, draftOf({ name: d.name, has_entry: true, hami_vnpu_core: modeValue(d), v_device_count: Number(d.slots) || null, filter_uuids: d.ignore }));
            }
            setSeed({ version: result.number, bases: published });
            setDrafts([...published.values()]);
            onPublished(result);
          }}
        />
      )}
    </div>
  );
}

function modeValue(d: NodeDraft): boolean | null {
  return d.mode === "keep" ? null : d.mode === "hami-core";
}

/** The validation's verdict: valid or not, and its warnings (its errors are on their fields). */
function Checked({ result }: { result: NodeConfigValidation }) {
  const t = useT();
  return (
    <div className="mt-10" data-testid="draft-validation">
      {result.valid ? (
        <Banner kind="ok">{t("nodeConfig.draft.valid", { count: result.warnings.length })}</Banner>
      ) : (
        <Banner kind="error">{t("nodeConfig.draft.invalid", { count: result.errors.length })}</Banner>
      )}
      <WarningBanners warnings={result.warnings} />
    </div>
  );
}
