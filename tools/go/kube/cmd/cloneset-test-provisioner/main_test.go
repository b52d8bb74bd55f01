package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecideVolume(t *testing.T) {
	served := map[string]bool{"kubernetes.io/aws-ebs": true, ourName: true}
	str := func(s string) *string { return &s }
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	retain := corev1.PersistentVolumeReclaimRetain
	ebs := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast-ssd"}, Provisioner: "kubernetes.io/aws-ebs"}
	lazy := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: ourName,
		VolumeBindingMode: &wait, ReclaimPolicy: &retain}
	other := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "nfs"}, Provisioner: "example.com/nfs"}
	claim := func(class *string, mutate func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "workspace-a", UID: "u1"},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class,
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("50Gi")}}},
		}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name        string
		claim       *corev1.PersistentVolumeClaim
		class       *storagev1.StorageClass
		wantReason  string // substring; "" means a volume is created
		wantReclaim corev1.PersistentVolumeReclaimPolicy
		wantNode    string
	}{
		{name: "seed class, immediate", claim: claim(str("fast-ssd"), nil), class: ebs,
			wantReclaim: corev1.PersistentVolumeReclaimDelete},
		{name: "class of another provisioner", claim: claim(str("nfs"), nil), class: other,
			wantReason: "not one of ours"},
		{name: "class missing", claim: claim(str("gone"), nil), wantReason: `"gone" not found`},
		{name: "no class", claim: claim(nil, nil), wantReason: "no storage class"},
		{name: "already bound", claim: claim(str("fast-ssd"), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.VolumeName = "pv1"
		}), class: ebs, wantReason: "names a volume"},
		{name: "being deleted", claim: claim(str("fast-ssd"), func(c *corev1.PersistentVolumeClaim) {
			c.DeletionTimestamp = &now
		}), class: ebs, wantReason: "being deleted"},
		{name: "wait for first consumer, no node yet", claim: claim(str("standard"), nil), class: lazy,
			wantReason: "WaitForFirstConsumer"},
		{name: "wait for first consumer, node selected", claim: claim(str("standard"),
			func(c *corev1.PersistentVolumeClaim) {
				c.Annotations = map[string]string{annSelectedNode: "kwok-node-1"}
			}),
			class: lazy, wantReclaim: corev1.PersistentVolumeReclaimRetain, wantNode: "kwok-node-1"},
		{name: "no storage request", claim: claim(str("fast-ssd"), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests = nil
		}), class: ebs, wantReason: "spec.resources.requests.storage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv, reason := decideVolume(tc.claim, tc.class, served, "/vol")
			if tc.wantReason != "" {
				if pv != nil || !strings.Contains(reason, tc.wantReason) {
					t.Fatalf("want no volume and a reason with %q, got volume %v reason %q", tc.wantReason, pv != nil, reason)
				}
				return
			}
			if pv == nil {
				t.Fatalf("want a volume, got reason %q", reason)
			}
			ref := pv.Spec.ClaimRef
			if ref == nil || ref.Namespace != "ns" || ref.Name != "workspace-a" || ref.UID != "u1" {
				t.Errorf("claimRef %+v does not name the claim with its uid", ref)
			}
			if pv.Name != "pvc-u1" || pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != "/vol/pvc-u1" {
				t.Errorf("name %q hostPath %+v", pv.Name, pv.Spec.HostPath)
			}
			if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "50Gi" {
				t.Errorf("capacity %s, want 50Gi", got.String())
			}
			if pv.Spec.StorageClassName != tc.class.Name || pv.Spec.PersistentVolumeReclaimPolicy != tc.wantReclaim {
				t.Errorf("class %q reclaim %q, want %q %q", pv.Spec.StorageClassName,
					pv.Spec.PersistentVolumeReclaimPolicy, tc.class.Name, tc.wantReclaim)
			}
			if pv.Annotations[annProvisionedBy] != ourName {
				t.Errorf("provisioned-by %q", pv.Annotations[annProvisionedBy])
			}
			gotNode := ""
			if pv.Spec.NodeAffinity != nil {
				gotNode = pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0]
			}
			if gotNode != tc.wantNode {
				t.Errorf("node affinity %q, want %q", gotNode, tc.wantNode)
			}
		})
	}
}

func TestReleasedOurs(t *testing.T) {
	pv := func(by string, phase corev1.PersistentVolumePhase, policy corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annProvisionedBy: by}},
			Spec:   corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy},
			Status: corev1.PersistentVolumeStatus{Phase: phase}}
	}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want bool
	}{
		{"ours, released, delete", pv(ourName, corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), true},
		{"ours, bound", pv(ourName, corev1.VolumeBound, corev1.PersistentVolumeReclaimDelete), false},
		{"ours, released, retain", pv(ourName, corev1.VolumeReleased, corev1.PersistentVolumeReclaimRetain), false},
		{"someone else's", pv("example.com/nfs", corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), false},
	} {
		if got := releasedOurs(tc.pv); got != tc.want {
			t.Errorf("%s: releasedOurs = %v, want %v", tc.name, got, tc.want)
		}
	}
}
