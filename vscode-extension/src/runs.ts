/**
 * Recorded runs (`graphmend record`) in the status bar, and the arguments a recording is given. Pure:
 * the text and tooltip are decided here, asking the server and showing them is the extension's job,
 * so the wording is unit-tested without VS Code.
 */

/** What the server's `graphmend/runStatus` answers (server/graphmend/lsp/runs.py); null: no run. */
export interface RunStatus {
  /** The run's folder name, `<stamp>-<pid>`. */
  run: string;
  /** Its path, under the project's .graphmend/runs/. */
  folder: string;
  /** When it ended, in seconds since the epoch (its age counts from there). */
  recordedAt: number;
  /** Its events at the project's lines. */
  events: number;
  /** Those whose line cannot be found any more: edited since the run. */
  stale: number;
  torch: string | null;
  /** How many runs recorded at the same time are shown together (absent from an older server: 1). */
  runs?: number;
}

/** How long ago, as the status bar says it: "just now", "5 min ago", "2 h ago", "3 days ago". */
export function age(seconds: number): string {
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86400);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

/** The status item for a run, `now` in milliseconds: "graphmend run: 5 min ago · 2 stale". */
export function runView(status: RunStatus, now: number): { text: string; tooltip: string } {
  const stale = status.stale ? ` · ${status.stale} stale` : "";
  const events = `${status.events} event${status.events === 1 ? "" : "s"} at your lines`;
  const staleLine = status.stale ? `, ${status.stale} stale: their line was edited since the run` : "";
  return {
    text: `graphmend run: ${age(Math.max(0, now / 1000 - status.recordedAt))}${stale}`,
    tooltip:
      `The newest recorded run, ${status.run}${status.torch ? ` (torch ${status.torch})` : ""}` +
      `${(status.runs ?? 1) > 1 ? `, with ${(status.runs ?? 1) - 1} more recorded at the same time` : ""}: ` +
      `${events}${staleLine}. Findings it met are marked confirmed. Click to show its folder.`,
  };
}

/** A command line's arguments as a shell splits them: on spaces, with '…' and "…" quoting and \ escapes. */
export function splitArguments(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined; // undefined between words; "" for a quoted empty argument
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
    } else {
      word = (word ?? "") + (c === "\\" && i + 1 < line.length ? line[++i] : c);
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
