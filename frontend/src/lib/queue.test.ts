import { describe, expect, it } from "vitest";
import { asked, booked, canCancel, canDecide, lostTime, reasonError, requestBadge } from "./queue";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";

describe("lostTime", () => {
  it("formats running time lost", () => {
    expect(lostTime(0)).toBe("0s");
    expect(lostTime(42.4)).toBe("42s");
    expect(lostTime(300)).toBe("5m");
    expect(lostTime(3 * 3600 + 120)).toBe("3h 2m");
    expect(lostTime(null)).toBe("–");
    expect(lostTime(Number.NaN)).toBe("–");
  });
});

describe("canCancel", () => {
  const mine = { state: "pending" as const, submitted_by: "op" };
  it("lets operators cancel only their own unfinished requests", () => {
    expect(canCancel("operator", "op", mine)).toBe(true);
    expect(canCancel("operator", "op", { ...mine, state: "running" })).toBe(true);
    expect(canCancel("operator", "other", mine)).toBe(false);
    expect(canCancel("operator", "op", { ...mine, state: "succeeded" })).toBe(false);
  });
  it("lets the ci role cancel its own unfinished requests only", () => {
    expect(canCancel("ci", "op", mine)).toBe(true);
    expect(canCancel("ci", "other", mine)).toBe(false);
  });
  it("lets admins cancel any unfinished request, viewers none", () => {
    expect(canCancel("admin", "root", mine)).toBe(true);
    expect(canCancel("admin", "root", { ...mine, state: "cancelled" })).toBe(false);
    expect(canCancel("viewer", "op", mine)).toBe(false);
    expect(canCancel(null, "op", mine)).toBe(false);
  });
});

describe("canDecide", () => {
  it("is for admins on pending proposals only", () => {
    expect(canDecide("admin", { state: "pending" })).toBe(true);
    expect(canDecide("admin", { state: "approved" })).toBe(false);
    expect(canDecide("operator", { state: "pending" })).toBe(false);
    expect(canDecide("viewer", { state: "pending" })).toBe(false);
  });
});

describe("request fields", () => {
  it("shows what was asked and booked", () => {
    expect(asked({ template: "vir02", memory: null, whole_card: false })).toBe("vir02");
    expect(asked({ template: "", memory: 3072, whole_card: false })).toBe("3 GiB");
    expect(asked({ template: "", memory: null, whole_card: true })).toBe("whole card");
    expect(booked({ template_booked: "vir02", memory_booked: 6144 })).toBe("vir02 · 6 GiB");
    expect(booked({ template_booked: "", memory_booked: null })).toBe("–");
    expect(requestBadge("running")).toBe("ok");
    expect(requestBadge("failed")).toBe("fail");
  });
  it("requires a reason", () => {
    expect(reasonError("")).toBe("A reason is required.");
    expect(reasonError("   ")).toBe("A reason is required.");
    expect(reasonError("needed for release")).toBeNull();
  });
  it("says them in the current language", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    try {
      expect(reasonError("")).toBe("必须填写原因。");
      expect(asked({ template: "", memory: null, whole_card: true })).toBe("整卡");
    } finally {
      setCurrentI18n(makeI18n("en", ENGLISH));
    }
  });
});
