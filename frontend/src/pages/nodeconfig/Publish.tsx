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
import { useI18n, useT } from "../../i18n/I18nProvider";
import type { NodeEdit } from "../../lib/nodeConfigDraft";
import { useApi } from "../../lib/useApi";
import { useSession } from "../../state/session";

/** The confirmations a publish or a rollback may need, each with the API's words once it asked. */
export interface Confirms {
  confirm_warnings: boolean;
  confirm_unread: boolean;
}

// label: the message id of the checkbox's text.
const GUARDS: { field: keyof Confirms; code: string; label: string }[] = [
  { field: "confirm_warnings", code: ErrorCode.UNCONFIRMED_WARNINGS, label: "nodeConfig.publish.confirmWarnings" },
  { field: "confirm_unread", code: ErrorCode.NODE_CONFIG_NOT_READ, label: "nodeConfig.publish.confirmUnread" },
];

const bold = (chunks: ReactNode[]) => <b>{chunks}</b>;

/**
 * The confirmations and conflicts of a refused publish: per guard the API
 * asked for, a checkbox with its words; a 409 said plainly with a reload and,
 * for admins on drift, adopting the live text.
 */
export function useGuards(clusterId: number, onReload: () => void) {
  const t = useT();
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
        {t(g.label)}
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
  const t = useT();
  const { can } = useSession();
  const [adopting, setAdopting] = useState(false);
  const drift = error.code === ErrorCode.DRIFT;
  return (
    <Banner kind="error" testId="publish-conflict">
      <b>
        {drift
          ? t("nodeConfig.publish.conflictDrift")
          : error.code === ErrorCode.STALE_VERSION
            ? t("nodeConfig.publish.conflictStale")
            : t("nodeConfig.publish.refused")}
      </b>{" "}
      {t("nodeConfig.publish.nothingWritten")}
      <div className="hstack gap-8 mt-6">
        <button className="btn small" onClick={onReload} data-testid="publish-reload">
          {t("nodeConfig.publish.reload")}
        </button>
        {drift &&
          (can("admin") ? (
            <button className="btn small" onClick={() => setAdopting(true)} data-testid="publish-adopt">
              {t("nodeConfig.adopt")}
            </button>
          ) : (
            <span className="muted small-text">{t("nodeConfig.publish.adminCanAdopt")}</span>
          ))}
      </div>
      {adopting && <AdoptDialog clusterId={clusterId} onClose={() => setAdopting(false)} onDone={onReload} />}
    </Banner>
  );
}

/** Take the live text (a hand edit) as the portal's own version (admin). */
export function AdoptDialog({ clusterId, onClose, onDone }: { clusterId: number; onClose: () => void; onDone: () => void }) {
  const t = useT();
  return (
    <ReasonModal
      title={t("nodeConfig.adopt.title")}
      verb={t("nodeConfig.adopt.verb")}
      testId="adopt"
      onClose={onClose}
      submit={async (reason) => {
        await api.post<NodeConfigVersion>(`/api/clusters/${clusterId}/node-config/adopt/`, { reason });
        onClose();
        onDone();
      }}
    >
      <p className="small-text">{t("nodeConfig.adopt.explain")}</p>
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
  const { t, intl } = useI18n();
  return (
    <ReasonModal
      title={t("nodeConfig.publish.title")}
      verb={t("nodeConfig.publish.verb")}
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
        {expectedVersion
          ? intl.formatMessage({ id: "nodeConfig.publish.explainAfter" }, { version: expectedVersion, b: bold })
          : intl.formatMessage({ id: "nodeConfig.publish.explain" }, { b: bold })}
      </p>
      <ErrorNote error={diff.error} />
      {diff.data ? (
        <div data-testid="publish-diff">
          <DiffView diff={diff.data.diff} empty={t("nodeConfig.publish.noChange")} />
        </div>
      ) : (
        !diff.error && <Loading label={t("nodeConfig.publish.loadingDiff")} />
      )}
      {guards.boxes}
    </ReasonModal>
  );
}
