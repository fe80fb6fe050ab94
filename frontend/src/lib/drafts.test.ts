import { describe, expect, it } from "vitest";
import { allowedNames, changedFields, isDirty, parseIntField, rebase } from "./drafts";

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

  it("reads the allowed template names out of the API's message", () => {
    expect(allowedNames(["Ascend310P template vir03: vir03 is not a template name ascend-docker-runtime accepts (allowed: vir01, vir02, vir04)"])).toEqual([
      "vir01",
      "vir02",
      "vir04",
    ]);
    expect(allowedNames(["memory must be greater than 0"])).toEqual([]);
  });
});
