import { describe, expect, it } from "vitest";
import { shortUuid } from "./format";

describe("shortUuid", () => {
  it("keeps the first group of a dashed UUID", () => {
    expect(shortUuid("94E3BF91-923A7369-A38FD547-301850C5-5F557203")).toBe("94E3BF91…");
  });
  it("leaves an undashed id whole and shows a dash for none", () => {
    expect(shortUuid("chip-less")).toBe("chip…");
    expect(shortUuid("ABCDEF")).toBe("ABCDEF");
    expect(shortUuid(null)).toBe("–");
    expect(shortUuid("")).toBe("–");
  });
});
