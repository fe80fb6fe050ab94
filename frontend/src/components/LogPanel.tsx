// The job's log on the request page, with its result beside it.
//
// While the request has not ended the log is followed (`GET
// /api/requests/<id>/logs/?follow=true&timestamps=true`, a streamed fetch):
// lines appear as the pod prints them, and a dropped stream is opened again
// with `since_time` = the last timestamp shown, dropping the lines already
// shown (lib/logLines). Once it ended, the log is read: the copy the portal
// kept when it ended (`X-Log-Source: kept`, "truncated" when it was cut), or
// the pod's own until it is kept, read again until then (the result may come
// before the copy: the portal keeps the exit code as soon as it sees the end).
// The text is React text (escaped), the last MAX_LINES lines only.

import { useEffect, useLayoutEffect, useReducer, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { ErrorCode } from "../api/errorCodes";
import type { CiRequest } from "../api/types";
import { backoffDelay, type BackoffOptions } from "../lib/backoff";
import { errorText } from "../lib/errors";
import { dateTime } from "../lib/format";
import { LogBuffer, MAX_LINES, logText } from "../lib/logLines";
import { logPath, openLog, type LogOpener, type LogSource } from "../lib/logStream";
import { isFinished } from "../lib/requestDetail";
import { useT } from "../i18n/I18nProvider";
import type { Translate } from "../i18n/intl";
import { Badge } from "./ui";

/** Delays between two reads of a running job's log (a stream that ended or failed). */
const RETRY: BackoffOptions = { base: 1000, max: 10_000, factor: 2, jitter: 0.3 };
/** Delays between two reads of an ended job's log that is not kept yet. */
const UNTIL_KEPT: BackoffOptions = { base: 1000, max: 15_000, factor: 2, jitter: 0.3 };
/** Reads of an ended job's log before the pod's own is shown as it is (about 2 minutes). */
const MAX_READS_UNTIL_KEPT = 12;

type Phase = "loading" | "streaming" | "ended" | "done" | "no_log" | "not_ready" | "error";

interface Status {
  phase: Phase;
  source?: LogSource;
  truncated?: boolean;
  message?: string;
}

type SetStatus = (status: Status) => void;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal.addEventListener("abort", stop, { once: true });
  });
}

function failure(error: unknown): Status {
  const code = error instanceof ApiError ? error.code : "";
  if (code === ErrorCode.NO_LOG) return { phase: "no_log", message: errorText(error) };
  if (code === ErrorCode.LOG_NOT_READY) return { phase: "not_ready", message: errorText(error) };
  return { phase: "error", message: errorText(error) };
}

/** Follow a running job's log until `signal` aborts (the request ended, or the page closed). */
async function followLog(id: number, buffer: LogBuffer, open: LogOpener, signal: AbortSignal, set: SetStatus, changed: () => void) {
  let failures = 0;
  let ended = false; // the container ended: say so while waiting for the request to end
  while (!signal.aborted) {
    try {
      const log = await open(logPath(id, { follow: true, sinceTime: buffer.resume() }), signal);
      if (!ended) set({ phase: "streaming", source: log.source });
      for await (const text of log.chunks) {
        if (signal.aborted) return;
        buffer.push(text);
        changed();
        failures = 0;
      }
      buffer.end();
      changed();
      ended = true;
      set({ phase: "ended", source: log.source, truncated: log.truncated });
      if (log.source === "kept") return;
    } catch (error) {
      if (signal.aborted) return;
      const status = failure(error);
      set(status);
      if (status.phase === "no_log") return; // a pod comes with a new request state: read again then
    }
    await sleep(backoffDelay(failures++, RETRY), signal);
  }
}

/** Read an ended job's log: the kept copy, or the pod's, read again until it is kept. */
async function readLog(id: number, buffer: LogBuffer, open: LogOpener, signal: AbortSignal, set: SetStatus, changed: () => void) {
  for (let reads = 0; reads < MAX_READS_UNTIL_KEPT && !signal.aborted; reads++) {
    if (reads > 0) await sleep(backoffDelay(reads - 1, UNTIL_KEPT), signal);
    if (signal.aborted) return;
    try {
      const log = await open(logPath(id), signal);
      const texts: string[] = [];
      for await (const text of log.chunks) texts.push(text);
      if (signal.aborted) return;
      buffer.reset();
      buffer.push(texts.join(""));
      buffer.end();
      changed();
      set({ phase: "done", source: log.source, truncated: log.truncated });
      if (log.source === "kept") return;
    } catch (error) {
      if (!signal.aborted) set(failure(error));
      return;
    }
  }
}

function statusNote(status: Status, r: CiRequest, t: Translate): string {
  switch (status.phase) {
    case "loading":
      return t("logs.note.loading");
    case "streaming":
      return t("logs.note.streaming");
    case "ended":
      return t("logs.note.ended");
    case "done":
      return status.source === "kept" ? t("logs.note.doneKept") : t("logs.note.donePod");
    case "no_log":
      return r.pod_name ? (status.message ?? "") : isFinished(r.state) ? t("logs.note.neverRan") : t("logs.note.noPodYet");
    case "not_ready":
      return t("logs.note.notReady");
    case "error":
      return t(isFinished(r.state) ? "logs.note.error" : "logs.note.errorRetrying", { message: status.message ?? "" });
  }
}

function JobResult({ r }: { r: CiRequest }) {
  const t = useT();
  const result = r.result;
  if (!result) {
    return <p className="muted">{isFinished(r.state) ? t("logs.result.recording") : t("logs.result.later")}</p>;
  }
  return (
    <>
      <table className="data">
        <tbody>
          <tr>
            <th>{t("logs.result.exitCode")}</th>
            <td data-testid="log-exit-code">{result.exit_code ?? "–"}</td>
          </tr>
          <tr>
            <th>{t("logs.result.reason")}</th>
            <td data-testid="log-reason">{result.reason || "–"}</td>
          </tr>
          <tr>
            <th>{t("logs.result.finished")}</th>
            <td data-testid="log-finished-at">{dateTime(result.finished_at)}</td>
          </tr>
        </tbody>
      </table>
      {result.containers.length > 1 && (
        <ul className="plain-list">
          {result.containers.map((c) => (
            <li key={c.name}>
              <span className="mono">{c.name}</span>: {c.exit_code ?? "–"} <span className="muted">{c.reason}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function LogPanel({ request: r, open = openLog }: { request: CiRequest; open?: LogOpener }) {
  const t = useT();
  const buffer = useRef(new LogBuffer()).current;
  const [version, changed] = useReducer((n: number) => n + 1, 0);
  const [status, setStatus] = useState<Status>({ phase: "loading" });
  const [follow, setFollow] = useState(true);
  const [stamps, setStamps] = useState(false);
  const view = useRef<HTMLPreElement>(null);
  const finished = isFinished(r.state);
  const hasResult = r.result !== null;

  useEffect(() => {
    const control = new AbortController();
    const read = finished ? readLog : followLog;
    void read(r.id, buffer, open, control.signal, setStatus, changed);
    return () => control.abort();
    // read again when a pod comes, when it ends and when its result (the kept log) is there
  }, [r.id, r.pod_name, finished, hasResult, buffer, open]);

  useLayoutEffect(() => {
    if (follow && view.current) view.current.scrollTop = view.current.scrollHeight;
  }, [version, follow, stamps]);

  const onScroll = () => {
    const el = view.current;
    if (el && follow && el.scrollHeight - el.scrollTop - el.clientHeight > 24) setFollow(false);
  };

  const note = statusNote(status, r, t);
  return (
    <div className="panel" data-testid="log-panel" data-phase={status.phase} data-source={status.source ?? ""}>
      <div className="panel-head">
        <h2>{t("logs.title")}</h2>
        {status.source && (
          <Badge kind={status.source === "live" ? "info" : ""} title={t(`logs.sourceTitle.${status.source}`)}>
            <span data-testid="log-source">{t(`logs.source.${status.source}`)}</span>
          </Badge>
        )}
        {status.truncated && (
          <Badge kind="warn" title={t("logs.truncatedTitle")}>
            <span data-testid="log-truncated">{t("logs.truncated")}</span>
          </Badge>
        )}
        <span className="right">
          <label>
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} data-testid="log-follow" /> {t("logs.follow")}
          </label>
          <label>
            <input type="checkbox" checked={stamps} onChange={(e) => setStamps(e.target.checked)} data-testid="log-timestamps" /> {t("logs.timestamps")}
          </label>
          <a href={logPath(r.id)} target="_blank" rel="noreferrer">
            {t("logs.raw")}
          </a>
        </span>
      </div>
      <div className="panel-body log-panel">
        <div>
          {note && (
            <p className={status.phase === "error" ? "field-error" : "muted"} data-testid="log-note">
              {note}
            </p>
          )}
          {buffer.dropped > 0 && (
            <p className="muted" data-testid="log-dropped">
              {t("logs.dropped", { count: buffer.dropped, max: MAX_LINES })}
            </p>
          )}
          <pre className="log-view" ref={view} onScroll={onScroll} data-testid="log-text" data-lines={buffer.lines.length}>
            {logText(buffer.lines, stamps)}
          </pre>
        </div>
        <div data-testid="log-result">
          <JobResult r={r} />
        </div>
      </div>
    </div>
  );
}
