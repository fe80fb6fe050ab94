// Publishing the node config: the diff first (POST .../node-config/diff/ of
// the text the edits make against the live one), a reason, then the write
// (POST .../publish/ with the edits and the version they started from). The
// API's refusals are said as it words them: unconfirmed warnings and a node
// config the plugin does not read become checkboxes with its words (400
// unconfirmed_warnings, node_config_not_read); a stale version or a hand edit
// (409 stale_version, drift) say what happened and offer a reload, and an
// admin the adoption of the live text. Rollback (History.tsx) shares the guards.

import { useState, type ReactNode } from "react";
import { api, ApiError } from "../../api/client";
import { ErrorCode } from "../../api/errorCodes";
import type { NodeConfigDiff, NodeConfigPublishResult, NodeConfigVersion } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Banner, DiffView, ErrorNote, Loading } from "../../components/ui";
import type { NodeEdit } from "../../lib/nodeConfigDraft";
import { useApi } from "../../lib/useApi";
import { useSession } from "../../state/session";

/** The confirmations a publish or a rollback may need, each with the API's words once it asked. */
export interface Confirms {
  confirm_warnings: boolean;
  confirm_unread: boolean;
}

const GUARDS: { field: keyof Confirms; code: string; label: string }[] = [
  { field: "confirm_warnings", code: ErrorCode.UNCONFIRMED_WARNINGS, label: "Publish with these warnings:" },
  { field: "confirm_unread", code: ErrorCode.NODE_CONFIG_NOT_READ, label: "Write it although the device plugin does not read it:" },
];

/**
 * The confirmations and conflicts of a refused publish: per guard the API
 * asked for, a checkbox with its words; a 409 said plainly with a reload and,
 * for admins on drift, adopting the live text.
 */
export function useGuards(clusterId: number, onReload: () => void) {
  const [confirms, setConfirms] = useState<Confirms>({ confirm_warnings: false, confirm_unread: false });
  // the API's words per guard, kept once asked (a later refusal for the other guard keeps the first box)
  const [asked, setAsked] = useState<Partial<Record<keyof Confirms, string[]>>>({});
  /** Run a write; a refusal for a guard shows its box with the API's words, then is shown by the dialog as usual. */
  const guarded = async (write: () => Promise<void>) => {
    try {
      await write();
    } catch (e) {
      const guard = e instanceof ApiError ? GUARDS.find((g) => g.code === e.code) : undefined;
      const words = guard && e instanceof ApiError ? e.body.errors?.[guard.field] : undefined;
      if (guard && words) setAsked((a) => ({ ...a, [guard.field]: ([] as string[]).concat(words) }));
      throw e;
    }
  };
  const explain = (error: ApiError): ReactNode =>
    error.status === 409 ? <Conflict clusterId={clusterId} error={error} onReload={onReload} /> : null;
  const boxes = GUARDS.filter((g) => asked[g.field]).map((g) => (
    <label key={g.field} className="hstack gap-6 align-start mb-12">
      <input
        type="checkbox"
        checked={confirms[g.field]}
        onChange={(e) => setConfirms((c) => ({ ...c, [g.field]: e.target.checked }))}
        data-testid={g.field.replace("_", "-")}
      />
      <span className="small-text">
        {g.label}
        <ul className="plain-list">
          {asked[g.field]!.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      </span>
    </label>
  ));
  return { confirms, guarded, explain, boxes: boxes.length ? <div data-testid="publish-confirms">{boxes}</div> : null };
}

/** A 409: a publish since the draft was read (stale_version) or a hand edit (drift). */
function Conflict({ clusterId, error, onReload }: { clusterId: number; error: ApiError; onReload: () => void }) {
  const { can } = useSession();
  const [adopting, setAdopting] = useState(false);
  const drift = error.code === ErrorCode.DRIFT;
  return (
    <Banner kind="error" testId="publish-conflict">
      <b>
        {drift
          ? "The ConfigMap was edited outside the portal since its last version."
          : error.code === ErrorCode.STALE_VERSION
            ? "The node config changed since this draft was read (someone published)."
            : "Refused."}
      </b>{" "}
      Nothing was written.
      <div className="hstack gap-8 mt-6">
        <button className="btn small" onClick={onReload} data-testid="publish-reload">
          Reload the live node config (drops this draft)
        </button>
        {drift &&
          (can("admin") ? (
            <button className="btn small" onClick={() => setAdopting(true)} data-testid="publish-adopt">
              Adopt the live node config…
            </button>
          ) : (
            <span className="muted small-text">An admin can adopt the hand edit.</span>
          ))}
      </div>
      {adopting && <AdoptDialog clusterId={clusterId} onClose={() => setAdopting(false)} onDone={onReload} />}
    </Banner>
  );
}

/** Take the live text (a hand edit) as the portal's own version (admin). */
export function AdoptDialog({ clusterId, onClose, onDone }: { clusterId: number; onClose: () => void; onDone: () => void }) {
  return (
    <ReasonModal
      title="Adopt the live node config?"
      verb="Adopt"
      testId="adopt"
      onClose={onClose}
      submit={async (reason) => {
        await api.post<NodeConfigVersion>(`/api/clusters/${clusterId}/node-config/adopt/`, { reason });
        onClose();
        onDone();
      }}
    >
      <p className="small-text">
        The text the ConfigMap holds now, hand edit included, becomes the portal&apos;s newest version. Nothing is written to the cluster; edits are then
        based on it.
      </p>
    </ReasonModal>
  );
}

export function PublishDialog({
  clusterId,
  edits,
  text,
  expectedVersion,
  onClose,
  onReload,
  onDone,
}: {
  clusterId: number;
  edits: NodeEdit[];
  /** the text the edits make (the validation's) */
  text: string;
  expectedVersion: number | null;
  onClose: () => void;
  onReload: () => void;
  onDone: (result: NodeConfigPublishResult) => void;
}) {
  const diff = useApi(() => api.post<NodeConfigDiff>(`/api/clusters/${clusterId}/node-config/diff/`, { from_version: null, text }), [clusterId, text]);
  const guards = useGuards(clusterId, onReload);
  return (
    <ReasonModal
      title="Publish the node config"
      verb="Publish"
      testId="publish"
      onClose={onClose}
      disabled={!diff.data}
      explain={guards.explain}
      submit={(reason) =>
        guards.guarded(async () => {
          const result = await api.post<NodeConfigPublishResult>(`/api/clusters/${clusterId}/node-config/publish/`, {
            nodes: edits,
            reason,
            expected_version: expectedVersion,
            ...guards.confirms,
          });
          onDone(result);
        })
      }
    >
      <p className="small-text">
        Writes these changes to the ConfigMap as a new version{expectedVersion ? ` after v${expectedVersion}` : ""}. A node&apos;s device plugin reads them
        when its pod restarts: the nodes whose entry changes show <b>restart pending</b> until then.
      </p>
      <ErrorNote error={diff.error} />
      {diff.data ? (
        <div data-testid="publish-diff">
          <DiffView diff={diff.data.diff} empty="The text would not change." />
        </div>
      ) : (
        !diff.error && <Loading label="The diff" />
      )}
      {guards.boxes}
    </ReasonModal>
  );
}
