// A page component loaded on first use, with a way to start loading it early.
//
// The build puts each page in its own chunk (issue 19): a page load then
// evaluates the app shell and the page it opens, not all of them (the single
// bundle was ~480 kB, most of it pages the load did not show). main.tsx
// starts fetching the page of the URL with the socket and the first API
// calls, so the chunk is there before the data is.
//
// Once the chunk is in, the page renders as a plain component: React.lazy
// suspends on its first render even when the module has already loaded (it
// cannot read a settled promise synchronously), and that suspension showed
// the fallback and rendered the page again in a later task.

import { createElement, lazy, type ComponentType } from "react";

export interface LazyPage<P extends object = object> {
  Page: ComponentType<P>;
  /** start loading the chunk (once; again after a failure) */
  preload: () => Promise<ComponentType<P>>;
}

export function lazyPage<P extends object = object>(load: () => Promise<ComponentType<P>>): LazyPage<P> {
  let loading: Promise<ComponentType<P>> | null = null;
  let loaded: ComponentType<P> | null = null;
  const preload = () => {
    loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        loading = null; // a failed fetch (a new deployment, the network) is tried again next time
        throw error;
      },
    );
    return loading;
  };
  const Lazy = lazy(() => preload().then((component) => ({ default: component })));
  function Page(props: P) {
    return createElement((loaded ?? Lazy) as ComponentType<P>, props);
  }
  return { Page, preload };
}
