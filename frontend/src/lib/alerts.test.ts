import { afterEach, describe, expect, it } from "vitest";
import type { AlertList } from "../api/types";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { labelOf, SEVERITY_LABEL, sourceNote, STATE_LABEL } from "./alerts";

const base: AlertList = { source: "alertmanager", notifications_configured: true, error: null, alerts: [], not_evaluated: [] };

afterEach(() => setCurrentI18n(makeI18n("en", ENGLISH)));

describe("sourceNote", () => {
  it("says nothing when Alertmanager answered", () => {
    expect(sourceNote(base)).toBeNull();
  });

  it("shows the API's error as it comes", () => {
    expect(sourceNote({ ...base, error: { code: "alertmanager_unavailable", message: "Alertmanager could not be reached." } })).toEqual({
      kind: "error",
      text: "No alerts shown: Alertmanager could not be reached.",
    });
  });

  it("names the conditions it cannot evaluate, in agreement with their number", () => {
    const portal = { ...base, source: "portal", notifications_configured: false } as AlertList;
    expect(sourceNote(portal)?.text).toMatch(/^Notifications are not configured .* as true now\.$/);
    expect(sourceNote({ ...portal, not_evaluated: ["A"] })?.text).toMatch(/ A needs Prometheus and is not shown\.$/);
    expect(sourceNote({ ...portal, not_evaluated: ["A", "B"] })?.text).toMatch(/ A, B need Prometheus and are not shown\.$/);
  });

  it("follows the UI's language, and leaves an unknown severity or state as it comes", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    expect(sourceNote({ ...base, error: { code: "x", message: "无法连接" } })?.text).toBe("未显示告警：无法连接");
    expect(labelOf(SEVERITY_LABEL, "warning")).toBe("警告");
    expect(labelOf(STATE_LABEL, "suppressed")).toBe("已抑制");
    expect(labelOf(STATE_LABEL, "pending")).toBe("pending");
  });
});
