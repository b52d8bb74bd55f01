package main

// The simulated fleet: 20 instances of our own, kept in memory, that the planner sees as a CloneSet's pods. Its
// model of an instance is the one `clonesetctl simulate` uses (clonesetctl/sim_cluster.h), so that the same
// spec rolls out in the same batches: an instance is placed at once (round-robin over 3 nodes), its container runs
// `startDelay` after it is created or its image changes, and is ready `readyAfter` later; an instance is Ready when
// its container is ready and every readiness gate's condition is True. One chosen container start fails: that
// container runs but never becomes ready.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"cloneset.dev/planner"
	pb "cloneset.dev/planner/plannerv1"
)

const (
	revisionLabel  = "controller-revision-hash"
	lifecycleLabel = "lifecycle.apps.kruise.io/state"
	nodes          = 3
)

type kubelet struct {
	images    map[string]string // container -> the image the current attempt runs
	runningAt time.Time
	readyAt   time.Time
	failing   bool
}

// applied is what one plan did to the fleet, for the timeline.
type applied struct {
	created, deleted, updatedInPlace, lifecycle []string
}

type fleet struct {
	startDelay, readyAfter time.Duration
	failNth                int // the failNth-th container start (counted from 1 once counting is on) fails; 0: none
	starts                 int
	countStarts            bool

	version   int64
	uids      int64
	nextNode  int
	cs        *pb.CloneSet
	pods      map[string]*pb.Pod
	kubelets  map[string]*kubelet
	revisions map[string]*pb.ControllerRevision
	ownStatus map[string]string // versions our own status writes produced in the current plan
	now       time.Time
	out       applied
}

func newFleet(cs *pb.CloneSet, startDelay, readyAfter time.Duration, now time.Time) *fleet {
	f := &fleet{startDelay: startDelay, readyAfter: readyAfter, version: 100, cs: cs,
		pods: map[string]*pb.Pod{}, kubelets: map[string]*kubelet{}, revisions: map[string]*pb.ControllerRevision{}}
	// The uid clonesetctl simulate gives its CloneSet: with the same resourceVersions (every write and every
	// instance change takes the next one, as there) the states get the same random seeds, so the planner draws
	// the same instance names.
	cs.Metadata.Uid = "sim-cloneset-uid"
	cs.Metadata.Generation = 1
	cs.Metadata.ResourceVersion = f.nextVersion()
	cs.Metadata.CreationTimestamp = timestamppb.New(now)
	return f
}

func (f *fleet) nextVersion() string { f.version++; return strconv.FormatInt(f.version, 10) }

// setSpec replaces the CloneSet's spec (a new generation), as a user's edit does.
func (f *fleet) setSpec(spec *pb.CloneSetSpec) {
	f.cs.Spec = spec
	f.cs.Metadata.Generation++
	f.cs.Metadata.ResourceVersion = f.nextVersion()
}

// Snapshot implements planner.Fleet: the CloneSet, its pods (sorted by name, with the random seed of the state:
// planner.NewPlanRequest) and its revisions.
func (f *fleet) Snapshot(now time.Time) (*pb.PlanRequest, error) {
	f.now = now
	f.ownStatus = map[string]string{}
	pods := make([]*pb.Pod, 0, len(f.pods))
	for _, p := range f.pods {
		pods = append(pods, p)
	}
	var revisions []*pb.ControllerRevision
	for _, name := range sortedKeys(f.revisions) {
		revisions = append(revisions, f.revisions[name])
	}
	req := planner.NewPlanRequest(f.cs, pods, revisions, now)
	req.AcceptInPlaceBatches = true // the loop expands them
	return req, nil
}

// WriteStatus implements planner.Fleet.
func (f *fleet) WriteStatus(status *pb.CloneSetStatus) error {
	f.cs.Status = status
	return nil
}

// Apply implements planner.Fleet: one action changes the fleet; a failed precondition is a conflict.
func (f *fleet) Apply(a *pb.Action) error {
	switch k := a.Kind.(type) {
	case *pb.Action_CreateRevision:
		return f.createRevision(k.CreateRevision)
	case *pb.Action_UpdateRevision:
		r, ok := f.revisions[k.UpdateRevision.Name]
		if !ok {
			return fmt.Errorf("revision %s not found", k.UpdateRevision.Name)
		}
		if v := k.UpdateRevision.ResourceVersion; v != "" && v != r.Metadata.ResourceVersion {
			return fmt.Errorf("revision %s has been modified: %w", k.UpdateRevision.Name, planner.ErrConflict)
		}
		if k.UpdateRevision.Revision != 0 {
			r.Revision = k.UpdateRevision.Revision
		}
		r.Metadata.Labels = merge(r.Metadata.Labels, k.UpdateRevision.SetLabels)
		r.Metadata.Annotations = merge(r.Metadata.Annotations, k.UpdateRevision.SetAnnotations)
		r.Metadata.ResourceVersion = f.nextVersion()
	case *pb.Action_DeleteRevision:
		delete(f.revisions, k.DeleteRevision.Name)
	case *pb.Action_CreatePod:
		return f.createPod(k.CreatePod)
	case *pb.Action_DeletePod:
		return f.deletePod(k.DeletePod)
	case *pb.Action_PatchPod:
		return f.patchPod(k.PatchPod)
	case *pb.Action_PatchPodStatus:
		return f.patchPodStatus(k.PatchPodStatus)
	case *pb.Action_DeletePvc, *pb.Action_CreatePvc, *pb.Action_UpdatePvcOwner, *pb.Action_ExpandPvc,
		*pb.Action_CreateImagePullJob, *pb.Action_DeleteImagePullJob:
		// The fleet has no volumes and no image pre-download.
	default:
		return fmt.Errorf("action %T is not supported by this fleet", a.Kind)
	}
	return nil
}

func (f *fleet) createRevision(c *pb.CreateRevision) error {
	var doc struct {
		Metadata struct {
			Name        string            `json:"name"`
			Namespace   string            `json:"namespace"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Revision int64          `json:"revision"`
		Data     map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(c.RevisionJson), &doc); err != nil {
		return fmt.Errorf("revision_json: %w", err)
	}
	if _, ok := f.revisions[doc.Metadata.Name]; ok {
		return nil // AlreadyExists counts as done
	}
	data, _ := json.Marshal(doc.Data) // compact, keys sorted: the form the planner compares
	f.uids++
	f.revisions[doc.Metadata.Name] = &pb.ControllerRevision{
		Metadata: &pb.ObjectMeta{Name: doc.Metadata.Name, Namespace: doc.Metadata.Namespace,
			Uid: fmt.Sprintf("rev-%d", f.uids), ResourceVersion: f.nextVersion(), Labels: doc.Metadata.Labels,
			Annotations: doc.Metadata.Annotations, CreationTimestamp: timestamppb.New(f.now)},
		Revision: doc.Revision,
		DataJson: string(data),
	}
	return nil
}

func (f *fleet) createPod(c *pb.CreatePod) error {
	var doc struct {
		Metadata struct {
			Name            string            `json:"name"`
			Namespace       string            `json:"namespace"`
			Labels          map[string]string `json:"labels"`
			Annotations     map[string]string `json:"annotations"`
			Finalizers      []string          `json:"finalizers"`
			OwnerReferences []struct {
				APIVersion         string `json:"apiVersion"`
				Kind               string `json:"kind"`
				Name               string `json:"name"`
				UID                string `json:"uid"`
				Controller         bool   `json:"controller"`
				BlockOwnerDeletion bool   `json:"blockOwnerDeletion"`
			} `json:"ownerReferences"`
		} `json:"metadata"`
		Spec struct {
			Containers []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"containers"`
			ReadinessGates []struct {
				ConditionType string `json:"conditionType"`
			} `json:"readinessGates"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(c.PodJson), &doc); err != nil {
		return fmt.Errorf("pod_json: %w", err)
	}
	name := doc.Metadata.Name
	if _, ok := f.pods[name]; ok {
		return nil // left over from an earlier attempt: reused
	}
	f.uids++
	f.nextNode++
	pod := &pb.Pod{
		Metadata: &pb.ObjectMeta{Name: name, Namespace: doc.Metadata.Namespace, Uid: fmt.Sprintf("pod-uid-%d", f.uids),
			ResourceVersion: f.nextVersion(), Labels: doc.Metadata.Labels, Annotations: doc.Metadata.Annotations,
			Finalizers: doc.Metadata.Finalizers, CreationTimestamp: timestamppb.New(f.now)},
		NodeName: fmt.Sprintf("node-%d", (f.nextNode-1)%nodes+1),
		Phase:    "Pending",
	}
	for _, o := range doc.Metadata.OwnerReferences {
		pod.Metadata.OwnerReferences = append(pod.Metadata.OwnerReferences, &pb.OwnerReference{ApiVersion: o.APIVersion,
			Kind: o.Kind, Name: o.Name, Uid: o.UID, Controller: o.Controller, BlockOwnerDeletion: o.BlockOwnerDeletion})
	}
	for _, c := range doc.Spec.Containers {
		pod.Containers = append(pod.Containers, &pb.Container{Name: c.Name, Image: c.Image})
	}
	for _, g := range doc.Spec.ReadinessGates {
		pod.ReadinessGates = append(pod.ReadinessGates, g.ConditionType)
	}
	setCondition(pod, "PodScheduled", true, f.now)
	k := &kubelet{}
	f.startContainers(pod, k)
	f.pods[name] = pod
	f.kubelets[name] = k
	f.out.created = append(f.out.created, name)
	return nil
}

func (f *fleet) startContainers(pod *pb.Pod, k *kubelet) {
	k.images = map[string]string{}
	for _, c := range pod.Containers {
		k.images[c.Name] = c.Image
	}
	k.runningAt = f.now.Add(f.startDelay)
	k.readyAt = k.runningAt.Add(f.readyAfter)
	k.failing = false
	if f.countStarts {
		f.starts++
		k.failing = f.starts == f.failNth
	}
}

func (f *fleet) pod(name, uid string) (*pb.Pod, error) {
	p, ok := f.pods[name]
	if !ok {
		return nil, fmt.Errorf("pod %s not found", name)
	}
	if uid != "" && uid != p.Metadata.Uid {
		return nil, fmt.Errorf("pod %s: uid precondition failed: %w", name, planner.ErrConflict)
	}
	return p, nil
}

func (f *fleet) patchPod(patch *pb.PatchPod) error {
	p, err := f.pod(patch.Name, patch.Uid)
	if err != nil {
		return err
	}
	m := p.Metadata
	if patch.ResourceVersion != "" && patch.ResourceVersion != m.ResourceVersion && f.ownStatus[patch.Name] != m.ResourceVersion {
		return fmt.Errorf("pod %s has been modified: %w", patch.Name, planner.ErrConflict)
	}
	oldRevision, oldState := m.Labels[revisionLabel], m.Labels[lifecycleLabel]
	m.Labels = merge(m.Labels, patch.SetLabels)
	for _, k := range patch.RemoveLabels {
		delete(m.Labels, k)
	}
	m.Annotations = merge(m.Annotations, patch.SetAnnotations)
	for _, k := range patch.RemoveAnnotations {
		delete(m.Annotations, k)
	}
	for _, fin := range patch.AddFinalizers {
		if !contains(m.Finalizers, fin) {
			m.Finalizers = append(m.Finalizers, fin)
		}
	}
	for _, fin := range patch.RemoveFinalizers {
		m.Finalizers = remove(m.Finalizers, fin)
	}
	for _, c := range p.Containers {
		if image, ok := patch.ContainerImages[c.Name]; ok {
			c.Image = image
		}
	}
	for _, uid := range patch.RemoveOwnerUids {
		kept := m.OwnerReferences[:0]
		for _, o := range m.OwnerReferences {
			if o.Uid != uid {
				kept = append(kept, o)
			}
		}
		m.OwnerReferences = kept
	}
	m.ResourceVersion = f.nextVersion()
	if oldRevision != "" && m.Labels[revisionLabel] != oldRevision {
		f.out.updatedInPlace = append(f.out.updatedInPlace, patch.Name)
	}
	if newState := m.Labels[lifecycleLabel]; newState != oldState {
		f.out.lifecycle = append(f.out.lifecycle, fmt.Sprintf("%s: %s -> %s", patch.Name, dash(oldState), dash(newState)))
	}
	return nil
}

func (f *fleet) patchPodStatus(patch *pb.PatchPodStatus) error {
	p, err := f.pod(patch.Name, patch.Uid)
	if err != nil {
		return err
	}
	if patch.ResourceVersion != "" && patch.ResourceVersion != p.Metadata.ResourceVersion {
		return fmt.Errorf("pod %s status has been modified: %w", patch.Name, planner.ErrConflict)
	}
	for _, set := range patch.SetConditions {
		found := false
		for i, c := range p.Conditions {
			if c.Type == set.Type {
				p.Conditions[i] = set
				found = true
			}
		}
		if !found {
			p.Conditions = append(p.Conditions, set)
		}
	}
	p.Metadata.ResourceVersion = f.nextVersion()
	f.ownStatus[patch.Name] = p.Metadata.ResourceVersion
	return nil
}

func (f *fleet) deletePod(d *pb.DeletePod) error {
	p, ok := f.pods[d.Name]
	if !ok {
		return nil // gone already: done
	}
	if d.Uid != "" && d.Uid != p.Metadata.Uid {
		return fmt.Errorf("pod %s: uid precondition failed: %w", d.Name, planner.ErrConflict)
	}
	f.out.deleted = append(f.out.deleted, d.Name)
	if p.Metadata.DeletionTimestamp == nil {
		p.Metadata.DeletionTimestamp = timestamppb.New(f.now)
		p.Metadata.ResourceVersion = f.nextVersion()
	}
	if len(p.Metadata.Finalizers) == 0 {
		delete(f.pods, d.Name)
		delete(f.kubelets, d.Name)
	}
	return nil
}

// advance runs every instance's container up to now; true when any instance changed.
func (f *fleet) advance(now time.Time) bool {
	f.now = now
	changed := false
	for _, name := range sortedKeys(f.pods) {
		p, k := f.pods[name], f.kubelets[name]
		if p.Metadata.DeletionTimestamp != nil {
			if len(p.Metadata.Finalizers) == 0 {
				delete(f.pods, name)
				delete(f.kubelets, name)
				changed = true
			}
			continue
		}
		if f.step(p, k, now) {
			p.Metadata.ResourceVersion = f.nextVersion()
			changed = true
		}
	}
	return changed
}

func (f *fleet) step(p *pb.Pod, k *kubelet, now time.Time) bool {
	changed := false
	restart := false
	for _, c := range p.Containers {
		if k.images[c.Name] != c.Image {
			restart = true
		}
	}
	if restart && !now.Before(k.runningAt) {
		for _, cs := range p.ContainerStatuses {
			for _, c := range p.Containers {
				if c.Name == cs.Name && k.images[c.Name] != c.Image {
					cs.RestartCount++
					cs.Ready = false
				}
			}
		}
		f.startContainers(p, k)
		changed = true
	}
	running := !now.Before(k.runningAt)
	if running {
		if p.Phase != "Running" {
			p.Phase = "Running"
			changed = true
		}
		for _, c := range p.Containers {
			var status *pb.ContainerStatus
			for _, cs := range p.ContainerStatuses {
				if cs.Name == c.Name {
					status = cs
				}
			}
			if status == nil {
				status = &pb.ContainerStatus{Name: c.Name}
				p.ContainerStatuses = append(p.ContainerStatuses, status)
				changed = true
			}
			if image := k.images[c.Name]; status.Image != image {
				status.Image = image
				status.ImageId = "fleet://" + image
				status.ContainerId = fmt.Sprintf("fleet://%s/%s/%d", p.Metadata.Uid, c.Name, status.RestartCount)
				changed = true
			}
			if ready := !now.Before(k.readyAt) && !k.failing; status.Ready != ready {
				status.Ready = ready
				changed = true
			}
		}
	}
	containersReady := len(p.ContainerStatuses) == len(p.Containers) && running
	for _, cs := range p.ContainerStatuses {
		containersReady = containersReady && cs.Ready
	}
	changed = setCondition(p, "ContainersReady", containersReady, now) || changed
	ready := containersReady
	for _, gate := range p.ReadinessGates {
		c := condition(p, gate)
		ready = ready && c != nil && c.Status == "True"
	}
	return setCondition(p, "Ready", ready, now) || changed
}

// nextTransition is the earliest moment after now at which an instance changes by itself.
func (f *fleet) nextTransition(now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	consider := func(t time.Time) {
		if t.After(now) && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	minReady := time.Duration(f.cs.Spec.MinReadySeconds) * time.Second
	for name, p := range f.pods {
		k := f.kubelets[name]
		if p.Metadata.DeletionTimestamp != nil || k == nil {
			continue
		}
		consider(k.runningAt)
		if !k.failing {
			consider(k.readyAt)
		}
		if c := condition(p, "Ready"); minReady > 0 && c != nil && c.Status == "True" {
			consider(c.LastTransitionTime.AsTime().Add(minReady + time.Millisecond))
		}
	}
	return next, found
}

type counts struct {
	Desired     int `json:"desired"`
	Pods        int `json:"pods"`
	Ready       int `json:"ready"`
	Available   int `json:"available"`
	Updated     int `json:"updated"`
	Unavailable int `json:"unavailable"`
	Surge       int `json:"surge"`
}

func (f *fleet) counts(now time.Time) counts {
	c := counts{Desired: 1}
	if f.cs.Spec.Replicas != nil {
		c.Desired = int(*f.cs.Spec.Replicas)
	}
	minReady := time.Duration(f.cs.Spec.MinReadySeconds) * time.Second
	for _, p := range f.pods {
		if p.Metadata.DeletionTimestamp != nil || p.Phase == "Succeeded" || p.Phase == "Failed" {
			continue
		}
		c.Pods++
		if r := condition(p, "Ready"); r != nil && r.Status == "True" {
			c.Ready++
			if minReady == 0 || r.LastTransitionTime.AsTime().Add(minReady).Before(now) {
				c.Available++
			}
		}
		if rev := f.cs.GetStatus().GetUpdateRevision(); rev != "" && p.Metadata.Labels[revisionLabel] == rev {
			c.Updated++
		}
	}
	c.Unavailable = max(c.Desired-c.Available, 0)
	c.Surge = max(c.Pods-c.Desired, 0)
	return c
}

func (f *fleet) failedStarts() int {
	n := 0
	for _, k := range f.kubelets {
		if k.failing {
			n++
		}
	}
	return n
}

func condition(p *pb.Pod, t string) *pb.Condition {
	for _, c := range p.Conditions {
		if c.Type == t {
			return c
		}
	}
	return nil
}

// setCondition sets condition t; its transition time moves only when the status changes, as the kubelet does.
func setCondition(p *pb.Pod, t string, value bool, now time.Time) bool {
	status := "False"
	if value {
		status = "True"
	}
	if c := condition(p, t); c != nil {
		if c.Status == status {
			return false
		}
		c.Status = status
		c.LastTransitionTime = timestamppb.New(now)
		return true
	}
	p.Conditions = append(p.Conditions, &pb.Condition{Type: t, Status: status, LastTransitionTime: timestamppb.New(now)})
	return true
}

func merge(m, set map[string]string) map[string]string {
	if len(set) == 0 {
		return m
	}
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range set {
		m[k] = v
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func remove(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
