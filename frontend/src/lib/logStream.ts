// Reading `GET /api/requests/<id>/logs/` as it comes: a streamed fetch
// (`follow=true` is chunked text until the container ends), its source
// (`X-Log-Source: live|kept`, `X-Log-Truncated`) from the headers, and the
// portal's JSON error (no_log, log_not_ready, ...) as an ApiError.

import { ApiError } from "../api/client";
import { t } from "../i18n/intl";
import type { ApiErrorBody } from "./errors";

export type LogSource = "live" | "kept";

export interface OpenedLog {
  source: LogSource;
  truncated: boolean;
  /** the text as it arrives; ends with the stream (or when the connection drops) */
  chunks: AsyncIterable<string>;
}

export type LogOpener = (path: string, signal: AbortSignal) => Promise<OpenedLog>;

export interface LogParams {
  follow?: boolean;
  sinceTime?: string;
}

export function logPath(requestId: number, params: LogParams = {}): string {
  const search = new URLSearchParams({ timestamps: "true" });
  if (params.follow) search.set("follow", "true");
  if (params.sinceTime) search.set("since_time", params.sinceTime);
  return `/api/requests/${requestId}/logs/?${search.toString()}`;
}

async function errorOf(response: Response): Promise<ApiError> {
  let body: ApiErrorBody;
  try {
    body = (await response.json()) as ApiErrorBody;
  } catch {
    body = { code: `http_${response.status}`, message: `HTTP ${response.status} ${response.statusText}` };
  }
  return new ApiError(response.status, body);
}

async function* textOf(response: Response): AsyncIterable<string> {
  if (!response.body) {
    yield await response.text();
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let part: ReadableStreamReadResult<Uint8Array>;
      try {
        part = await reader.read();
      } catch {
        return; // dropped: the caller resumes
      }
      if (part.done) break;
      yield decoder.decode(part.value, { stream: true });
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

export const openLog: LogOpener = async (path, signal) => {
  let response: Response;
  try {
    response = await fetch(path, { credentials: "same-origin", signal });
  } catch (error) {
    if ((error as Error)?.name === "AbortError") throw error;
    throw new ApiError(0, { code: "network", message: t("logs.unreachable") });
  }
  if (!response.ok) throw await errorOf(response);
  return {
    source: response.headers.get("X-Log-Source") === "kept" ? "kept" : "live",
    truncated: response.headers.get("X-Log-Truncated") === "true",
    chunks: textOf(response),
  };
};
