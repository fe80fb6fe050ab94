import { beforeEach, describe, expect, it } from "vitest";
import { rememberCluster, rememberedCluster } from "./rememberedCluster";

beforeEach(() => window.localStorage.clear());

describe("the remembered cluster", () => {
  it("is none until one is shown, then the last one shown", () => {
    expect(rememberedCluster()).toBeNull();
    rememberCluster(3);
    rememberCluster(12);
    expect(rememberedCluster()).toBe(12);
  });

  it("ignores a stored value that is not a cluster id", () => {
    for (const junk of ["", "abc", "0", "-4", "2.5", "1e400"]) {
      window.localStorage.setItem("vnpu.cluster", junk);
      expect(rememberedCluster()).toBeNull();
    }
  });
});
