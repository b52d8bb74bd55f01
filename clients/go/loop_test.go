package planner_test

// The loop's rules without a planner: ApplyPlan's order, stops and status write, ExpandInPlaceBatches' actions and
// events. Table-driven; the fleet records what it was asked to do.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"cloneset.dev/planner"
	pb "cloneset.dev/planner/plannerv1"
)

type recordingFleet struct {
	fail   map[string]bool // action names that fail
	log    []string
	status *pb.CloneSetStatus
}

func (f *recordingFleet) Snapshot(time.Time) (*pb.PlanRequest, error) { return &pb.PlanRequest{}, nil }
func (f *recordingFleet) WriteStatus(s *pb.CloneSetStatus) error {
	f.log = append(f.log, "status")
	f.status = s
	return nil
}
func (f *recordingFleet) Apply(a *pb.Action) error {
	name := actionName(a)
	f.log = append(f.log, name)
	if f.fail[name] {
		return errors.New("refused")
	}
	return nil
}

func actionName(a *pb.Action) string {
	switch k := a.Kind.(type) {
	case *pb.Action_CreatePod:
		return fmt.Sprintf("create:%s/b%d", k.CreatePod.InstanceId, k.CreatePod.Batch)
	case *pb.Action_DeletePod:
		return "delete:" + k.DeletePod.Name
	case *pb.Action_PatchPod:
		return "patch:" + k.PatchPod.Name
	case *pb.Action_PatchPodStatus:
		return "status:" + k.PatchPodStatus.Name
	}
	return fmt.Sprintf("%T", a.Kind)
}

func create(id string, batch int32) *pb.Action {
	return &pb.Action{Kind: &pb.Action_CreatePod{CreatePod: &pb.CreatePod{InstanceId: id, Batch: batch}}}
}
func del(name string, stop bool) *pb.Action {
	return &pb.Action{Kind: &pb.Action_DeletePod{DeletePod: &pb.DeletePod{Name: name}}, StopOnError: stop}
}

func TestApplyPlan(t *testing.T) {
	cases := []struct {
		name        string
		actions     []*pb.Action
		fail        []string
		wantLog     string
		wantApplied int
		wantFailed  int
		wantStopped string // the stopped action's name, "" for none
	}{
		{name: "all in order, status last", actions: []*pb.Action{del("a", true), del("b", false)},
			wantLog: "delete:a delete:b status", wantApplied: 2},
		{name: "a failure without stop_on_error goes on", actions: []*pb.Action{del("a", false), del("b", false)},
			fail: []string{"delete:a"}, wantLog: "delete:a delete:b status", wantApplied: 1, wantFailed: 1},
		{name: "stop_on_error ends the plan, no status", actions: []*pb.Action{del("a", true), del("b", false)},
			fail: []string{"delete:a"}, wantLog: "delete:a", wantFailed: 1, wantStopped: "delete:a"},
		{name: "a failed creation ends the plan after its slow-start batch",
			actions: []*pb.Action{create("x", 0), create("y", 1), create("z", 1), create("w", 2)},
			fail:    []string{"create:y/b1"}, wantLog: "create:x/b0 create:y/b1 create:z/b1", wantApplied: 2,
			wantFailed: 1, wantStopped: "create:y/b1"},
		{name: "a failed creation in the last batch: no status", actions: []*pb.Action{create("x", 0)},
			fail: []string{"create:x/b0"}, wantLog: "create:x/b0", wantFailed: 1, wantStopped: "create:x/b0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &recordingFleet{fail: map[string]bool{}}
			for _, n := range c.fail {
				f.fail[n] = true
			}
			plan := &pb.PlanResponse{Actions: c.actions, WriteStatus: true, Status: &pb.CloneSetStatus{Replicas: 3},
				RequeueAfter: durationpb.New(1500 * time.Millisecond)}
			res := planner.ApplyPlan(plan, f)
			if got := strings.Join(f.log, " "); got != c.wantLog {
				t.Errorf("log: got %q, want %q", got, c.wantLog)
			}
			if res.Applied != c.wantApplied || len(res.Failed) != c.wantFailed {
				t.Errorf("applied %d failed %d, want %d and %d", res.Applied, len(res.Failed), c.wantApplied, c.wantFailed)
			}
			stopped := ""
			if res.Stopped != nil {
				stopped = actionName(res.Stopped.Action)
			}
			if stopped != c.wantStopped {
				t.Errorf("stopped: got %q, want %q", stopped, c.wantStopped)
			}
			if res.RequeueAfter != 1500*time.Millisecond {
				t.Errorf("requeue after %v, want 1.5s", res.RequeueAfter)
			}
		})
	}
}

func TestExpandInPlaceBatches(t *testing.T) {
	batch := &pb.StartInPlaceUpdates{
		StatusPatch:              &pb.PatchPodStatus{SetConditions: []*pb.Condition{{Type: "InPlaceUpdateReady", Status: "False"}}, Purpose: "start-in-place-update"},
		StatusStopOnError:        true,
		NotReadyCondition:        &pb.Condition{Type: "Ready", Status: "False"},
		Patch:                    &pb.PatchPod{ContainerImages: map[string]string{"main": "v2"}, Purpose: "in-place-update"},
		PatchStopOnError:         true,
		EventType:                pb.EventType_NORMAL,
		EventReason:              "SuccessfulUpdatePodInPlace",
		EventMessagePrefix:       "successfully update pod ",
		EventMessageSuffix:       " in-place",
		EventsBefore:             1,
		InPlaceUpdateStatePrefix: `{"revision":"r2",`,
		InPlaceUpdateStateSuffix: `}`,
		Targets: []*pb.StartInPlaceUpdates_Target{
			{Name: "p1", Uid: "u1", ResourceVersion: "11", InPlaceUpdateState: `"a":1`, SetNotReady: true},
			{Name: "p2", Uid: "u2", ResourceVersion: "12", InPlaceUpdateState: `"a":2`},
		},
	}
	plan := &pb.PlanResponse{
		Actions: []*pb.Action{del("old", false), {Kind: &pb.Action_StartInPlaceUpdates{StartInPlaceUpdates: batch}}, del("after", false)},
		Events:  []*pb.Event{{Reason: "First"}, {Reason: "Last"}},
	}
	planner.ExpandInPlaceBatches(plan)
	var names []string
	for _, a := range plan.Actions {
		names = append(names, actionName(a))
	}
	if got, want := strings.Join(names, " "), "delete:old status:p1 patch:p1 status:p2 patch:p2 delete:after"; got != want {
		t.Fatalf("actions: got %q, want %q", got, want)
	}
	s1 := plan.Actions[1].GetPatchPodStatus()
	wantS1 := &pb.PatchPodStatus{Name: "p1", Uid: "u1", ResourceVersion: "11", Purpose: "start-in-place-update",
		SetConditions: []*pb.Condition{{Type: "InPlaceUpdateReady", Status: "False"}, {Type: "Ready", Status: "False"}}}
	if !proto.Equal(s1, wantS1) || !plan.Actions[1].StopOnError {
		t.Errorf("p1 status write: %v", s1)
	}
	if n := len(plan.Actions[3].GetPatchPodStatus().SetConditions); n != 1 {
		t.Errorf("p2 (not set_not_ready) has %d conditions, want 1", n)
	}
	p2 := plan.Actions[4].GetPatchPod()
	if p2.Name != "p2" || p2.ResourceVersion != "12" || p2.SetAnnotations[planner.InPlaceStateAnnotation] != `{"revision":"r2","a":2}` ||
		p2.ContainerImages["main"] != "v2" {
		t.Errorf("p2 patch: %v", p2)
	}
	if batch.Patch.SetAnnotations != nil {
		t.Errorf("the batch's shared patch was changed: %v", batch.Patch)
	}
	var events []string
	for _, e := range plan.Events {
		events = append(events, e.Reason+"/"+e.InvolvedPod+"/"+e.Message)
	}
	want := "First// SuccessfulUpdatePodInPlace/p1/successfully update pod p1 in-place " +
		"SuccessfulUpdatePodInPlace/p2/successfully update pod p2 in-place Last//"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}
