/**
 * Stop-and-start of the server, one at a time, and the stop of a client that may be starting. Free of
 * VS Code, so unit-tested without it.
 */

/**
 * Restarts one at a time. Two at once (Restart Server pressed while another restart, or the
 * activation's start, was still probing) left a client that nobody stopped, or stopped the one the
 * other had just started.
 */
export class Restarts {
  private current: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly restart: () => Promise<void>) {}

  /** Restart Server: the restart in flight (or the one queued after it), else a new one. Pressed twice, it restarts once. */
  join(): Promise<void> {
    return this.queued ?? this.current ?? this.queue();
  }

  /**
   * A changed setting, trust granted: a restart that begins after the one in flight, which may have read
   * the settings before the change. The requests made while it waits share it.
   */
  queue(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.current) return this.begin();
    const next = (): Promise<void> => {
      this.queued = undefined;
      return this.begin();
    };
    this.queued = this.current.then(next, next);
    return this.queued;
  }

  /** Resolves when no restart is in flight or queued (deactivation stops the server after them). */
  async settled(): Promise<void> {
    for (let pending = this.queued ?? this.current; pending; pending = this.queued ?? this.current) {
      await pending.catch(() => undefined);
    }
  }

  private begin(): Promise<void> {
    const run: Promise<void> = this.restart().finally(() => {
      if (this.current === run) this.current = undefined;
    });
    this.current = run;
    return run;
  }
}

/** A language client as `retire` sees it. */
export interface Retiring {
  state(): "starting" | "running" | "stopped";
  /**
   * Its start, in flight or done (vscode-languageclient's `start()` joins it): settled only once the
   * client has registered the server's commands, which is after it reports running.
   */
  started(): Promise<void>;
  /** Stops it; never rejects. */
  stop(): Promise<void>;
  /** Ends its server process. */
  kill(): void;
}

/**
 * Stops a client that has been replaced, before the next one starts. A client cannot be stopped while
 * it starts (vscode-languageclient restarting, on its own, a server that exited), and one stopped when
 * it reports running, before its start has ended, registers the server's commands after the stop has
 * cleared them: the next client's start then failed ("command 'graphmend.applyAllFixes' already
 * exists"). So its start is waited for, `waitMs` at most; a start that takes longer has its server
 * ended, which ends the start, `waitMs` more at most. A replaced client restarts nothing (its error
 * handler says so), so once stopped it stays stopped.
 */
export async function retire(old: Retiring, waitMs: number): Promise<void> {
  if (old.state() === "stopped") return;
  const start = old.started().then(
    () => true,
    () => false, // it failed to start: nothing runs
  );
  let ran = await within(start, waitMs);
  if (ran === undefined) {
    old.kill();
    ran = await within(start, waitMs);
  }
  if (ran && old.state() === "running") await old.stop();
}

/** `promise`'s value, or undefined after `ms`. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
