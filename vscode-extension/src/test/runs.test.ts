import { strict as assert } from "node:assert";
import { test } from "node:test";
import { age, runView, splitArguments } from "../runs";

test("a run's age as the status bar says it", () => {
  assert.equal(age(0), "just now");
  assert.equal(age(59), "just now");
  assert.equal(age(5 * 60 + 30), "5 min ago");
  assert.equal(age(2 * 3600 + 10), "2 h ago");
  assert.equal(age(86400), "1 day ago");
  assert.equal(age(3 * 86400), "3 days ago");
});

test("the run's status item: its age, the stale events only when there are some", () => {
  const status = { run: "20261127-052455-14853", folder: "/p/.graphmend/runs/20261127-052455-14853", recordedAt: 1000, events: 5, stale: 2, torch: "2.13.0+cpu" };
  const view = runView(status, (1000 + 300) * 1000);
  assert.equal(view.text, "graphmend run: 5 min ago · 2 stale");
  assert.equal(
    view.tooltip,
    "The newest recorded run, 20261127-052455-14853 (torch 2.13.0+cpu): 5 events at your lines, 2 stale: their line was " +
      "edited since the run. Findings it met are marked confirmed. Click to show its folder.",
  );
  const fresh = runView({ ...status, stale: 0, events: 1, torch: null }, 1000 * 1000);
  assert.equal(fresh.text, "graphmend run: just now");
  assert.ok(fresh.tooltip.startsWith("The newest recorded run, 20261127-052455-14853: 1 event at your lines. "));
  const together = runView({ ...status, stale: 0, runs: 2 }, 1000 * 1000);
  assert.ok(together.tooltip.includes("(torch 2.13.0+cpu), with 1 more recorded at the same time: 5 events"), together.tooltip);
});

test("arguments split as a shell splits them", () => {
  assert.deepEqual(splitArguments(""), []);
  assert.deepEqual(splitArguments("  --steps 20  "), ["--steps", "20"]);
  assert.deepEqual(splitArguments(`--name "two words" 'it''s' a\\ b ""`), ["--name", "two words", "its", "a b", ""]);
  assert.deepEqual(splitArguments(`--x="a \\"b\\""`), ['--x=a "b"']);
});
