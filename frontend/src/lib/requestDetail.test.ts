import { afterEach, describe, expect, it } from "vitest";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { chipNote, currentStep, splitWords, submitBody, timeline, type SubmitForm } from "./requestDetail";

const base = {
  state: "pending" as const,
  created_at: "2026-01-01T10:00:00Z",
  reserved_at: null,
  admitted_at: null,
  running_at: null,
  finished_at: null,
};

describe("timeline", () => {
  it("follows the request's times in order", () => {
    const steps = timeline({ ...base, state: "running", reserved_at: "2026-01-01T10:00:05Z", admitted_at: "2026-01-01T10:00:06Z", running_at: "2026-01-01T10:00:09Z" });
    expect(steps.map((s) => s.key)).toEqual(["submitted", "reserved", "admitted", "running", "finished"]);
    expect(steps.map((s) => s.at !== null)).toEqual([true, true, true, true, false]);
    expect(currentStep(steps)).toBe("running");
  });
  it("names the final state", () => {
    const steps = timeline({ ...base, state: "failed", finished_at: "2026-01-01T10:01:00Z" });
    expect(steps[4].label).toBe("Finished (failed)");
    expect(currentStep(steps)).toBe("finished");
  });
  it("starts at submitted", () => {
    expect(currentStep(timeline(base))).toBe("submitted");
  });
  it("speaks the current language", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    const steps = timeline({ ...base, state: "failed", finished_at: "2026-01-01T10:01:00Z" });
    expect(steps.map((s) => s.label)).toEqual(["已提交", "已预留", "Pod 已创建", "已绑定 · 运行中", "已结束（失败）"]);
    expect(chipNote({ state: "admitted", chip_uuid: null })).toMatch(/^绑定前未知：.*Volcano/);
  });
});

afterEach(() => setCurrentI18n(makeI18n("en", ENGLISH)));

describe("chipNote", () => {
  it("says why the chip is unknown before the bind", () => {
    expect(chipNote({ state: "admitted", chip_uuid: null })).toMatch(/Volcano/);
    expect(chipNote({ state: "pending", chip_uuid: null })).toMatch(/waits/);
    expect(chipNote({ state: "running", chip_uuid: "U1" })).toBeNull();
  });
});

describe("splitWords", () => {
  it("splits on spaces and keeps quoted words whole", () => {
    expect(splitWords(`sh -c "sleep 30; echo done"`)).toEqual(["sh", "-c", "sleep 30; echo done"]);
    expect(splitWords("  python  train.py '' ")).toEqual(["python", "train.py", ""]);
    expect(splitWords("")).toEqual([]);
  });
});

describe("submitBody", () => {
  const form: SubmitForm = {
    cluster: 3,
    namespace: " ci ",
    queue: "",
    chip_type: "Ascend310P",
    size: "memory",
    memory: "3072",
    template: "vir02",
    priority: "",
    image: "busybox",
    command: "sleep 60",
    time_limit: "",
  };
  it("sends memory, leaves out what is empty", () => {
    expect(submitBody(form)).toEqual({
      cluster: "3",
      namespace: "ci",
      chip_type: "Ascend310P",
      memory: 3072,
      workload: { image: "busybox", command: ["sleep", "60"] },
    });
  });
  it("sends a template or a whole card instead, and the time limit", () => {
    const body = submitBody({ ...form, size: "template", time_limit: "600", queue: "ci", priority: "high" });
    expect(body.template).toBe("vir02");
    expect(body.memory).toBeUndefined();
    expect(body).toMatchObject({ time_limit_seconds: 600, queue: "ci", priority: "high" });
    expect(submitBody({ ...form, size: "whole_card" }).whole_card).toBe(true);
  });
  it("sends a number it cannot read as text, for the API to name", () => {
    expect(submitBody({ ...form, memory: "3 GB" }).memory).toBe("3 GB");
  });
});
