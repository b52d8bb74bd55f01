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
	if f.fail["conflict "+name] {
		return fmt.Errorf("pod changed: %w", planner.ErrConflict)
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
	case *pb.Action_DeleteRevision:
		return "revision:" + k.DeleteRevision.Name
	case nil:
		return "unknown"
	}
	return fmt.Sprintf("%T", a.Kind)
}

func create(id string, batch int32) *pb.Action {
	return &pb.Action{Kind: &pb.Action_CreatePod{CreatePod: &pb.CreatePod{InstanceId: id, Batch: batch,
		PodJson: `{"metadata":{"name":"pod-` + id + `"}}`}}}
}
func patch(name string, stop bool) *pb.Action {
	return &pb.Action{Kind: &pb.Action_PatchPod{PatchPod: &pb.PatchPod{Name: name}}, StopOnError: stop}
}
func statusPatch(name string) *pb.Action {
	return &pb.Action{Kind: &pb.Action_PatchPodStatus{PatchPodStatus: &pb.PatchPodStatus{Name: name}}, StopOnError: true}
}
func revision(name string) *pb.Action {
	return &pb.Action{Kind: &pb.Action_DeleteRevision{DeleteRevision: &pb.DeleteRevision{Name: name}}}
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
		{name: "a conflict ends the plan even without stop_on_error",
			actions: []*pb.Action{patch("a", false), patch("b", false)}, fail: []string{"conflict patch:a"},
			wantLog: "patch:a", wantFailed: 1, wantStopped: "patch:a"},
		{name: "a pod's actions run together, in plan order, pods by their first action",
			actions: []*pb.Action{revision("r1"), statusPatch("p1"), statusPatch("p2"), patch("p1", true), patch("p2", true), revision("r2")},
			wantLog: "revision:r1 status:p1 patch:p1 status:p2 patch:p2 revision:r2 status", wantApplied: 6},
		{name: "an unknown kind fails and its stop_on_error applies",
			actions: []*pb.Action{del("a", false), {StopOnError: true}, del("b", false)},
			wantLog: "delete:a", wantApplied: 1, wantFailed: 1, wantStopped: "unknown"},
		{name: "an unknown kind without stop_on_error: the plan goes on",
			actions: []*pb.Action{{}, del("b", false)}, wantLog: "delete:b status", wantApplied: 1, wantFailed: 1},
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
			if res.Stopped != nil && res.Stopped.Action.GetKind() == nil && !errors.Is(res.Stopped, planner.ErrUnknownAction) {
				t.Errorf("an unknown kind failed with %v, want ErrUnknownAction", res.Stopped)
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

func TestPlanSeedAndRequest(t *testing.T) {
	cs := &pb.CloneSet{Metadata: &pb.ObjectMeta{Uid: "sim-cloneset-uid", ResourceVersion: "101"}}
	// The seed planapi::PlanSeed gives this state: clonesetctl simulate's first request of the fleet example.
	if got := planner.PlanSeed(cs, nil); got != 8678479194722194871 {
		t.Errorf("PlanSeed: got %d, want 8678479194722194871", got)
	}
	pod := func(name, rv string) *pb.Pod {
		return &pb.Pod{Metadata: &pb.ObjectMeta{Name: name, ResourceVersion: rv}}
	}
	req := planner.NewPlanRequest(cs, []*pb.Pod{pod("b", "7"), pod("a", "9")}, nil, time.Unix(100, 0))
	if req.Pods[0].Metadata.Name != "a" || req.Pods[1].Metadata.Name != "b" {
		t.Errorf("pods not sorted by name: %v", req.Pods)
	}
	if want := planner.PlanSeed(cs, []*pb.Pod{pod("a", "9"), pod("b", "7")}); req.RandomSeed != want ||
		want == planner.PlanSeed(cs, []*pb.Pod{pod("b", "7"), pod("a", "9")}) {
		t.Errorf("seed %d is not the seed of the name order (%d)", req.RandomSeed, want)
	}
	if req.Now.AsTime() != time.Unix(100, 0).UTC() {
		t.Errorf("now: %v", req.Now.AsTime())
	}
}
