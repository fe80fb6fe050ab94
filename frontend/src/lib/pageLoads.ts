// How many page data loads (useApi) have started since the app did. The live
// store reads it when its socket says it has joined: if no page had asked for
// anything yet, everything pages show was read after the subscription, and the
// snapshot need not make them fetch it again. No React here: the start-up
// chunk (live/early.ts, live/store.ts) reads it.

let started = 0;

export function pageLoadStarted(): void {
  started++;
}

export function pageLoadsStarted(): number {
  return started;
}
