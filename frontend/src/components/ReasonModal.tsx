// The dialog of every write that needs a reason (approve, reject, drain,
// isolate, restore, uncordon): what will happen first (`children`), then the
// reason (required, recorded in the audit log), then the API's answer: its
// errors on the reason field or above it, worded as the API words them.

import { useState, type ReactNode } from "react";
import { ApiError } from "../api/client";
import { useT } from "../i18n/I18nProvider";
import { errorText, mapErrors } from "../lib/errors";
import { reasonError } from "../lib/queue";
import { Field, Modal } from "./ui";

export interface ReasonModalProps {
  title: ReactNode;
  /** the submit button's text */
  verb: string;
  /** the submit button's look: primary, or danger for what takes work away */
  tone?: "primary" | "danger";
  /** send the reason; a rejection is shown in the dialog, which stays open */
  submit: (reason: string) => Promise<void>;
  onClose: () => void;
  /** what will happen (shown above the reason) */
  children?: ReactNode;
  /** more to show under an API error (a fix to copy...) */
  explain?: (error: ApiError) => ReactNode;
  /** a test id prefix: `<prefix>-reason`, `<prefix>-submit`, `<prefix>-error` */
  testId?: string;
  /** the submit button is disabled (what will happen is still loading, or says it cannot) */
  disabled?: boolean;
}

export function ReasonModal({ title, verb, tone = "primary", submit, onClose, children, explain, testId = "decision", disabled }: ReasonModalProps) {
  const t = useT();
  const [reason, setReason] = useState("");
  const [fieldErrors, setFieldErrors] = useState<string[]>([]);
  const [formError, setFormError] = useState<string | null>(null);
  const [apiError, setApiError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async () => {
    const missing = reasonError(reason);
    if (missing) {
      setFieldErrors([missing]);
      return;
    }
    setBusy(true);
    setFieldErrors([]);
    setFormError(null);
    setApiError(null);
    try {
      await submit(reason.trim());
    } catch (e) {
      if (e instanceof ApiError) {
        const mapped = mapErrors(e.body, ["reason"]);
        setFieldErrors(mapped.fields.reason ?? []);
        // the API's own sentence first: it says what and why (the fields only name where)
        const rest = mapped.fields.reason && !mapped.form.length ? null : e.body.message || mapped.form.join(" ") || errorText(e);
        setFormError(rest);
        setApiError(e);
      } else {
        setFormError(errorText(e));
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={title}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("ui.reason.close")}
          </button>
          <button className={`btn ${tone}`} disabled={busy || disabled} onClick={() => void send()} data-testid={`${testId}-submit`}>
            {verb}
          </button>
        </>
      }
    >
      {children}
      {formError && (
        <div className="field-error mb-12" role="alert" data-testid={`${testId}-error`}>
          {formError}
          {apiError && apiError.code !== "invalid" && <span className="muted"> ({apiError.code})</span>}
        </div>
      )}
      {apiError && explain?.(apiError)}
      <Field label={t("ui.reason.label")} errors={fieldErrors} hint={t("ui.reason.hint")}>
        <textarea
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-label={t("ui.reason.aria")}
          data-testid={`${testId}-reason`}
          className="input full-width"
        />
      </Field>
    </Modal>
  );
}
