import { strict as assert } from "node:assert";
import { test } from "node:test";
import { Restarts, Retiring, retire } from "../restarts";

/** A restart that takes until `finish` is called, counting how many run and how many at once. */
function slowRestart() {
  const counts = { runs: 0, atOnce: 0, most: 0 };
  const finishers: (() => void)[] = [];
  const restarts = new Restarts(async () => {
    counts.runs++;
    counts.most = Math.max(counts.most, ++counts.atOnce);
    await new Promise<void>((resolve) => finishers.push(resolve));
    counts.atOnce--;
  });
  const finish = async (): Promise<void> => {
    await tick();
    finishers.shift()?.();
    await tick();
  };
  return { restarts, counts, finish };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("Restart Server pressed again while a restart is in flight joins it", async () => {
  const { restarts, counts, finish } = slowRestart();
  const first = restarts.join();
  const second = restarts.join();
  assert.equal(second, first);
  await finish();
  await Promise.all([first, second]);
  assert.equal(counts.runs, 1);
  // Once it has ended, a press restarts again.
  const third = restarts.join();
  assert.notEqual(third, first);
  await finish();
  await third;
  assert.equal(counts.runs, 2);
});

test("a changed setting restarts once more after the restart in flight; the requests meanwhile share it", async () => {
  const { restarts, counts, finish } = slowRestart();
  const activation = restarts.queue();
  const settingA = restarts.queue();
  const settingB = restarts.queue();
  const press = restarts.join(); // joins the queued one, which reads the new setting
  assert.notEqual(settingA, activation);
  assert.equal(settingB, settingA);
  assert.equal(press, settingA);
  assert.equal(counts.runs, 1);
  await finish();
  await activation;
  assert.equal(counts.runs, 2); // the queued one began when the first ended, not before
  await finish();
  await settingA;
  assert.equal(counts.runs, 2);
  assert.equal(counts.most, 1);
});

test("a restart that fails does not hold up the one queued after it", async () => {
  let runs = 0;
  const restarts = new Restarts(async () => {
    if (++runs === 1) throw new Error("the stop failed");
  });
  const failing = restarts.queue();
  const after = restarts.queue();
  await assert.rejects(failing, /the stop failed/);
  await after;
  assert.equal(runs, 2);
});

test("settled waits for the restart in flight and the one queued", async () => {
  const { restarts, counts, finish } = slowRestart();
  void restarts.queue();
  void restarts.queue();
  let settled = false;
  const waiting = restarts.settled().then(() => (settled = true));
  await finish();
  assert.equal(settled, false);
  await finish();
  await waiting;
  assert.equal(counts.runs, 2);
});

/** VS Code's command registry: a command registered twice throws ("command '...' already exists"). */
const commands = new Set<string>();

/**
 * A client as vscode-languageclient's: starting, it reports running, then registers the server's
 * commands, then its start resolves; stop() clears its registrations and is refused while starting.
 */
class FakeClient implements Retiring {
  stops = 0;
  kills = 0;
  private current: "starting" | "running" | "stopped" = "stopped";
  private registered = false;
  private start: Promise<void> = Promise.resolve();
  private settle = { resolve: () => {}, reject: (_error: Error) => {} };

  begin(): this {
    this.current = "starting";
    this.start = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.start.catch(() => undefined);
    return this;
  }
  reportRunning(): this {
    this.current = "running";
    return this;
  }
  finishStart(): this {
    if (commands.has("graphmend.applyAllFixes")) throw new Error("command 'graphmend.applyAllFixes' already exists");
    commands.add("graphmend.applyAllFixes");
    this.registered = true;
    this.settle.resolve();
    return this;
  }
  failStart(): void {
    this.current = "stopped";
    this.settle.reject(new Error("Pending response rejected since connection got disposed"));
  }
  state() {
    return this.current;
  }
  started() {
    return this.start;
  }
  async stop(): Promise<void> {
    assert.equal(this.current, "running", "vscode-languageclient stops only a running client");
    this.stops++;
    if (this.registered) commands.delete("graphmend.applyAllFixes");
    this.registered = false;
    this.current = "stopped";
  }
  kill(): void {
    this.kills++;
    this.failStart(); // its server ends: the connection closes, the start fails
  }
}

test("a running client is stopped at once; a stopped one is left", async () => {
  commands.clear();
  const running = new FakeClient().begin().reportRunning().finishStart();
  await retire(running, 10_000);
  assert.equal(running.stops, 1);
  assert.equal(commands.size, 0);
  const stopped = new FakeClient();
  await retire(stopped, 10_000);
  assert.equal(stopped.stops, 0);
});

test("a client restarting its server on its own is stopped once its start has ended, not when it reports running", async () => {
  commands.clear();
  const restarting = new FakeClient().begin();
  let done = false;
  const retired = retire(restarting, 10_000).then(() => (done = true));
  restarting.reportRunning();
  await tick();
  // Stopped now, it would register its commands after the stop: the next client's start would fail.
  assert.equal(restarting.stops, 0);
  assert.equal(done, false);
  restarting.finishStart();
  await retired;
  assert.equal(restarting.stops, 1);
  assert.equal(commands.size, 0);
  new FakeClient().begin().reportRunning().finishStart(); // the next client starts
  // A start that fails ends the wait too, with nothing to stop.
  const failing = new FakeClient().begin();
  const failed = retire(failing, 10_000);
  failing.failStart();
  await failed;
  assert.equal(failing.stops, 0);
});

test("a client that starts for too long has its server ended", async () => {
  commands.clear();
  const hung = new FakeClient().begin();
  await retire(hung, 20);
  assert.deepEqual([hung.kills, hung.stops, hung.state()], [1, 0, "stopped"]);
});
