// Command cloneset-test-provisioner is the real-cluster backend's volume provisioner (`./run up --cluster real`).
// A real cluster has no storage driver for the test StorageClasses (the seeds ask for `kubernetes.io/aws-ebs`,
// which Kubernetes 1.34 hands to an external CSI driver), so per-pod PVCs would stay Pending. This client plays
// the external provisioner for the classes whose provisioner it is given: for each unbound claim of such a class
// it creates a hostPath PersistentVolume pre-bound to the claim (claimRef with the claim's uid), and the
// PersistentVolume controller of kube-controller-manager then binds the two as it would for any provisioned
// volume. Claims of WaitForFirstConsumer classes wait for the scheduler's selected-node annotation. Released
// volumes it provisioned with reclaim policy Delete are deleted again, as an external provisioner does.
// No container ever mounts these volumes (kwok nodes run no containers): the hostPath only names a directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// provisionedBy is the annotation the PersistentVolume controller reads to learn which provisioner owns a volume;
// naming ourselves (not the class's in-tree name) makes it wait for us to delete released volumes.
const (
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	ourName          = "cloneset.test/hostpath-provisioner"
)

// decideVolume returns the PersistentVolume to create for claim, or nil and the reason it waits or is not ours.
// Pure: the claim, its class (nil when absent), the provisioners served and the hostPath root are the inputs.
func decideVolume(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, served map[string]bool,
	root string) (*corev1.PersistentVolume, string) {
	switch {
	case claim.DeletionTimestamp != nil:
		return nil, "claim is being deleted"
	case claim.Spec.VolumeName != "":
		return nil, "claim names a volume already"
	case claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName == "":
		return nil, "claim has no storage class"
	case class == nil:
		return nil, fmt.Sprintf("storage class %q not found", *claim.Spec.StorageClassName)
	case !served[class.Provisioner]:
		return nil, fmt.Sprintf("storage class %q has provisioner %q, not one of ours", class.Name, class.Provisioner)
	case class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer &&
		claim.Annotations[annSelectedNode] == "":
		return nil, "waiting for the scheduler to select a node (WaitForFirstConsumer)"
	}
	size, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil, "claim has no spec.resources.requests.storage"
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	name := "pvc-" + string(claim.UID)
	hostPathType := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: ourName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(root, name), Type: &hostPathType},
			},
		},
	}
	if node := claim.Annotations[annSelectedNode]; node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	}
	return pv, ""
}

// releasedOurs: a volume we provisioned whose claim is gone and whose policy asks for deletion.
func releasedOurs(pv *corev1.PersistentVolume) bool {
	return pv.Annotations[annProvisionedBy] == ourName && pv.Status.Phase == corev1.VolumeReleased &&
		pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete && pv.DeletionTimestamp == nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	provisioners := flag.String("provisioners", "kubernetes.io/aws-ebs,"+ourName,
		"comma-separated StorageClass provisioner names whose claims this provisioner serves")
	root := flag.String("root", "/tmp/cloneset-test-volumes", "directory the hostPath volumes name")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cloneset-test-provisioner: --kubeconfig is required")
		os.Exit(2)
	}
	served := map[string]bool{}
	for _, p := range strings.Split(*provisioners, ",") {
		if p = strings.TrimSpace(p); p != "" {
			served[p] = true
		}
	}
	if len(served) == 0 {
		fmt.Fprintln(os.Stderr, "cloneset-test-provisioner: --provisioners names no provisioner")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cloneset-test-provisioner: --kubeconfig %s: %v\n", *kubeconfig, err)
		os.Exit(2)
	}
	cfg.UserAgent = "cloneset-test-provisioner"
	client := kubernetes.NewForConfigOrDie(cfg)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The resync retries claims whose create failed or whose class appeared later.
	factory := informers.NewSharedInformerFactory(client, 30*time.Second)
	claims := factory.Core().V1().PersistentVolumeClaims()
	volumes := factory.Core().V1().PersistentVolumes()
	classes := factory.Storage().V1().StorageClasses()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(prefix string) func(obj any) {
		return func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(prefix + key)
			}
		}
	}
	handler := func(prefix string) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{AddFunc: enqueue(prefix),
			UpdateFunc: func(_, obj any) { enqueue(prefix)(obj) }}
	}
	if _, err := claims.Informer().AddEventHandler(handler("pvc/")); err != nil {
		panic(err)
	}
	if _, err := volumes.Informer().AddEventHandler(handler("pv/")); err != nil {
		panic(err)
	}
	classes.Informer() // registered before Start so that it is listed
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	fmt.Printf("cloneset-test-provisioner: serving provisioners %s, volumes under %s\n", *provisioners, *root)

	process := func(key string) error {
		if name, ok := strings.CutPrefix(key, "pv/"); ok {
			pv, err := volumes.Lister().Get(name)
			if apierrors.IsNotFound(err) || (err == nil && !releasedOurs(pv)) {
				return nil
			} else if err != nil {
				return err
			}
			err = client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			_ = os.RemoveAll(pv.Spec.HostPath.Path)
			fmt.Printf("deleted released volume %s\n", name)
			return nil
		}
		ns, name, _ := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, "pvc/"))
		claim, err := claims.Lister().PersistentVolumeClaims(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		var class *storagev1.StorageClass
		if claim.Spec.StorageClassName != nil {
			class, _ = classes.Lister().Get(*claim.Spec.StorageClassName)
		}
		pv, _ := decideVolume(claim, class, served, *root)
		if pv == nil {
			return nil
		}
		if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}
		fmt.Printf("provisioned %s for claim %s/%s\n", pv.Name, ns, name)
		return nil
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			if err := process(key); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v (retrying)\n", key, err)
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	}, time.Second)
	<-ctx.Done()
	queue.ShutDown()
}
