import type { Action, CloneSetStatus, PlanRequest, PlanResponse } from "./gen/planner_pb";
import { expandInPlaceBatches } from "./batches";
import type { PlannerClient } from "./client";

// Your own system as the planner sees it: a snapshot of your instances as one CloneSet's pods, and the writes a
// plan asks for.
export interface Fleet {
  // The PlanRequest for the fleet as it is at `now`: cloneSet, pods (or podTable), revisions, now, randomSeed.
  snapshot(now: Date): PlanRequest | Promise<PlanRequest>;
  // Performs one action of a plan (never startInPlaceUpdates: the loop expands those first). Throw to fail it.
  apply(action: Action): void | Promise<void>;
  // Stores the CloneSet status the plan asks for; called last, and only when no action stopped the plan.
  writeStatus(status: CloneSetStatus): void | Promise<void>;
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
  // Why the plan was cut short (one of `failed`): a failed action with stopOnError (nothing after it was
  // attempted), or a failed createPod (creations of later slow-start batches were not attempted). The status is
  // not written then.
  stopped?: ActionFailure;
  requeueAfterMs: number; // when to come back without any change (0: no timed requeue)
}

// Whether the step wrote anything: an action, or a status the planner asked to write.
export function changed(r: StepResult): boolean {
  return r.applied > 0 || r.failed.length > 0 || r.stopped !== undefined || r.plan.writeStatus;
}

// Applies `plan` to `fleet` by the rules every applier follows (docs/planner-api.md): in-place batches expanded,
// actions in order, a failed action with stopOnError ends the plan, a failed createPod ends it after its
// slow-start batch, and the status is written last when nothing ended the plan.
export async function applyPlan(plan: PlanResponse, fleet: Fleet): Promise<StepResult> {
  expandInPlaceBatches(plan);
  const d = plan.requeueAfter;
  const res: StepResult = {
    plan, applied: 0, failed: [],
    requeueAfterMs: d ? Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6) : 0,
  };
  let failedCreate: ActionFailure | undefined; // later slow-start batches must not start
  for (let i = 0; i < plan.actions.length; i++) {
    const a = plan.actions[i];
    if (a.kind.case === "createPod" && failedCreate?.action?.kind.case === "createPod" &&
        a.kind.value.batch > failedCreate.action.kind.value.batch) {
      break;
    }
    try {
      await fleet.apply(a);
      res.applied++;
    } catch (error) {
      const f: ActionFailure = { index: i, action: a, error };
      res.failed.push(f);
      if (a.stopOnError) {
        res.stopped = f;
        break;
      }
      if (a.kind.case === "createPod" && !failedCreate) failedCreate = f;
    }
  }
  res.stopped ??= failedCreate;
  if (!res.stopped && plan.writeStatus && plan.status) {
    try {
      await fleet.writeStatus(plan.status);
    } catch (error) {
      res.failed.push({ index: plan.actions.length, error });
    }
  }
  return res;
}

// The rollout loop over one CloneSet: snapshot, plan, apply the actions in order, write the status; and again on
// the next change or after requeueAfterMs. Time is the caller's: step takes `now`.
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
