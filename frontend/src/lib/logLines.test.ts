import { describe, expect, it } from "vitest";
import { LogBuffer, logText, parseLine } from "./logLines";

const T = (s: number, ns = "000000000") => `2026-12-06T20:00:0${s}.${ns}Z`;

describe("parseLine", () => {
  it("splits the kubelet's timestamp from the text", () => {
    expect(parseLine(`${T(1)} hello world`)).toEqual({ stamp: T(1), text: "hello world" });
    expect(parseLine("no stamp here")).toEqual({ stamp: "", text: "no stamp here" });
  });
});

describe("LogBuffer", () => {
  it("keeps a line cut between two pieces until its end", () => {
    const b = new LogBuffer();
    b.push(`${T(1)} one\n${T(2)} tw`);
    expect(b.lines.map((l) => l.text)).toEqual(["one"]);
    b.push("o\n");
    b.push(`${T(3)} three`);
    b.end();
    expect(logText(b.lines, false)).toBe("one\ntwo\nthree");
    expect(logText(b.lines, true)).toBe(`${T(1)} one\n${T(2)} two\n${T(3)} three`);
  });

  it("resumes from the last timestamp and drops the lines already shown", () => {
    const b = new LogBuffer();
    b.push(`${T(1)} a\n${T(2, "100000000")} b\n${T(2, "200000000")} c\n${T(3)} partial`);
    const since = b.resume();
    expect(since).toBe(T(2, "200000000"));
    // the API server answers from the start of that second: b and c again, then new lines
    b.push(`${T(2, "100000000")} b\n${T(2, "200000000")} c\n${T(3)} partial line\n${T(4)} c\n`);
    expect(b.lines.map((l) => l.text)).toEqual(["a", "b", "c", "partial line", "c"]);
  });

  it("resumes exactly too (nothing repeated by the server)", () => {
    const b = new LogBuffer();
    b.push(`${T(1)} a\n`);
    b.resume();
    b.push(`${T(2)} b\n`);
    expect(b.lines.map((l) => l.text)).toEqual(["a", "b"]);
  });

  it("keeps the last lines only, and counts those left out", () => {
    const b = new LogBuffer(3);
    b.push(["1", "2", "3", "4", "5"].map((n) => `${T(1)} line ${n}\n`).join(""));
    expect(b.lines.map((l) => l.text)).toEqual(["line 3", "line 4", "line 5"]);
    expect(b.dropped).toBe(2);
    b.reset();
    expect([b.lines.length, b.dropped]).toEqual([0, 0]);
  });
});
