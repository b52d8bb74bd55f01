// Command kruise-revision prints the ControllerRevision that OpenKruise v1.8.0's own CloneSet code computes for
// each case of a directory, so that a test compares our planner with upstream's code instead of with values typed
// by hand. Every step is kruise-manager's: the CloneSet is decoded from JSON by the same client-go deserializer
// its informer uses (typed, case-sensitive, unknown fields dropped, no defaulting), the revision comes from
// pkg/controller/cloneset/revision (NewRevision), a taken name goes through pkg/util/history
// (CreateControllerRevision, against controller-runtime's fake client), and the pod labels through
// pkg/controller/cloneset/utils (WriteRevisionHash) with the CloneSetShortHash feature gate off and on.
//
// Usage: kruise-revision DIR
//
// Each DIR/*.json is {"cloneSet": {...}, "nameTaken": bool}. With nameTaken, a ControllerRevision with the name
// NewRevision computes and the data {"spec":{"template":{"$patch":"replace","metadata":{"labels":{"taken":"true"}}}}}
// exists first, so the name collides. One line per case, in file name order, keys sorted:
//
//	{"case":FILE,"collisionCount":N,"data":...,"label":...,"name":...,"podRevisionLabel":...,
//	 "podRevisionLabelShortHash":...,"podTemplateHash":...,"vctHash":...}
//
// or {"case":FILE,"error":true} when kruise-manager cannot decode the CloneSet (the reason goes to stderr).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	"github.com/openkruise/kruise/pkg/controller/cloneset/revision"
	clonesetutils "github.com/openkruise/kruise/pkg/controller/cloneset/utils"
	"github.com/openkruise/kruise/pkg/features"
	utilfeature "github.com/openkruise/kruise/pkg/util/feature"
	historyutil "github.com/openkruise/kruise/pkg/util/history"
	"github.com/openkruise/kruise/pkg/util/volumeclaimtemplate"
	apps "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/controller/history"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const takenData = `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"taken":"true"}}}}}`

type testCase struct {
	CloneSet  json.RawMessage `json:"cloneSet"`
	NameTaken bool            `json:"nameTaken"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kruise-revision DIR")
		os.Exit(2)
	}
	// As kruise-manager's main does: its types in client-go's scheme, which the revision package's codec uses.
	if err := appsv1alpha1.AddToScheme(clientgoscheme.Scheme); err != nil {
		fail("registering the CloneSet types: %v", err)
	}
	decoder := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(clientgoscheme.Scheme)}.
		UniversalDeserializer()

	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.json"))
	if err != nil || len(files) == 0 {
		fail("no *.json case in %s", os.Args[1])
	}
	sort.Strings(files)
	out := json.NewEncoder(os.Stdout)
	for _, file := range files {
		line, err := runCase(decoder, file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(file), err)
			line = map[string]any{"case": filepath.Base(file), "error": true}
		}
		if err := out.Encode(line); err != nil {
			fail("writing: %v", err)
		}
	}
}

func runCase(decoder runtime.Decoder, file string) (map[string]any, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		fail("%v", err)
	}
	var tc testCase
	if err := json.Unmarshal(raw, &tc); err != nil {
		fail("%s: not a case file: %v", file, err)
	}
	// As the API server stores and serves a custom resource: decoded into unstructured JSON (integers as int64,
	// other numbers as float64) and encoded again, so that a case file says 80.0 or 1.5e9 the way a client may.
	var served map[string]any
	if err := utiljson.Unmarshal(tc.CloneSet, &served); err != nil {
		fail("%s: cloneSet is not a JSON object: %v", file, err)
	}
	body, err := json.Marshal(served)
	if err != nil {
		fail("%s: %v", file, err)
	}
	cs := &appsv1alpha1.CloneSet{}
	if _, _, err := decoder.Decode(body, nil, cs); err != nil {
		return nil, fmt.Errorf("decoding the CloneSet: %w", err)
	}
	var collisionCount int32
	if cs.Status.CollisionCount != nil {
		collisionCount = *cs.Status.CollisionCount
	}
	rev, err := revision.NewRevisionControl().NewRevision(cs, 1, &collisionCount)
	if err != nil {
		return nil, fmt.Errorf("NewRevision: %w", err)
	}
	if tc.NameTaken {
		taken := &apps.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: rev.Name, Namespace: cs.Namespace},
			Data:       runtime.RawExtension{Raw: []byte(takenData)},
			Revision:   1,
		}
		cli := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(taken).Build()
		rev.Revision = 2
		if rev, err = historyutil.NewHistory(cli).CreateControllerRevision(cs, rev, &collisionCount); err != nil {
			return nil, fmt.Errorf("CreateControllerRevision: %w", err)
		}
	}
	vctHash, _ := volumeclaimtemplate.GetVCTemplatesHash(rev)
	line := map[string]any{
		"case":           filepath.Base(file),
		"collisionCount": collisionCount,
		"data":           string(rev.Data.Raw),
		"label":          rev.Labels[history.ControllerRevisionHashLabel],
		"name":           rev.Name,
		"vctHash":        vctHash,
	}
	for _, shortHash := range []bool{false, true} {
		if err := utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("%s=%t", features.CloneSetShortHash, shortHash)); err != nil {
			fail("setting the feature gate: %v", err)
		}
		pod := &corev1.Pod{}
		clonesetutils.WriteRevisionHash(pod, rev.Name)
		if shortHash {
			line["podRevisionLabelShortHash"] = pod.Labels[apps.ControllerRevisionHashLabelKey]
		} else {
			line["podRevisionLabel"] = pod.Labels[apps.ControllerRevisionHashLabelKey]
			line["podTemplateHash"] = pod.Labels[apps.DefaultDeploymentUniqueLabelKey]
		}
	}
	return line, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kruise-revision: "+format+"\n", args...)
	os.Exit(1)
}
