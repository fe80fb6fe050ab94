// A job's log as the request page shows it: lines with their kubelet
// timestamps, the last MAX_LINES of them, fed by a stream that may drop and
// resume. Resuming asks for `since_time` = the last timestamp shown (the API
// server may answer from the start of that second), and the lines already
// shown (same timestamp and text) are dropped, so nothing appears twice.

/** Lines the panel keeps (the oldest go first). */
export const MAX_LINES = 5000;

export interface LogLine {
  /** RFC 3339 with nanoseconds, UTC ("" for a line without one) */
  stamp: string;
  text: string;
}

const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (.*)$/s;

export function parseLine(raw: string): LogLine {
  const m = STAMPED.exec(raw);
  return m ? { stamp: m[1], text: m[2] } : { stamp: "", text: raw };
}

function raw(line: LogLine): string {
  return line.stamp ? `${line.stamp} ${line.text}` : line.text;
}

/** The second a stamp falls in (what the API server's sinceTime is cut to). */
function second(stamp: string): string {
  return stamp.slice(0, 19);
}

export class LogBuffer {
  lines: LogLine[] = [];
  /** lines left out at the top to keep at most `max` */
  dropped = 0;
  private partial = "";
  /** while resuming: the lines shown at or after the resume second */
  private skip: Set<string> | null = null;

  constructor(readonly max: number = MAX_LINES) {}

  /** Add streamed text; a line cut between two pieces waits for its end. */
  push(text: string): void {
    const all = this.partial + text;
    const cut = all.lastIndexOf("\n");
    if (cut < 0) {
      this.partial = all;
      return;
    }
    this.partial = all.slice(cut + 1);
    for (const line of all.slice(0, cut).split("\n")) this.add(line);
  }

  /** The stream ended: its last line, if it had no newline, is whole now. */
  end(): void {
    if (this.partial) this.add(this.partial);
    this.partial = "";
  }

  /**
   * The `since_time` to resume from ("" for the start), and from now on drop
   * the lines already shown until the first new one.
   */
  resume(): string {
    this.partial = "";
    const last = [...this.lines].reverse().find((l) => l.stamp)?.stamp ?? "";
    if (!last) {
      // nothing stamped shown: the whole log again, without what is shown
      this.skip = this.lines.length ? new Set(this.lines.map(raw)) : null;
      return "";
    }
    const from = second(last);
    this.skip = new Set(this.lines.filter((l) => l.stamp && second(l.stamp) >= from).map(raw));
    return last;
  }

  /** Forget everything (the kept log replaces the live one). */
  reset(): void {
    this.lines = [];
    this.dropped = 0;
    this.partial = "";
    this.skip = null;
  }

  private add(text: string): void {
    if (this.skip) {
      if (this.skip.has(text)) return;
      this.skip = null;
    }
    this.lines.push(parseLine(text));
    const over = this.lines.length - this.max;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }
}

/** The lines as text, with or without their timestamps. */
export function logText(lines: readonly LogLine[], stamps: boolean): string {
  return lines.map((l) => (stamps ? raw(l) : l.text)).join("\n");
}
