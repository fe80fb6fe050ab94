import { afterEach, describe, expect, it } from "vitest";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { draftOf, emptyDraft, entryNames, errorsByNode, issueRecord, liveDrafts, slotsError, toEdits, type LiveEntry } from "./nodeConfigDraft";

const live = (over: Partial<LiveEntry> & { name: string }): LiveEntry => ({
  has_entry: true, hami_vnpu_core: false, v_device_count: null, filter_uuids: [], ...over,
});

afterEach(() => setCurrentI18n(makeI18n("en", ENGLISH)));

describe("node config draft", () => {
  it("starts from the live entries, in node order, leaving out nodes without one", () => {
    const drafts = liveDrafts([
      live({ name: "b", hami_vnpu_core: true, v_device_count: 8, filter_uuids: ["U2", "U1"] }),
      live({ name: "c", has_entry: false }),
      live({ name: "a", hami_vnpu_core: null }),
    ]);
    expect(drafts).toEqual([
      { name: "a", mode: "keep", slots: "", ignore: [] },
      { name: "b", mode: "hami-core", slots: "8", ignore: ["U1", "U2"] },
    ]);
  });

  it("sends only the nodes and values that changed", () => {
    const bases = new Map(
      [live({ name: "a", v_device_count: 4 }), live({ name: "b", filter_uuids: ["U1"] }), live({ name: "c" })].map((e) => [e.name, draftOf(e)]),
    );
    const edits = toEdits(
      [
        { name: "a", mode: "template", slots: "", ignore: [] }, // slot count cleared: 0
        { name: "b", mode: "hami-core", slots: "", ignore: ["U1"] }, // mode only
        { name: "c", mode: "template", slots: "", ignore: [], remove: true },
        { name: "d", mode: "keep", slots: "6", ignore: ["U9"] }, // a new entry
        { name: "e", mode: "keep", slots: "", ignore: [], remove: true }, // new and removed: nothing
      ],
      bases,
    );
    expect(edits).toEqual([
      { name: "a", v_device_count: 0 },
      { name: "b", hami_vnpu_core: true },
      { name: "c", remove: true },
      { name: "d", hami_vnpu_core: null, v_device_count: 6, filter_uuids: ["U9"] },
    ]);
    expect(toEdits([...bases.values()], bases)).toEqual([]);
  });

  it("checks the slot count before sending", () => {
    expect(slotsError("")).toBeNull();
    expect(slotsError("7")).toBeNull();
    expect(slotsError("0")).not.toBeNull();
    expect(slotsError("two")).not.toBeNull();
  });

  it("says what is wrong with a slot count in the UI's language", async () => {
    expect(slotsError("0")).toBe("A whole number above 0, or empty for the default.");
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    expect(slotsError("two")).toBe("请输入大于 0 的整数，或留空使用默认值。");
  });

  it("puts the API's errors on the node and field they name, by the text's entries or by the edits", () => {
    const entries = entryNames(JSON.stringify({ nodes: [{ name: "a" }, { name: "b", vDeviceCount: 9 }] }));
    expect(entries).toEqual([{ name: "a" }, { name: "b" }]);
    expect(entryNames("nodes: [")).toEqual([]);
    const errors = errorsByNode(
      issueRecord([
        { field: "nodes[1].vDeviceCount", message: "templates cannot fill 9 slots" },
        { field: "nodes[0].filterDevices.uuid[0]", message: "not on node a" },
        { field: "", message: "the file is empty" },
      ]),
      entries,
    );
    expect(errors.get("b")?.get("slots")).toEqual(["templates cannot fill 9 slots"]);
    expect(errors.get("a")?.get("ignore")).toEqual(["not on node a"]);
    expect(errors.get("")?.get("")).toEqual(["the file is empty"]);
    const byEdit = errorsByNode({ "nodes[0].v_device_count": ["above 2147483647"], text: ["bad"] }, [emptyDraft("z")]);
    expect(byEdit.get("z")?.get("slots")).toEqual(["above 2147483647"]);
    expect(byEdit.get("")?.get("")).toEqual(["text: bad"]);
  });
});
