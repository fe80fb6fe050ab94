import { describe, expect, it } from "vitest";
import { changedFields, isAllowedName, isDirty, parseIntField, rebase, templateNameOptions } from "./drafts";

describe("drafts", () => {
  it("parses integer fields for the API, leaving junk for the API to name", () => {
    expect(parseIntField(" 3072 ", false)).toBe(3072);
    expect(parseIntField("", true)).toBeNull();
    expect(parseIntField("", false)).toBe("");
    expect(parseIntField("3 GB", false)).toBe("3 GB");
  });

  it("keeps the user's edits when the server value moves", () => {
    const d = rebase(undefined, { memory: "3072" });
    expect(isDirty(d)).toBe(false);
    const edited = { ...d, value: { memory: "2048" } };
    expect(changedFields(edited)).toEqual(["memory"]);
    expect(rebase(edited, { memory: "4096" }).value.memory).toBe("2048");
    expect(rebase(d, { memory: "4096" }).value.memory).toBe("4096");
  });

  it("offers the allowed template names no other template uses", () => {
    const allowed = ["vir01", "vir02", "vir04", "vir04_3c"];
    // the new row: every allowed name not taken
    expect(templateNameOptions(allowed, ["vir01", "vir02"])).toEqual(["vir04", "vir04_3c"]);
    // an existing row keeps its own name among the options
    expect(templateNameOptions(allowed, ["vir01", "vir02"], "vir02")).toEqual(["vir02", "vir04", "vir04_3c"]);
    // drafts being typed count by their trimmed text; empty ones take nothing
    expect(templateNameOptions(allowed, [" vir04 ", ""])).toEqual(["vir01", "vir02", "vir04_3c"]);
    expect(templateNameOptions(undefined, ["vir01"])).toEqual([]);
  });

  it("tells whether a typed name is allowed, leaving unknown cases to the API", () => {
    const allowed = ["vir01", "vir02"];
    expect(isAllowedName("vir01", allowed)).toBe(true);
    expect(isAllowedName(" vir02 ", allowed)).toBe(true);
    expect(isAllowedName("vir03", allowed)).toBe(false);
    expect(isAllowedName("", allowed)).toBe(true);
    expect(isAllowedName("anything", [])).toBe(true);
    expect(isAllowedName("anything", undefined)).toBe(true);
  });
});
