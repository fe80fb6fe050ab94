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

describe("the key the early socket used before", () => {
  it("is moved to the one key, and wins: it held the cluster shown last", () => {
    window.localStorage.setItem("vnpu.cluster", "3"); // picked, then maybe deleted
    window.localStorage.setItem("vnpu.live-cluster", "5"); // shown last
    expect(rememberedCluster()).toBe(5);
    expect(window.localStorage.getItem("vnpu.live-cluster")).toBeNull();
    expect(window.localStorage.getItem("vnpu.cluster")).toBe("5");
  });

  it("is enough alone (a user who never picked a cluster)", () => {
    window.localStorage.setItem("vnpu.live-cluster", "7");
    expect(rememberedCluster()).toBe(7);
    expect(rememberedCluster()).toBe(7);
  });
});
