import { describe, expect, it } from "vitest";
import { emptyDraft, errorsByNode, slotsError, toEntries } from "./nodeConfigDraft";

describe("node config draft", () => {
  it("sends only the keys a node's draft sets, with the plugin's names, in node order", () => {
    const entries = toEntries([
      { name: "b", mode: "hami-core", slots: " 8 ", ignore: ["U2", "U1"] },
      emptyDraft("a"),
      { name: "c", mode: "template", slots: "", ignore: [] },
    ]);
    expect(entries).toEqual([
      { name: "a" },
      { name: "b", "hami-vnpu-core": true, vDeviceCount: 8, filterDevices: { uuid: ["U1", "U2"] } },
      { name: "c", "hami-vnpu-core": false },
    ]);
  });

  it("checks the slot count before sending", () => {
    expect(slotsError("")).toBeNull();
    expect(slotsError("7")).toBeNull();
    expect(slotsError("0")).not.toBeNull();
    expect(slotsError("two")).not.toBeNull();
  });

  it("puts the API's errors on the node and field they name", () => {
    const entries = toEntries([emptyDraft("a"), emptyDraft("b")]);
    const errors = errorsByNode(
      { "nodes[1].vDeviceCount": ["templates cannot fill 9 slots"], "nodes[0].filterDevices.uuid[0]": ["not on node a"], text: ["bad"] },
      entries,
    );
    expect(errors.get("b")?.get("slots")).toEqual(["templates cannot fill 9 slots"]);
    expect(errors.get("a")?.get("ignore")).toEqual(["not on node a"]);
    expect(errors.get("")?.get("")).toEqual(["text: bad"]);
  });
});
