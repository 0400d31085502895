/**
 * What the status item says about the server. Pure: the extension feeds it the client's state, the
 * text the client writes to the output channel and unexpected exits, so the rules are unit-tested
 * without VS Code.
 */

export type ServerState = "starting" | "running" | "stopped";

/**
 * What in the client's output says the server is in trouble, shortened for the tooltip: an Error line
 * (the server's `graphmend internal error: ...` log messages, failed requests) or a Python traceback
 * on the server's stderr (the exception's line). Undefined for everything else.
 */
export function troubleIn(text: string): string | undefined {
  const logged = /^\[Error\s*-[^\]]*\] (.+)$/m.exec(text);
  if (logged) return shorten(logged[1]);
  if (!text.includes("Traceback (most recent call last)")) return undefined;
  const exception = /^([\w.]+(?:Error|Exception|Exit|Interrupt)\b.*)$/m.exec(text.slice(text.indexOf("Traceback")));
  return shorten(exception ? `a Python traceback: ${exception[1]}` : "a Python traceback");
}

function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * What became of a server that exited: vscode-languageclient's error handler decides whether to restart
 * it ("pending"), the client then starts a new one ("starting"), which runs ("done") or does not
 * ("failed"); "refused" after too many exits (the default handler: 5 in 3 minutes).
 */
type Restart = "pending" | "starting" | "done" | "failed" | "refused";

const AFTER_EXIT: Record<Restart, string> = {
  pending: "; it is being restarted",
  starting: "; it is being restarted",
  done: " and was restarted",
  failed: "; restarting it failed",
  refused: " and was not restarted (it exited 5 times within 3 minutes)",
};

/**
 * Trouble stays on the status item until the user starts the server again (Restart Server, a changed
 * setting): a server restarted after it exited, or one still running after an internal error, is no
 * proof that the trouble is gone, and the output says what happened. An exit is told apart from other
 * trouble, so that the tooltip never calls a dead server running: it says how the process exited and
 * what became of it. Each start has a number that its client's reports carry: a client the user
 * stopped still reports (its process's exit, code 0, comes after `stop()` resolves), and that is no
 * trouble.
 */
export class ServerHealth {
  private state: ServerState = "starting";
  private source = "";
  private trouble: string | undefined;
  private exit: { how: string; restart?: Restart } | undefined;
  private current = 0;
  private seen = false; // trouble or an exit since the user's last start: the output was shown

  /** The user starts the server (activation, Restart Server, a changed setting): trouble is forgotten. */
  start(): number {
    this.state = "starting";
    this.source = "";
    this.trouble = undefined;
    this.exit = undefined;
    this.seen = false;
    return ++this.current;
  }

  /** The user stops the server: from now on its client's reports do not count. */
  stop(): void {
    this.current++;
  }

  /** The client's state, and which command it runs. */
  changed(start: number, state: ServerState, source: string): void {
    if (start !== this.current) return;
    this.state = state;
    this.source = source;
    const restart = this.exit?.restart;
    if (!this.exit || (restart !== "pending" && restart !== "starting")) return;
    if (state === "running") this.exit.restart = "done";
    else if (state === "starting") this.exit.restart = "starting";
    // Stopped while pending is the client's way into its restart; once starting, the restart failed.
    else if (restart === "starting") this.exit.restart = "failed";
  }

  /** Something went wrong: true the first time since the user's last start (show the output then, once). */
  troubled(start: number, what: string): boolean {
    if (start !== this.current) return false;
    this.trouble ??= what;
    return this.firstSight();
  }

  /** The process exited ("signal SIGKILL", "code 1"); true as for `troubled`. */
  exited(start: number, how: string): boolean {
    const exit = this.exitOf(start);
    if (!exit) return false;
    exit.how = how;
    return this.firstSight();
  }

  /** The client's error handler has decided whether to restart the server that exited; true as for `troubled`. */
  closed(start: number, restarting: boolean): boolean {
    const exit = this.exitOf(start);
    if (!exit) return false;
    exit.restart = restarting ? "pending" : "refused";
    return this.firstSight();
  }

  private firstSight(): boolean {
    const first = !this.seen;
    this.seen = true;
    return first;
  }

  /** The exit being reported: a new one once the last one's restart has run or failed. */
  private exitOf(start: number): { how: string; restart?: Restart } | undefined {
    if (start !== this.current) return undefined;
    if (!this.exit || this.exit.restart === "done" || this.exit.restart === "failed") this.exit = { how: "" };
    return this.exit;
  }

  get view(): { text: string; tooltip: string } {
    const server = this.source ? `graphmend-lsp (${this.source})` : "graphmend-lsp";
    if (this.trouble !== undefined || this.exit !== undefined) {
      const now = this.exit
        ? `${server} exited${this.exit.how ? ` with ${this.exit.how}` : ""}${this.exit.restart ? AFTER_EXIT[this.exit.restart] : ""}`
        : `${server} ${{ starting: "is starting", running: "is running", stopped: "is not running" }[this.state]}`;
      return {
        text: "$(error) graphmend",
        tooltip: `${this.trouble ? `${this.trouble}\n` : ""}${now}. Click to show the output; graphmend: Restart Server clears this.`,
      };
    }
    if (this.state === "running") return { text: "$(check) graphmend", tooltip: server };
    if (this.state === "stopped") return { text: "$(circle-slash) graphmend", tooltip: `${server} stopped` };
    return { text: "$(sync~spin) graphmend", tooltip: `Starting ${server}` };
  }
}
