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
 * Trouble stays on the status item until the user starts the server again (Restart Server, a changed
 * setting): a server restarted after it exited, or one still running after an internal error, is no
 * proof that the trouble is gone, and the output says what happened. Each start has a number that its
 * client's reports carry: a client the user stopped still reports ("Server process exited with code
 * 0" comes after `stop()` resolves), and that is no trouble.
 */
export class ServerHealth {
  private state: ServerState = "starting";
  private source = "";
  private trouble: string | undefined;
  private current = 0;

  /** The user starts the server (activation, Restart Server, a changed setting): trouble is forgotten. */
  start(): number {
    this.state = "starting";
    this.source = "";
    this.trouble = undefined;
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
  }

  /** Something went wrong: true the first time since the user's last start (show the output then, once). */
  troubled(start: number, what: string): boolean {
    if (start !== this.current || this.trouble !== undefined) return false;
    this.trouble = what;
    return true;
  }

  get view(): { text: string; tooltip: string } {
    const server = this.source ? `graphmend-lsp (${this.source})` : "graphmend-lsp";
    if (this.trouble !== undefined) {
      const now = { starting: "is starting", running: "is running", stopped: "is not running" }[this.state];
      return {
        text: "$(error) graphmend",
        tooltip: `${this.trouble}\n${server} ${now}. Click to show the output; graphmend: Restart Server clears this.`,
      };
    }
    if (this.state === "running") return { text: "$(check) graphmend", tooltip: server };
    if (this.state === "stopped") return { text: "$(circle-slash) graphmend", tooltip: `${server} stopped` };
    return { text: "$(sync~spin) graphmend", tooltip: `Starting ${server}` };
  }
}
