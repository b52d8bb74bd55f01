import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PlanRequestSchema } from "./gen/planner_pb";
import type { Action, CloneSet, CloneSetStatus, ControllerRevision, Pod, PlanRequest, PlanResponse } from "./gen/planner_pb";
import { expandInPlaceBatches } from "./batches";
import type { PlannerClient } from "./client";

// Your own system as the planner sees it: a snapshot of your instances as one CloneSet's pods, and the writes a
// plan asks for.
export interface Fleet {
  // The PlanRequest for the fleet as it is at `now` (planRequest() builds one from your objects).
  snapshot(now: Date): PlanRequest | Promise<PlanRequest>;
  // Performs one action of a plan (never startInPlaceUpdates: the loop expands those first). Throw to fail it; throw
  // a ConflictError when a precondition (uid, resourceVersion) fails: the snapshot was stale, and the rest of the
  // plan is skipped.
  apply(action: Action): void | Promise<void>;
  // Stores the CloneSet status the plan asks for; called last, and only when nothing stopped the plan.
  writeStatus(status: CloneSetStatus): void | Promise<void>;
}

// What a Fleet throws when an action's precondition failed (the API server's 409).
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConflictError";
  }
}

// The failure of an action whose kind this client does not know (a newer planner): never skipped silently, and its
// stopOnError applies.
export class UnknownActionError extends Error {
  constructor() {
    super("unknown action kind (a newer planner than this client)");
    this.name = "UnknownActionError";
  }
}

// A random seed that is a function of the state: FNV-1a 64 over the CloneSet's uid and resourceVersion and the
// pods' resourceVersions, in the order given (planRequest's name order), from the start value 1469598103934665603
// (not FNV's usual offset basis) as the project's executor and clonesetctl seed theirs (planapi/request.cc), so the
// same state gets the same seed from every caller.
export function planSeed(cs: CloneSet, pods: Pod[]): bigint {
  let h = 1469598103934665603n;
  const mix = (s: string) => {
    for (const byte of Buffer.from(s, "utf8")) h = ((h ^ BigInt(byte)) * 1099511628211n) & 0xffffffffffffffffn;
  };
  mix(cs.metadata?.uid ?? "");
  mix(cs.metadata?.resourceVersion ?? "");
  for (const p of pods) mix(p.metadata?.resourceVersion ?? "");
  return h;
}

// The PlanRequest for one CloneSet by the rules every caller of the planner follows: the pods sorted by name (the
// planner's tie-breaks assume a defined order) and the random seed planSeed of that state.
export function planRequest(cs: CloneSet, pods: Pod[], revisions: ControllerRevision[], now: Date): PlanRequest {
  const name = (p: Pod) => p.metadata?.name ?? "";
  const sorted = [...pods].sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  return create(PlanRequestSchema, {
    cloneSet: cs, pods: sorted, revisions, now: timestampFromDate(now), randomSeed: planSeed(cs, sorted),
  });
}

export interface ActionFailure {
  index: number; // in the expanded plan; actions.length for the status write
  action?: Action;
  error: unknown;
}

export interface StepResult {
  plan: PlanResponse; // in-place batches expanded
  applied: number; // actions that succeeded
  failed: ActionFailure[]; // actions that failed, in order
  // Why the plan was cut short (one of `failed`): a conflict, a failed action with stopOnError (no action after it
  // was attempted), or a failed createPod (the next slow-start batch was not attempted). The status is not written
  // then.
  stopped?: ActionFailure;
  statusWritten: boolean;
  requeueAfterMs: number; // when to come back without any change (0: no timed requeue)
}

// Whether the step wrote anything: an action, or a status the planner asked to write.
export function changed(r: StepResult): boolean {
  return r.applied > 0 || r.failed.length > 0 || r.stopped !== undefined || r.statusWritten;
}

// The pod an action is about ("" for actions that are not about one pod).
export function podOfAction(a: Action): string {
  switch (a.kind.case) {
    case "createPod":
      try {
        return String(JSON.parse(a.kind.value.podJson)?.metadata?.name ?? "");
      } catch {
        return "";
      }
    case "deletePod": case "patchPod": case "patchPodStatus": case "resizePod":
      return a.kind.value.name;
    case "createPvc": case "expandPvc":
      return a.kind.value.podName;
    default:
      return "";
  }
}

// The stages the executor applies a plan in, each a list of per-pod groups of action indexes: stages run one after
// the other in plan order; revision, PVC, CloneSet and image-pull-job actions are stages of their own; consecutive
// pod actions form one stage, except that each slow-start batch of creations is a stage of its own; inside a stage
// the actions of one pod form a group in plan order, groups ordered by their first action.
export function schedule(plan: PlanResponse): number[][][] {
  const stages: number[][][] = [];
  let podStage = false;
  let stageCreates = false;
  let stageBatch = 0;
  let groupOf = new Map<string, number>();
  plan.actions.forEach((a, i) => {
    const pod = podOfAction(a);
    if (pod === "") {
      stages.push([[i]]);
      podStage = false;
      return;
    }
    const creates = a.kind.case === "createPod";
    const batch = a.kind.case === "createPod" ? a.kind.value.batch : 0;
    if (!podStage || stageCreates !== creates || (creates && batch !== stageBatch)) {
      stages.push([]);
      groupOf = new Map();
      podStage = true;
      stageCreates = creates;
    }
    if (creates) stageBatch = batch;
    const stage = stages[stages.length - 1];
    let g = groupOf.get(pod);
    if (g === undefined) {
      g = stage.length;
      groupOf.set(pod, g);
      stage.push([]);
    }
    stage[g].push(i);
  });
  return stages;
}

// Applies `plan` to `fleet` by the rules every applier of a plan follows (docs/planner-api.md): in-place batches
// expanded; the stages of schedule() in order, each pod's actions in plan order; a conflict or a failed action with
// stopOnError ends the plan; a failed createPod ends it after its slow-start batch; an action of a kind this client
// does not know fails (UnknownActionError); the status is written last, only when nothing ended the plan. Actions
// are applied one at a time.
export async function applyPlan(plan: PlanResponse, fleet: Fleet): Promise<StepResult> {
  expandInPlaceBatches(plan);
  const d = plan.requeueAfter;
  const res: StepResult = {
    plan, applied: 0, failed: [], statusWritten: false,
    requeueAfterMs: d ? Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6) : 0,
  };
  for (const stage of schedule(plan)) {
    let failedCreate: ActionFailure | undefined;
    for (const group of stage) {
      for (const i of group) {
        if (res.stopped) break;
        const a = plan.actions[i];
        try {
          if (a.kind.case === undefined) throw new UnknownActionError();
          await fleet.apply(a);
          res.applied++;
        } catch (error) {
          const f: ActionFailure = { index: i, action: a, error };
          res.failed.push(f);
          if (error instanceof ConflictError || a.stopOnError) res.stopped = f;
          else if (a.kind.case === "createPod") failedCreate ??= f;
        }
      }
    }
    res.stopped ??= failedCreate;
    if (res.stopped) break;
  }
  if (!res.stopped && plan.writeStatus && plan.status) {
    try {
      await fleet.writeStatus(plan.status);
      res.statusWritten = true;
    } catch (error) {
      res.failed.push({ index: plan.actions.length, error });
    }
  }
  return res;
}

// The rollout loop over one CloneSet: snapshot, plan, apply the actions, write the status; and again on the next
// change or after requeueAfterMs. Time is the caller's: step takes `now`.
export class Loop {
  constructor(readonly client: PlannerClient, readonly fleet: Fleet, readonly timeoutMs = 10_000) {}

  // One turn at `now`. Rejects with a PlannerError (with the gRPC code) or the fleet's snapshot error when there
  // was no plan to apply; failures of single actions are in the result.
  async step(now: Date): Promise<StepResult> {
    const request = await this.fleet.snapshot(now);
    const plan = await this.client.plan(request, { timeoutMs: this.timeoutMs });
    return applyPlan(plan, this.fleet);
  }
}
