// client_ts_unit: the loop's rules without a planner: applyPlan's order, stops and status write,
// expandInPlaceBatches' actions and events. Table-driven; the fleet records what it was asked to do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  ActionSchema, CloneSetSchema, ConflictError, EventSchema, EventType, IN_PLACE_STATE_ANNOTATION, PlanResponseSchema,
  PodSchema, StartInPlaceUpdatesSchema, UnknownActionError, applyPlan, expandInPlaceBatches, planRequest, planSeed,
} from "../src/index";
import type { Action, CloneSetStatus, Fleet, PlanRequest } from "../src/index";

function actionName(a: Action): string {
  switch (a.kind.case) {
    case "createPod": return `create:${a.kind.value.instanceId}/b${a.kind.value.batch}`;
    case "deletePod": return `delete:${a.kind.value.name}`;
    case "patchPod": return `patch:${a.kind.value.name}`;
    case "patchPodStatus": return `status:${a.kind.value.name}`;
    case "deleteRevision": return `revision:${a.kind.value.name}`;
    case undefined: return "unknown";
    default: return String(a.kind.case);
  }
}

class RecordingFleet implements Fleet {
  log: string[] = [];
  constructor(private readonly fail: Set<string>) {}
  snapshot(): PlanRequest { throw new Error("not used"); }
  apply(a: Action): void {
    const name = actionName(a);
    this.log.push(name);
    if (this.fail.has(name)) throw new Error("refused");
    if (this.fail.has(`conflict ${name}`)) throw new ConflictError("pod changed");
  }
  writeStatus(_s: CloneSetStatus): void { this.log.push("status"); }
}

const createPod = (instanceId: string, batch: number) => create(ActionSchema,
  { kind: { case: "createPod", value: { instanceId, batch, podJson: `{"metadata":{"name":"pod-${instanceId}"}}` } } });
const deletePod = (name: string, stopOnError: boolean) => create(ActionSchema, { kind: { case: "deletePod", value: { name } }, stopOnError });
const patchPod = (name: string, stopOnError: boolean) => create(ActionSchema, { kind: { case: "patchPod", value: { name } }, stopOnError });
const statusPatch = (name: string) => create(ActionSchema, { kind: { case: "patchPodStatus", value: { name } }, stopOnError: true });
const revision = (name: string) => create(ActionSchema, { kind: { case: "deleteRevision", value: { name } } });
const unknown = (stopOnError: boolean) => create(ActionSchema, { stopOnError });

const cases = [
  { name: "all in order, status last", actions: [deletePod("a", true), deletePod("b", false)], fail: [],
    log: "delete:a delete:b status", applied: 2, failed: 0, stopped: "" },
  { name: "a failure without stopOnError goes on", actions: [deletePod("a", false), deletePod("b", false)], fail: ["delete:a"],
    log: "delete:a delete:b status", applied: 1, failed: 1, stopped: "" },
  { name: "stopOnError ends the plan, no status", actions: [deletePod("a", true), deletePod("b", false)], fail: ["delete:a"],
    log: "delete:a", applied: 0, failed: 1, stopped: "delete:a" },
  { name: "a failed creation ends the plan after its slow-start batch",
    actions: [createPod("x", 0), createPod("y", 1), createPod("z", 1), createPod("w", 2)], fail: ["create:y/b1"],
    log: "create:x/b0 create:y/b1 create:z/b1", applied: 2, failed: 1, stopped: "create:y/b1" },
  { name: "a failed creation in the last batch: no status", actions: [createPod("x", 0)], fail: ["create:x/b0"],
    log: "create:x/b0", applied: 0, failed: 1, stopped: "create:x/b0" },
  { name: "a conflict ends the plan even without stopOnError", actions: [patchPod("a", false), patchPod("b", false)],
    fail: ["conflict patch:a"], log: "patch:a", applied: 0, failed: 1, stopped: "patch:a" },
  { name: "a pod's actions run together, in plan order, pods by their first action",
    actions: [revision("r1"), statusPatch("p1"), statusPatch("p2"), patchPod("p1", true), patchPod("p2", true), revision("r2")],
    fail: [], log: "revision:r1 status:p1 patch:p1 status:p2 patch:p2 revision:r2 status", applied: 6, failed: 0, stopped: "" },
  { name: "an unknown kind fails and its stopOnError applies", actions: [deletePod("a", false), unknown(true), deletePod("b", false)],
    fail: [], log: "delete:a", applied: 1, failed: 1, stopped: "unknown" },
  { name: "an unknown kind without stopOnError: the plan goes on", actions: [unknown(false), deletePod("b", false)],
    fail: [], log: "delete:b status", applied: 1, failed: 1, stopped: "" },
];

for (const c of cases) {
  test(`applyPlan: ${c.name}`, async () => {
    const fleet = new RecordingFleet(new Set(c.fail));
    const plan = create(PlanResponseSchema, { actions: c.actions, writeStatus: true, status: { replicas: 3 },
      requeueAfter: durationFromMs(1500) });
    const res = await applyPlan(plan, fleet);
    assert.equal(fleet.log.join(" "), c.log);
    assert.equal(res.applied, c.applied);
    assert.equal(res.failed.length, c.failed);
    assert.equal(res.stopped?.action ? actionName(res.stopped.action) : "", c.stopped);
    assert.equal(res.requeueAfterMs, 1500);
    for (const f of res.failed) {
      if (f.action && f.action.kind.case === undefined) assert.ok(f.error instanceof UnknownActionError, String(f.error));
    }
  });
}

test("expandInPlaceBatches: per-target actions in order, events after eventsBefore", () => {
  const batch = create(StartInPlaceUpdatesSchema, {
    statusPatch: { setConditions: [{ type: "InPlaceUpdateReady", status: "False" }], purpose: "start-in-place-update" },
    statusStopOnError: true,
    notReadyCondition: { type: "Ready", status: "False" },
    patch: { containerImages: { main: "v2" }, purpose: "in-place-update" },
    patchStopOnError: true,
    eventType: EventType.NORMAL,
    eventReason: "SuccessfulUpdatePodInPlace",
    eventMessagePrefix: "successfully update pod ",
    eventMessageSuffix: " in-place",
    eventsBefore: 1,
    inPlaceUpdateStatePrefix: '{"revision":"r2",',
    inPlaceUpdateStateSuffix: "}",
    targets: [
      { name: "p1", uid: "u1", resourceVersion: "11", inPlaceUpdateState: '"a":1', setNotReady: true },
      { name: "p2", uid: "u2", resourceVersion: "12", inPlaceUpdateState: '"a":2' },
    ],
  });
  const plan = create(PlanResponseSchema, {
    actions: [deletePod("old", false), create(ActionSchema, { kind: { case: "startInPlaceUpdates", value: batch } }), deletePod("after", false)],
    events: [create(EventSchema, { reason: "First" }), create(EventSchema, { reason: "Last" })],
  });
  expandInPlaceBatches(plan);
  assert.equal(plan.actions.map(actionName).join(" "), "delete:old status:p1 patch:p1 status:p2 patch:p2 delete:after");
  const s1 = plan.actions[1];
  assert.ok(s1.kind.case === "patchPodStatus" && s1.stopOnError);
  assert.deepEqual(s1.kind.value.setConditions.map((c) => `${c.type}=${c.status}`), ["InPlaceUpdateReady=False", "Ready=False"]);
  assert.equal(s1.kind.value.uid, "u1");
  const s2 = plan.actions[3];
  assert.ok(s2.kind.case === "patchPodStatus");
  assert.equal(s2.kind.value.setConditions.length, 1);
  const p2 = plan.actions[4];
  assert.ok(p2.kind.case === "patchPod");
  assert.equal(p2.kind.value.resourceVersion, "12");
  assert.equal(p2.kind.value.setAnnotations[IN_PLACE_STATE_ANNOTATION], '{"revision":"r2","a":2}');
  assert.equal(p2.kind.value.containerImages.main, "v2");
  assert.deepEqual(batch.patch?.setAnnotations, {}, "the batch's shared patch was changed");
  assert.deepEqual(plan.events.map((e) => `${e.reason}/${e.involvedPod}/${e.message}`), [
    "First//", "SuccessfulUpdatePodInPlace/p1/successfully update pod p1 in-place",
    "SuccessfulUpdatePodInPlace/p2/successfully update pod p2 in-place", "Last//",
  ]);
});

test("planSeed and planRequest: the seed of the state, pods by name", () => {
  const cs = create(CloneSetSchema, { metadata: { uid: "sim-cloneset-uid", resourceVersion: "101" } });
  // The seed planapi::PlanSeed gives this state: clonesetctl simulate's first request of the fleet example.
  assert.equal(planSeed(cs, []), 8678479194722194871n);
  const pod = (name: string, resourceVersion: string) => create(PodSchema, { metadata: { name, resourceVersion } });
  const req = planRequest(cs, [pod("b", "7"), pod("a", "9")], [], new Date(100_000));
  assert.deepEqual(req.pods.map((p) => p.metadata?.name), ["a", "b"]);
  assert.equal(req.randomSeed, planSeed(cs, [pod("a", "9"), pod("b", "7")]));
  assert.notEqual(req.randomSeed, planSeed(cs, [pod("b", "7"), pod("a", "9")]));
  assert.equal(req.now?.seconds, 100n);
});
