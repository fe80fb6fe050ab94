import { afterEach, describe, expect, it } from "vitest";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import type { Queue } from "../api/types";
import { accessSummary, byValue, policySummary, quotaBody, quotaErrors, quotaRows, splitList, volcanoView } from "./quotas";

const policy: Parameters<typeof policySummary>[0] = { allowed_namespaces: [], pod_security: "baseline", allowed_service_accounts: ["runner"], allowed_secrets: [], allowed_config_maps: ["cfg"] };
const access: Pick<Queue, "open_to_all" | "members" | "member_groups" | "max_priority" | "system_priority_classes"> = { open_to_all: false, members: ["alice"], member_groups: ["ml"], max_priority: 5000, system_priority_classes: ["system-cluster-critical"] };

afterEach(async () => {
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

describe("quotaRows", () => {
  it("merges quotas and usage by chip type; usage without a quota is unlimited", () => {
    const rows = quotaRows({
      quotas: [{ chip_type: "B", memory_limit: 100, slots_limit: null }],
      usage: [
        { chip_type: "A", memory_used: 5, slots_used: 1, pending: 2, running: 1 },
        { chip_type: "B", memory_used: 50, slots_used: 2, pending: 0, running: 2 },
      ],
    });
    expect(rows).toEqual([
      { chipType: "A", memoryLimit: null, slotsLimit: null, memoryUsed: 5, slotsUsed: 1, pending: 2, running: 1 },
      { chipType: "B", memoryLimit: 100, slotsLimit: null, memoryUsed: 50, slotsUsed: 2, pending: 0, running: 2 },
    ]);
  });
});

describe("volcanoView", () => {
  it("reads Open as ok, Missing as a warning, other states as failures with their reason", () => {
    expect(volcanoView({ state: "Open", managed: true, capability: {}, reason: "" }).kind).toBe("ok");
    expect(volcanoView({ state: "Missing", managed: false, capability: {}, reason: "r" })).toEqual({ kind: "warn", label: "Missing", detail: "r" });
    expect(volcanoView({ state: "Closing", managed: false, capability: {}, reason: "fix" })).toEqual({ kind: "fail", label: "Closing", detail: "fix" });
    expect(volcanoView({ state: "", managed: false, capability: {}, reason: "not watched" }).label).toBe("not known");
    expect(volcanoView(null).label).toBe("not known");
  });
});

describe("the summaries in words", () => {
  it("say the pod policy and who may submit, in English", () => {
    expect(policySummary(policy)).toEqual({ namespaces: "default only", podSecurity: "baseline", serviceAccounts: "runner", secrets: "none", configMaps: "cfg" });
    expect(accessSummary(access)).toEqual({ who: "members alice, group ml", priority: "up to 5000 and system-cluster-critical" });
    expect(accessSummary({ ...access, open_to_all: true, max_priority: null, system_priority_classes: [] })).toEqual({ who: "everyone", priority: "up to 1000000000" });
    expect(volcanoView({ state: "Open", managed: true, capability: {}, reason: "" }).detail).toBe("created by the portal");
  });
  it("follow the UI's language, leaving names and Volcano's states as they are", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    expect(policySummary(policy)).toEqual({ namespaces: "仅 default", podSecurity: "baseline", serviceAccounts: "runner", secrets: "无", configMaps: "cfg" });
    expect(accessSummary(access)).toEqual({ who: "成员 alice, 组 ml", priority: "最高 5000，以及 system-cluster-critical" });
    expect(accessSummary({ ...access, members: [], member_groups: [] }).who).toBe("仅管理员");
    expect(volcanoView(null).label).toBe("未知");
    expect(volcanoView({ state: "Missing", managed: false, capability: {}, reason: "r" }).label).toBe("缺失");
    expect(volcanoView({ state: "Open", managed: true, capability: {}, reason: "" })).toEqual({ kind: "ok", label: "Open", detail: "由门户创建" });
  });
});

describe("quota editor", () => {
  it("sends empty limits as null and non-numbers as typed", () => {
    expect(quotaBody([{ chip_type: "A", memory_limit: " 4096 ", slots_limit: "" }, { chip_type: "B", memory_limit: "1.5", slots_limit: "2" }])).toEqual({
      quotas: [
        { chip_type: "A", memory_limit: 4096, slots_limit: null },
        { chip_type: "B", memory_limit: "1.5", slots_limit: 2 },
      ],
    });
  });
  it("maps quotas[i].field onto its row and everything else above the rows", () => {
    expect(quotaErrors({ errors: { "quotas[2].chip_type": ["no chip type"], quotas: ["chip type 'A' appears twice"], cluster: ["gone"] } })).toEqual({
      rows: { "2.chip_type": ["no chip type"] },
      form: ["chip type 'A' appears twice", "cluster: gone"],
    });
    expect(quotaErrors({ errors: { "quotas.1.slots_limit": ["Ensure this value is greater than or equal to 0."] } }).rows).toEqual({
      "1.slots_limit": ["Ensure this value is greater than or equal to 0."],
    });
    expect(quotaErrors({ message: "Forbidden." })).toEqual({ rows: {}, form: ["Forbidden."] });
  });
  it("splits a namespace list on commas and spaces", () => {
    expect(splitList(" ci, batch  ml ,")).toEqual(["ci", "batch", "ml"]);
  });
});

describe("byValue", () => {
  it("puts the highest value first, ties by name", () => {
    expect(byValue([{ name: "b", value: 1 }, { name: "c", value: 9 }, { name: "a", value: 1 }]).map((c) => c.name)).toEqual(["c", "a", "b"]);
  });
});
