package planner

import (
	"context"
	"fmt"
	"time"

	pb "cloneset.dev/planner/plannerv1"
)

// Fleet is your own system as the planner sees it: a snapshot of your instances as one CloneSet's pods, and the
// writes a plan asks for. The loop calls it from one goroutine.
type Fleet interface {
	// Snapshot is the PlanRequest for the fleet as it is at now: clone_set, pods (or pod_table), revisions, now
	// and random_seed.
	Snapshot(now time.Time) (*pb.PlanRequest, error)
	// Apply performs one action of a plan (never StartInPlaceUpdates: Step expands those first).
	Apply(action *pb.Action) error
	// WriteStatus stores the CloneSet status the plan asks for. Called last, and only when no action stopped the
	// plan.
	WriteStatus(status *pb.CloneSetStatus) error
}

// ActionError is one failed action of a plan.
type ActionError struct {
	Index  int // in the expanded plan
	Action *pb.Action
	Err    error
}

func (e *ActionError) Error() string {
	return fmt.Sprintf("action %d (%T): %v", e.Index, e.Action.GetKind(), e.Err)
}

func (e *ActionError) Unwrap() error { return e.Err }

// StepResult is what one turn of the loop did.
type StepResult struct {
	Plan    *pb.PlanResponse // the plan, in-place batches expanded
	Applied int              // actions that succeeded
	Failed  []*ActionError   // actions that failed, in order
	// Why the plan was cut short (one of Failed): a failed action with stop_on_error (nothing after it was
	// attempted), or a failed CreatePod (creations of later slow-start batches were not attempted). The status is
	// not written then.
	Stopped *ActionError
	// When to come back without any change of the fleet (PlanResponse.requeue_after); zero means no timed requeue.
	RequeueAfter time.Duration
}

// Changed says whether the step wrote anything: an action, or a status the planner asked to write.
func (r *StepResult) Changed() bool {
	return r.Applied > 0 || len(r.Failed) > 0 || r.Stopped != nil || r.Plan.GetWriteStatus()
}

// Loop is the rollout loop over one CloneSet: snapshot, Plan, apply the actions in order, write the status, and
// again on the next change or at RequeueAfter. Time is the caller's: Step takes now.
type Loop struct {
	Client *Client
	Fleet  Fleet
	// Timeout of each Plan call (default 10 s).
	Timeout time.Duration
}

// Step runs one turn at now. It returns an error (an *Error with the gRPC code, or the fleet's Snapshot error)
// when there was no plan to apply; failures of single actions are in the result.
func (l *Loop) Step(ctx context.Context, now time.Time) (*StepResult, error) {
	req, err := l.Fleet.Snapshot(now)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plan, err := l.Client.Plan(callCtx, req)
	if err != nil {
		return nil, err
	}
	return ApplyPlan(plan, l.Fleet), nil
}

// ApplyPlan applies plan to fleet by the rules every applier follows (docs/planner-api.md): in-place batches
// expanded, actions in order, a failed action with stop_on_error ends the plan, a failed CreatePod ends it after
// its slow-start batch, and the status is written last when nothing ended the plan.
func ApplyPlan(plan *pb.PlanResponse, fleet Fleet) *StepResult {
	ExpandInPlaceBatches(plan)
	res := &StepResult{Plan: plan}
	if d := plan.GetRequeueAfter(); d != nil {
		res.RequeueAfter = d.AsDuration()
	}
	var failedCreate *ActionError // the first failed CreatePod: later slow-start batches must not start
	for i, a := range plan.GetActions() {
		if c := a.GetCreatePod(); c != nil && failedCreate != nil && c.GetBatch() > failedCreate.Action.GetCreatePod().GetBatch() {
			break
		}
		if err := fleet.Apply(a); err != nil {
			ae := &ActionError{Index: i, Action: a, Err: err}
			res.Failed = append(res.Failed, ae)
			if a.GetStopOnError() {
				res.Stopped = ae
				break
			}
			if a.GetCreatePod() != nil && failedCreate == nil {
				failedCreate = ae
			}
			continue
		}
		res.Applied++
	}
	if res.Stopped == nil {
		res.Stopped = failedCreate
	}
	if res.Stopped == nil && plan.GetWriteStatus() && plan.GetStatus() != nil {
		if err := fleet.WriteStatus(plan.GetStatus()); err != nil {
			res.Failed = append(res.Failed, &ActionError{Index: len(plan.GetActions()), Err: fmt.Errorf("status write: %w", err)})
		}
	}
	return res
}
