// The cluster the app showed last, kept in localStorage: the next load selects
// it, and main.tsx opens its live socket before React renders (live/early.ts).
// No React here, so that the start-up chunk can read it.

const STORAGE_KEY = "vnpu.cluster";
// Where the early socket kept the cluster shown last, before this one key
// served both: the same meaning, so it is moved here once.
const LEGACY_KEY = "vnpu.live-cluster";

export function rememberedCluster(): number | null {
  try {
    const storage = window.localStorage;
    const legacy = storage.getItem(LEGACY_KEY);
    if (legacy !== null) {
      storage.setItem(STORAGE_KEY, legacy);
      storage.removeItem(LEGACY_KEY);
    }
    const value = Number(storage.getItem(STORAGE_KEY));
    return Number.isInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

export function rememberCluster(id: number): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, String(id));
  } catch {
    /* private mode: the first cluster next time, and no early socket */
  }
}
