package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "cloneset.dev/planner/plannerv1"
)

// Fleet is your own system as the planner sees it: a snapshot of your instances as one CloneSet's pods, and the
// writes a plan asks for. The loop calls it from one goroutine.
type Fleet interface {
	// Snapshot is the PlanRequest for the fleet as it is at now (NewPlanRequest builds one from your objects).
	Snapshot(now time.Time) (*pb.PlanRequest, error)
	// Apply performs one action of a plan (never StartInPlaceUpdates: the loop expands those first). Return an
	// error wrapping ErrConflict when a precondition (uid, resource_version) fails: the snapshot was stale, and the
	// rest of the plan is skipped.
	Apply(action *pb.Action) error
	// WriteStatus stores the CloneSet status the plan asks for. Called last, and only when nothing stopped the plan.
	WriteStatus(status *pb.CloneSetStatus) error
}

// ErrConflict is what a Fleet's Apply wraps when an action's precondition failed (the API server's 409).
var ErrConflict = errors.New("conflict: the object changed since the snapshot")

// ErrUnknownAction is the failure of an action whose kind this client does not know (a newer planner): it is
// never skipped silently, and its stop_on_error applies.
var ErrUnknownAction = errors.New("unknown action kind (a newer planner than this client)")

// NewPlanRequest is the PlanRequest for one CloneSet, by the rules every caller of the planner follows: the pods
// sorted by name (the planner's tie-breaks assume a defined order) and the random seed PlanSeed of that state, so
// the same snapshot always gets the same new instance ids.
func NewPlanRequest(cs *pb.CloneSet, pods []*pb.Pod, revisions []*pb.ControllerRevision, now time.Time) *pb.PlanRequest {
	sorted := append([]*pb.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].GetMetadata().GetName() < sorted[j].GetMetadata().GetName() })
	return &pb.PlanRequest{CloneSet: cs, Pods: sorted, Revisions: revisions, Now: timestamppb.New(now),
		RandomSeed: PlanSeed(cs, sorted)}
}

// PlanSeed is a random seed that is a function of the state: FNV-1a 64 over the CloneSet's uid and
// resourceVersion and the pods' resourceVersions, in the order given (NewPlanRequest's name order), from the
// start value 1469598103934665603 (not FNV's usual offset basis) as the project's executor and clonesetctl seed
// theirs (planapi/request.cc), so the same state gets the same seed from every caller.
func PlanSeed(cs *pb.CloneSet, pods []*pb.Pod) uint64 {
	h := uint64(1469598103934665603)
	mix := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
	}
	mix(cs.GetMetadata().GetUid())
	mix(cs.GetMetadata().GetResourceVersion())
	for _, p := range pods {
		mix(p.GetMetadata().GetResourceVersion())
	}
	return h
}

// ActionError is one failed action of a plan.
type ActionError struct {
	Index  int // in the expanded plan; len(actions) for the status write
	Action *pb.Action
	Err    error
}

func (e *ActionError) Error() string {
	if e.Action == nil {
		return fmt.Sprintf("status write: %v", e.Err)
	}
	return fmt.Sprintf("action %d (%s): %v", e.Index, ActionKind(e.Action), e.Err)
}

func (e *ActionError) Unwrap() error { return e.Err }

// ActionKind is the name of the action's kind ("create_pod", ...; "" when this client does not know it).
func ActionKind(a *pb.Action) string {
	if a.GetKind() == nil {
		return ""
	}
	m := a.ProtoReflect()
	if f := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind")); f != nil {
		return string(f.Name())
	}
	return ""
}

// StepResult is what one turn of the loop did.
type StepResult struct {
	Plan    *pb.PlanResponse // the plan, in-place batches expanded
	Applied int              // actions that succeeded
	Failed  []*ActionError   // actions that failed, in order
	// Why the plan was cut short (one of Failed): a conflict, a failed action with stop_on_error (no action after
	// it was attempted), or a failed CreatePod (the next slow-start batch was not attempted). The status is not
	// written then.
	Stopped       *ActionError
	StatusWritten bool
	// When to come back without any change of the fleet (PlanResponse.requeue_after); zero means no timed requeue.
	RequeueAfter time.Duration
}

// Changed says whether the step wrote anything: an action, or a status the planner asked to write.
func (r *StepResult) Changed() bool {
	return r.Applied > 0 || len(r.Failed) > 0 || r.Stopped != nil || r.StatusWritten
}

// Loop is the rollout loop over one CloneSet: snapshot, Plan, apply the actions, write the status, and again on
// the next change or at RequeueAfter. Time is the caller's: Step takes now.
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

// PodOfAction is the pod an action is about ("" for actions that are not about one pod).
func PodOfAction(a *pb.Action) string {
	switch k := a.GetKind().(type) {
	case *pb.Action_CreatePod:
		var doc struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(k.CreatePod.GetPodJson()), &doc) != nil {
			return ""
		}
		return doc.Metadata.Name
	case *pb.Action_DeletePod:
		return k.DeletePod.GetName()
	case *pb.Action_PatchPod:
		return k.PatchPod.GetName()
	case *pb.Action_PatchPodStatus:
		return k.PatchPodStatus.GetName()
	case *pb.Action_ResizePod:
		return k.ResizePod.GetName()
	case *pb.Action_CreatePvc:
		return k.CreatePvc.GetPodName()
	case *pb.Action_ExpandPvc:
		return k.ExpandPvc.GetPodName()
	}
	return ""
}

// Schedule splits a plan into the stages the executor applies it in, each a list of per-pod groups of action
// indexes: stages run one after the other in plan order; revision, PVC, CloneSet and image-pull-job actions are
// stages of their own; consecutive pod actions form one stage, except that each slow-start batch of creations is
// a stage of its own; inside a stage the actions of one pod form a group in plan order, groups ordered by their
// first action (and independent of each other).
func Schedule(plan *pb.PlanResponse) [][][]int {
	var stages [][][]int
	podStage, stageCreates := false, false
	var stageBatch int32
	var groupOf map[string]int
	for i, a := range plan.GetActions() {
		pod := PodOfAction(a)
		if pod == "" {
			stages = append(stages, [][]int{{i}})
			podStage = false
			continue
		}
		c := a.GetCreatePod()
		creates := c != nil
		if !podStage || stageCreates != creates || (creates && c.GetBatch() != stageBatch) {
			stages = append(stages, nil)
			groupOf = map[string]int{}
			podStage, stageCreates = true, creates
		}
		if creates {
			stageBatch = c.GetBatch()
		}
		last := len(stages) - 1
		g, ok := groupOf[pod]
		if !ok {
			g = len(stages[last])
			groupOf[pod] = g
			stages[last] = append(stages[last], nil)
		}
		stages[last][g] = append(stages[last][g], i)
	}
	return stages
}

// ApplyPlan applies plan to fleet by the rules every applier of a plan follows (docs/planner-api.md): in-place
// batches expanded; the stages of Schedule in order, each pod's actions in plan order; a conflict or a failed
// action with stop_on_error ends the plan; a failed CreatePod ends it after its slow-start batch; an action of a
// kind this client does not know fails (ErrUnknownAction); the status is written last, only when nothing ended
// the plan. Actions are applied one at a time.
func ApplyPlan(plan *pb.PlanResponse, fleet Fleet) *StepResult {
	ExpandInPlaceBatches(plan)
	res := &StepResult{Plan: plan}
	if d := plan.GetRequeueAfter(); d != nil {
		res.RequeueAfter = d.AsDuration()
	}
	for _, stage := range Schedule(plan) {
		var failedCreate *ActionError
		for _, group := range stage {
			for _, i := range group {
				if res.Stopped != nil {
					break
				}
				a := plan.Actions[i]
				err := ErrUnknownAction
				if ActionKind(a) != "" {
					err = fleet.Apply(a)
				}
				if err == nil {
					res.Applied++
					continue
				}
				ae := &ActionError{Index: i, Action: a, Err: err}
				res.Failed = append(res.Failed, ae)
				switch {
				case errors.Is(err, ErrConflict) || a.GetStopOnError():
					res.Stopped = ae
				case a.GetCreatePod() != nil && failedCreate == nil:
					failedCreate = ae
				}
			}
		}
		if res.Stopped == nil {
			res.Stopped = failedCreate
		}
		if res.Stopped != nil {
			break
		}
	}
	if res.Stopped == nil && plan.GetWriteStatus() && plan.GetStatus() != nil {
		if err := fleet.WriteStatus(plan.GetStatus()); err != nil {
			res.Failed = append(res.Failed, &ActionError{Index: len(plan.GetActions()), Err: err})
		} else {
			res.StatusWritten = true
		}
	}
	return res
}
