// A small client-side router on the History API: the app has a handful of flat
// routes, so a dependency would add more than it saves. Django answers every
// one of these paths with index.html (vnpuportal/spa.py).

import { useCallback, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

const listeners = new Set<() => void>();
function notify() {
  listeners.forEach((l) => l());
}
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function current(): string {
  return window.location.pathname + window.location.search;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === current()) return;
  if (options.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  notify();
}

export interface Location {
  path: string;
  search: URLSearchParams;
}

export function useLocation(): Location {
  const href = useSyncExternalStore(subscribe, current, () => "/");
  const [path, query = ""] = href.split("?");
  return { path: path || "/", search: new URLSearchParams(query) };
}

/** A query parameter as state: setting it replaces the URL (filters are shareable links). */
export function useQueryParam(name: string, fallback = ""): [string, (value: string) => void] {
  const { search } = useLocation();
  const value = search.get(name) ?? fallback;
  const set = useCallback(
    (next: string) => {
      const params = new URLSearchParams(window.location.search);
      if (next === "" || next === fallback) params.delete(name);
      else params.set(name, next);
      const text = params.toString();
      navigate(window.location.pathname + (text ? `?${text}` : ""), { replace: true });
    },
    [name, fallback],
  );
  return [value, set];
}

export function Link({
  to,
  onClick,
  ...rest
}: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={handle} {...rest} />;
}
