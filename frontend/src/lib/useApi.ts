// Fetching for pages: one hook that loads, reloads on its deps, and keeps the
// previous data while a refetch runs (no flicker on live refreshes).

import { useCallback, useEffect, useRef, useState } from "react";
import { pageLoadStarted } from "./pageLoads";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useApi<T>(
  load: ((signal: AbortSignal) => Promise<T>) | null,
  deps: readonly unknown[],
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState<boolean>(!!load);
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const fn = loadRef.current;
    if (!fn) {
      setLoading(false);
      return undefined;
    }
    const controller = new AbortController();
    setLoading(true);
    pageLoadStarted();
    fn(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted || (err as Error)?.name === "AbortError") return;
        setError(err);
        setLoading(false);
      },
    );
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, nonce]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** A value that follows `value` after it stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const handle = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(handle);
  }, [value, ms]);
  return debounced;
}

/** Re-render every `ms` (for "5s ago" labels). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const handle = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(handle);
  }, [ms]);
  return now;
}

/**
 * Run `fn` when `tick` changes, at most once per `ms` (trailing call kept), to
 * refetch on live events without hammering the API during a burst.
 */
export function useThrottledEffect(fn: () => void, tick: number, ms: number): void {
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const wait = last.current + ms - Date.now();
    if (wait <= 0) {
      last.current = Date.now();
      fnRef.current();
    } else if (!timer.current) {
      timer.current = setTimeout(() => {
        timer.current = null;
        last.current = Date.now();
        fnRef.current();
      }, wait);
    }
  }, [tick, ms]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
}

/**
 * Keep a list fresh: reload (at most once a second) when a live tick moves, and
 * poll every `pollMs` while the tab is visible, for changes no delta announces
 * (a request's position moving as others leave the queue).
 */
export function useLiveReload(reload: () => void, tick: number, pollMs = 5000): void {
  useThrottledEffect(reload, tick, 1000);
  useEffect(() => {
    const handle = setInterval(() => {
      if (!document.hidden) reload();
    }, pollMs);
    return () => clearInterval(handle);
  }, [reload, pollMs]);
}
