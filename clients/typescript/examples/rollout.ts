// rollout example: rolls out a simulated fleet of instances (ours, in memory: no Kubernetes) with the CloneSet
// planner, using only the TypeScript client and its loop helper (src/), and prints the timeline in the format of
// `clonesetctl simulate` for the same spec:
//
//   node dist/examples/rollout.js -f fleet.json --set image=registry.local/fleet:v2 --set partition=5 \
//       --fail-nth 4 --planner 127.0.0.1:7070
//
// The fleet first reaches the steady state of the manifest as written (every instance ready), then takes the
// --set changes as the new spec and rolls out until nothing moves any more. --fail-nth N makes the N-th container
// start of the rollout fail readiness (the instance runs but never becomes ready).
import { readFileSync } from "node:fs";
import { clone, equals } from "@bufbuild/protobuf";
import { CloneSetStatusSchema, EventType, Loop, PlannerClient } from "../src/index";
import type { CloneSet, PlanResponse } from "../src/index";
import { SimFleet } from "./fleet";
import type { Counts } from "./fleet";
import { applySets, cloneSetFromManifest } from "./spec";
import { startPlanner } from "../test/planner_process";

interface Step {
  atMs: number;
  phase: string;
  created: string[];
  deleted: string[];
  updatedInPlace: string[];
  lifecycle: string[];
  counts: Counts;
}

interface Result {
  name: string;
  namespace: string;
  changes: string[];
  strategy: string;
  fromRevision: string;
  toRevision: string;
  steps: Step[];
  outcome: string;
  reasons: string[];
  warnings: string[];
  durationMs: number;
  peakUnavailable: number;
  peakSurge: number;
  final?: Counts;
}

const newResult = (): Result => ({
  name: "", namespace: "", changes: [], strategy: "", fromRevision: "", toRevision: "", steps: [], outcome: "",
  reasons: [], warnings: [], durationMs: 0, peakUnavailable: 0, peakSurge: 0,
});

// Prints a duration as clonesetctl does (absl's FormatDuration): "0", "500ms", "6s", "1m", "1m30.5s".
export function formatDuration(ms: number): string {
  if (ms === 0) return "0";
  if (ms < 1000) return `${ms}ms`;
  let out = "";
  const h = Math.floor(ms / 3_600_000);
  if (h > 0) { out += `${h}h`; ms -= h * 3_600_000; }
  const m = Math.floor(ms / 60_000);
  if (m > 0) { out += `${m}m`; ms -= m * 60_000; }
  if (ms > 0) out += `${ms / 1000}s`;
  return out;
}

const offset = (ms: number) => (ms <= 0 ? "+0s" : "+" + formatDuration(Math.floor(ms / 100) * 100));

function strategy(cs: CloneSet): string {
  const u = cs.spec?.updateStrategy;
  const ios = (v: { value: { case?: string; value?: unknown } } | undefined, unset: string) =>
    v?.value.case ? String(v.value.value) : unset;
  let s = `${u?.type || "ReCreate"}, maxUnavailable ${ios(u?.maxUnavailable, "20%")}, maxSurge ${ios(u?.maxSurge, "0")}, ` +
    `partition ${ios(u?.partition, "0")}`;
  if (u?.paused) s += ", paused";
  return s;
}

// Runs the loop until nothing changes any more, recording every plan that touched an instance into `r` (times
// relative to `start`). It mirrors `clonesetctl simulate`: after a plan that acted, plan again at the same instant;
// otherwise move to the next instance transition or the plan's requeue, whichever is first.
async function settle(loop: Loop, f: SimFleet, clock: { now: number }, start: number, r: Result): Promise<PlanResponse | undefined> {
  let sameInstant = 0;
  let idle = 0;
  let lastChange = clock.now;
  const seen = new Set<string>();
  const peaks = () => {
    const c = f.counts(clock.now);
    r.peakUnavailable = Math.max(r.peakUnavailable, c.unavailable);
    r.peakSurge = Math.max(r.peakSurge, c.surge);
  };
  let last: PlanResponse | undefined;
  for (;;) {
    if (f.advance(clock.now)) { lastChange = clock.now; idle = 0; }
    peaks();
    const before = clone(CloneSetStatusSchema, f.cs.status!);
    f.out = { created: [], deleted: [], updatedInPlace: [], lifecycle: [] };
    const res = await loop.step(new Date(clock.now));
    last = res.plan;
    for (const e of res.plan.events) {
      const line = `${e.reason}: ${e.message}`;
      if (e.type === EventType.WARNING && !seen.has(line)) { seen.add(line); r.warnings.push(line); }
    }
    if (res.stopped) {
      throw new Error(`at ${offset(clock.now - start)} the fleet refused an action: ${String(res.stopped.error)}`);
    }
    const statusChanges = res.plan.writeStatus && res.plan.status !== undefined && !equals(CloneSetStatusSchema, res.plan.status, before);
    if (res.plan.actions.length > 0 || statusChanges) {
      if (++sameInstant > 200) throw new Error(`the plan does not settle at ${offset(clock.now - start)} (phase ${res.plan.summary?.phase})`);
      lastChange = clock.now;
      idle = 0;
      const o = f.out;
      if (o.created.length + o.deleted.length + o.updatedInPlace.length + o.lifecycle.length > 0) {
        const phase = res.plan.summary?.phase || (o.created.length ? "create" : o.deleted.length ? "delete"
          : o.updatedInPlace.length ? "update" : "lifecycle");
        r.steps.push({ atMs: clock.now - start, phase, ...o, counts: f.counts(clock.now) });
      }
      peaks();
      continue;
    }
    sameInstant = 0;
    let next = f.nextTransition(clock.now);
    if (res.requeueAfterMs > 0 && (next === undefined || clock.now + res.requeueAfterMs < next)) next = clock.now + res.requeueAfterMs;
    if (next === undefined) break;
    if (++idle > 3 && f.nextTransition(clock.now) === undefined) break; // only timers that change nothing
    if (next - start > 24 * 3_600_000) throw new Error("still changing after 24h");
    clock.now = next;
  }
  r.durationMs = lastChange - start;
  return last;
}

function printTable(r: Result, startDelayMs: number, readyAfterMs: number, failNth: number): void {
  const pad = (s: string | number, n: number) => String(s).padStart(n);
  const padEnd = (s: string, n: number) => s.padEnd(n);
  const lines: string[] = [];
  lines.push(`CloneSet ${r.namespace}/${r.name}`);
  lines.push(`Change:   ${r.changes.join(", ")}`);
  lines.push(`Strategy: ${r.strategy}`);
  lines.push(`Revision: ${r.fromRevision} -> ${r.toRevision}`);
  lines.push(`Model:    container start ${formatDuration(startDelayMs)}, ready ${formatDuration(readyAfterMs)} later, ` +
    `container start ${failNth} of the rollout fails`, "");
  lines.push(`${padEnd("TIME", 8)} ${padEnd("PHASE", 16)} ${pad("CREATED", 7)} ${pad("DELETED", 7)} ${pad("IN-PLACE", 8)} ` +
    `${pad("UNAVAILABLE", 11)} ${pad("SURGE", 5)} ${pad("UPDATED", 7)} ${pad("READY", 5)} ${pad("DESIRED", 7)}  ` +
    "PODS (+created -deleted ~in-place)");
  for (const s of r.steps) {
    const parts = [...s.created.map((n) => "+" + n), ...s.deleted.map((n) => "-" + n), ...s.updatedInPlace.map((n) => "~" + n)];
    if (s.lifecycle.length === 1) parts.push(`(${s.lifecycle[0]})`);
    else if (s.lifecycle.length > 1) parts.push(`(lifecycle of ${s.lifecycle.length} pods)`);
    lines.push(`${padEnd(offset(s.atMs), 8)} ${padEnd(s.phase, 16)} ${pad(s.created.length, 7)} ${pad(s.deleted.length, 7)} ` +
      `${pad(s.updatedInPlace.length, 8)} ${pad(s.counts.unavailable, 11)} ${pad(s.counts.surge, 5)} ` +
      `${pad(s.counts.updated, 7)} ${pad(s.counts.ready, 5)} ${pad(s.counts.desired, 7)}  ${parts.join(" ")}`);
  }
  if (r.steps.length === 0) lines.push("(no pod changes)");
  lines.push("");
  const c = r.final!;
  if (r.outcome === "complete") {
    lines.push(`Result:   complete in ${formatDuration(r.durationMs)}: ${c.updated}/${c.desired} pods updated and available`);
  } else if (r.outcome === "partition") {
    lines.push(`Result:   stops at the partition after ${formatDuration(r.durationMs)}: ${c.updated}/${c.desired} pods updated`);
  } else {
    lines.push(`Result:   STALLS after ${formatDuration(r.durationMs)}: ${c.updated}/${c.desired} updated, ` +
      `${c.available}/${c.desired} available`);
  }
  for (const why of r.reasons) lines.push(`          because ${why}`);
  lines.push(`Peak:     ${r.peakUnavailable} unavailable, ${r.peakSurge} surge`);
  for (const w of r.warnings) lines.push(`Warning:  ${w}`);
  process.stdout.write(lines.join("\n") + "\n");
}

// The result with the keys of `clonesetctl simulate -o json`.
function printJson(r: Result): void {
  const out = {
    name: r.name, namespace: r.namespace, changes: r.changes, strategy: r.strategy, fromRevision: r.fromRevision,
    toRevision: r.toRevision,
    steps: r.steps.map((s) => ({
      atSeconds: s.atMs / 1000, phase: s.phase, created: s.created, deleted: s.deleted,
      updatedInPlace: s.updatedInPlace, lifecycle: s.lifecycle, counts: s.counts,
    })),
    outcome: r.outcome, finished: r.outcome === "complete", reasons: r.reasons, warnings: r.warnings,
    durationSeconds: r.durationMs / 1000, peakUnavailable: r.peakUnavailable, peakSurge: r.peakSurge, final: r.final,
  };
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
}

function parseDuration(s: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(s);
  if (!m) throw new Error(`${flag}: want a duration like 5s or 500ms, got ${s}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as "ms" | "s" | "m"];
}

interface Options {
  file: string;
  sets: string[];
  planner: string;
  plannerBin: string;
  failNth: number;
  startDelayMs: number;
  readyAfterMs: number;
  output: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { file: "", sets: [], planner: "", plannerBin: "", failNth: 0, startDelayMs: 1000, readyAfterMs: 5000, output: "table" };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes("=") && argv[i].startsWith("--") ? [argv[i].slice(0, argv[i].indexOf("=")), argv[i].slice(argv[i].indexOf("=") + 1)] : [argv[i], undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      if (i + 1 >= argv.length) throw new Error(`${flag}: needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case "-f": case "--filename": o.file = value(); break;
      case "--set": o.sets.push(value()); break;
      case "--planner": o.planner = value(); break;
      case "--planner-bin": o.plannerBin = value(); break;
      case "--fail-nth": o.failNth = Number(value()); break;
      case "--start-delay": o.startDelayMs = parseDuration(value(), flag); break;
      case "--ready-after": o.readyAfterMs = parseDuration(value(), flag); break;
      case "-o": case "--output": o.output = value(); break;
      default: throw new Error(`unknown flag ${argv[i]} (known: -f, --set, --planner, --planner-bin, --fail-nth, --start-delay, --ready-after, -o)`);
    }
  }
  if (!Number.isInteger(o.failNth) || o.failNth < 0) throw new Error("--fail-nth: want a non-negative integer");
  if (o.output !== "table" && o.output !== "json") throw new Error("-o must be table or json");
  if (!o.file) throw new Error("-f: the CloneSet manifest is required");
  return o;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const doc = JSON.parse(readFileSync(o.file, "utf8"));
  const old = cloneSetFromManifest(doc);
  const changes = applySets(doc, o.sets);
  const updated = cloneSetFromManifest(doc);

  const planner = o.plannerBin ? await startPlanner(o.plannerBin) : undefined;
  const client = new PlannerClient(planner?.address ?? o.planner);
  try {
    // The planner's admission rules first: a spec it rejects is an error naming the field.
    for (const v of [{ cloneSet: old }, { cloneSet: updated, old }]) {
      const resp = await client.validate(v);
      if (resp.errors.length > 0) throw new Error(`invalid CloneSet: ${resp.errors.map((e) => `${e.field}: ${e.message}`).join("; ")}`);
    }
    const epoch = Date.UTC(2026, 0, 1);
    const f = new SimFleet(old, o.startDelayMs, o.readyAfterMs, epoch);
    f.failNth = o.failNth;
    const loop = new Loop(client, f);
    const clock = { now: epoch };
    await settle(loop, f, clock, clock.now, newResult());
    const steady = f.counts(clock.now);
    if (steady.available !== steady.desired || steady.updated !== steady.desired) {
      throw new Error(`the manifest as written never reaches a steady state (${steady.available}/${steady.desired} available)`);
    }
    const r = newResult();
    r.name = old.metadata!.name;
    r.namespace = old.metadata!.namespace;
    r.changes = changes;
    r.fromRevision = f.cs.status!.updateRevision;
    f.setSpec(updated.spec!);
    f.countStarts = true; // failures start with the rollout
    r.strategy = strategy(f.cs);
    const last = await settle(loop, f, clock, clock.now, r);
    r.toRevision = f.cs.status!.updateRevision;
    const c = (r.final = f.counts(clock.now));
    const allAvailable = c.available === c.desired && c.pods === c.desired;
    if (allAvailable && c.updated === c.desired) {
      r.outcome = "complete";
    } else if (allAvailable && c.updated === f.cs.status!.expectedUpdatedReplicas && c.updated < c.desired) {
      r.outcome = "partition";
      r.reasons.push(`partition keeps ${c.desired - c.updated} of ${c.desired} pods at the old revision`);
    } else {
      r.outcome = "stalled";
    }
    if (r.outcome !== "complete") r.reasons.push(...(last?.summary?.blockedReasons ?? []));
    if (r.outcome === "stalled" && f.failedStarts() > 0) {
      r.reasons.push(`${f.failedStarts()} pods never became ready (--fail-nth ${o.failNth})`);
    }
    if (o.output === "json") printJson(r);
    else printTable(r, o.startDelayMs, o.readyAfterMs, o.failNth);
  } finally {
    client.close();
    await planner?.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
