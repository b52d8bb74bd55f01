package planner

import (
	"google.golang.org/protobuf/proto"

	pb "cloneset.dev/planner/plannerv1"
)

// InPlaceStateAnnotation is the annotation a StartInPlaceUpdates batch sets on each target (planner.proto).
const InPlaceStateAnnotation = "apps.kruise.io/inplace-update-state"

// ExpandInPlaceBatches replaces every StartInPlaceUpdates action of plan by the per-pod actions it stands for and
// puts the targets' events among plan.Events where they belong, as planner.proto's StartInPlaceUpdates says: the
// plan the same request without accept_in_place_batches gets, action for action and event for event. A plan
// without batches is left as it is.
func ExpandInPlaceBatches(plan *pb.PlanResponse) {
	any := false
	for _, a := range plan.GetActions() {
		if a.GetStartInPlaceUpdates() != nil {
			any = true
			break
		}
	}
	if !any {
		return
	}
	old := plan.Events
	actions := make([]*pb.Action, 0, len(plan.Actions))
	events := make([]*pb.Event, 0, len(old))
	taken := 0 // of the plan's own events, already placed
	for _, a := range plan.Actions {
		batch := a.GetStartInPlaceUpdates()
		if batch == nil {
			actions = append(actions, a)
			continue
		}
		for _, t := range batch.GetTargets() {
			if sp := batch.GetStatusPatch(); sp != nil {
				patch := proto.Clone(sp).(*pb.PatchPodStatus)
				patch.Name, patch.Uid, patch.ResourceVersion = t.GetName(), t.GetUid(), t.GetResourceVersion()
				if t.GetSetNotReady() {
					patch.SetConditions = append(patch.SetConditions, proto.Clone(batch.GetNotReadyCondition()).(*pb.Condition))
				}
				actions = append(actions, &pb.Action{
					Kind:        &pb.Action_PatchPodStatus{PatchPodStatus: patch},
					StopOnError: batch.GetStatusStopOnError(),
				})
			}
			patch := &pb.PatchPod{}
			if batch.GetPatch() != nil {
				patch = proto.Clone(batch.GetPatch()).(*pb.PatchPod)
			}
			patch.Name, patch.Uid, patch.ResourceVersion = t.GetName(), t.GetUid(), t.GetResourceVersion()
			if patch.SetAnnotations == nil {
				patch.SetAnnotations = map[string]string{}
			}
			patch.SetAnnotations[InPlaceStateAnnotation] =
				batch.GetInPlaceUpdateStatePrefix() + t.GetInPlaceUpdateState() + batch.GetInPlaceUpdateStateSuffix()
			actions = append(actions, &pb.Action{
				Kind:        &pb.Action_PatchPod{PatchPod: patch},
				StopOnError: batch.GetPatchStopOnError(),
			})
		}
		if batch.GetEventReason() == "" {
			continue
		}
		// A planner never sends events_before out of order or range; clamp so another sender's batches still
		// expand in order.
		before := min(max(int(batch.GetEventsBefore()), taken), len(old))
		events = append(events, old[taken:before]...)
		taken = before
		for _, t := range batch.GetTargets() {
			events = append(events, &pb.Event{
				Type:        batch.GetEventType(),
				Reason:      batch.GetEventReason(),
				Message:     batch.GetEventMessagePrefix() + t.GetName() + batch.GetEventMessageSuffix(),
				InvolvedPod: t.GetName(),
			})
		}
	}
	events = append(events, old[taken:]...)
	plan.Actions = actions
	plan.Events = events
}
