// The one way the app talks to the portal: same-origin fetch of /api, JSON in
// and out, the session cookie, and Django's CSRF token on unsafe methods.

import type { ApiErrorBody } from "../lib/errors";
import { ErrorCode } from "./errorCodes";
import { currentI18n, t } from "../i18n/intl";

export class ApiError extends Error {
  readonly status: number;
  readonly body: ApiErrorBody;

  constructor(status: number, body: ApiErrorBody) {
    super(body.message || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }

  get code(): string {
    return this.body.code ?? "error";
  }
}

export function csrfToken(cookie: string = document.cookie): string {
  for (const part of cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === "csrftoken") return decodeURIComponent(rest.join("="));
  }
  return "";
}

type Listener = (error: ApiError) => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any call answers 401/403 for lack of a session (the app shows the login). */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  body?: unknown;
  signal?: AbortSignal;
  /** answer text instead of JSON (YAML exports) */
  text?: boolean;
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  // The portal answers errors in the UI's language (codes and fields stay the same).
  const headers: Record<string, string> = { Accept: "application/json", "Accept-Language": currentI18n().locale };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error)?.name === "AbortError") throw error;
    throw new ApiError(0, { code: "network", message: t("ui.network") });
  }
  if (response.status === 204) return undefined as T;
  const raw = await response.text();
  if (!response.ok) {
    let body: ApiErrorBody;
    try {
      body = JSON.parse(raw) as ApiErrorBody;
    } catch {
      body = { code: "http_" + response.status, message: `HTTP ${response.status} ${response.statusText}` };
    }
    const error = new ApiError(response.status, body);
    if (
      response.status === 401 ||
      (response.status === 403 && (body.code === ErrorCode.NOT_AUTHENTICATED || body.code === ErrorCode.AUTHENTICATION_FAILED))
    ) {
      unauthorizedListeners.forEach((l) => l(error));
    }
    throw error;
  }
  if (options.text) return raw as T;
  return (raw ? JSON.parse(raw) : undefined) as T;
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>(path, { signal }),
  text: (path: string, signal?: AbortSignal) => request<string>(path, { signal, text: true }),
  post: <T>(path: string, body?: unknown) => request<T>(path, { method: "POST", body: body ?? {} }),
  patch: <T>(path: string, body: unknown) => request<T>(path, { method: "PATCH", body }),
  put: <T>(path: string, body: unknown) => request<T>(path, { method: "PUT", body }),
  del: (path: string) => request<void>(path, { method: "DELETE" }),
};

/** Query string from a record, skipping empty values. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
