#!/usr/bin/python3
"""The embedded cluster driven through Debian's official Kubernetes Python client (python3-kubernetes).

Backend: the cluster of $PYCLIENT_KUBECONFIG when it is set (e.g. the real control plane of `./run up --cluster
real`: `PYCLIENT_KUBECONFIG=.run/kubeconfig ctest -R pyclient`), so the same assertions hold for both; else, with
--devcluster BIN, that cloneset-devcluster started on 127.0.0.1 port 0 and stopped at the end; else $KUBECONFIG.
It works in its own namespace, which it deletes.

Usage: pyclient_test.py [--devcluster BIN] [--repo ROOT] [unittest args]
"""
import argparse
import base64
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid

try:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError:
    sys.exit("pyclient_test: the Python module 'kubernetes' is missing: install Debian's python3-kubernetes "
             "(./run deps) and run this with /usr/bin/python3")

ARGS = None
GROUP, VERSION, PLURAL = "apps.kruise.io", "v1alpha1", "clonesets"


def wait_for(what, predicate, timeout=20.0):
    """Polls predicate (a real cluster's controllers act asynchronously) and fails naming what did not happen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Backend:
    def __init__(self):
        self.proc = None
        self.workdir = tempfile.mkdtemp(prefix="pyclient-")
        if ARGS.devcluster and os.environ.get("PYCLIENT_KUBECONFIG"):
            ARGS.devcluster = None  # the environment names the backend: also the bookmark patience of a real one
        if ARGS.devcluster:
            kubeconfig = os.path.join(self.workdir, "kubeconfig")
            out = open(os.path.join(self.workdir, "server.out"), "w")
            # One simulated node: the PVC test needs a scheduled pod.
            self.proc = subprocess.Popen([ARGS.devcluster, "--listen=127.0.0.1:0", f"--kubeconfig={kubeconfig}",
                                          "--nodes=1"], stdout=out, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                text = open(out.name).read()
                if re.search(r"^listening on ", text, re.M):
                    break
                if self.proc.poll() is not None:
                    raise RuntimeError(f"cloneset-devcluster exited: {text}")
                time.sleep(0.05)
            else:
                raise RuntimeError("cloneset-devcluster did not start within 20s")
        else:
            kubeconfig = os.environ.get("PYCLIENT_KUBECONFIG") or os.environ.get("KUBECONFIG")
            if not kubeconfig:
                raise RuntimeError("no backend: pass --devcluster BIN or set PYCLIENT_KUBECONFIG")
        self.kubeconfig = kubeconfig
        config.load_kube_config(config_file=kubeconfig)

    def close(self):
        if self.proc:
            # Close the client's keep-alive connections first: the server waits for open connections on SIGTERM.
            import gc
            gc.collect()
            for api in (getattr(ClusterTest, "core", None), getattr(ClusterTest, "custom", None)):
                if api is not None:
                    api.api_client.rest_client.pool_manager.clear()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                print("pyclient_test: cloneset-devcluster did not stop within 30s of SIGTERM; killed",
                      file=sys.stderr)
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


BACKEND = None


class ClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.core = client.CoreV1Api()
        cls.custom = client.CustomObjectsApi()
        cls.ns = "pyclient-" + uuid.uuid4().hex[:8]
        cls.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=cls.ns)))
        ext = client.ApiextensionsV1Api()
        try:
            ext.read_custom_resource_definition("clonesets.apps.kruise.io")
        except ApiException as e:
            if e.status != 404:
                raise
            import yaml
            with open(os.path.join(ARGS.repo, "charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml")) as f:
                client.ApiextensionsV1Api().create_custom_resource_definition(yaml.safe_load(f))
        wait_for("the CloneSet CRD to be served", lambda: _served())

    @classmethod
    def tearDownClass(cls):
        cls.core.delete_namespace(cls.ns)

    def cloneset(self, name, replicas=2):
        return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "CloneSet", "metadata": {"name": name},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}}

    def configmap(self, name, labels=None):
        return self.core.create_namespaced_config_map(
            self.ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
                                        data={"k": name}))

    # ---- list, selectors, paging ------------------------------------------------------------------------------

    def test_list_with_label_and_field_selectors(self):
        for i, tier in enumerate(["web", "web", "db"]):
            self.configmap(f"sel-{i}", {"tier": tier, "suite": "sel"})
        web = self.core.list_namespaced_config_map(self.ns, label_selector="suite=sel,tier=web")
        self.assertEqual(sorted(c.metadata.name for c in web.items), ["sel-0", "sel-1"])
        notweb = self.core.list_namespaced_config_map(self.ns, label_selector="suite=sel,tier notin (web)")
        self.assertEqual([c.metadata.name for c in notweb.items], ["sel-2"])
        one = self.core.list_namespaced_config_map(self.ns, field_selector="metadata.name=sel-1")
        self.assertEqual([c.metadata.name for c in one.items], ["sel-1"])
        self.assertTrue(web.metadata.resource_version)

    def test_paging_with_limit_and_continue(self):
        for i in range(7):
            self.configmap(f"page-{i}", {"suite": "page"})
        names, token, pages = [], None, 0
        while True:
            page = self.core.list_namespaced_config_map(self.ns, label_selector="suite=page", limit=3,
                                                        _continue=token)
            pages += 1
            self.assertLessEqual(len(page.items), 3)
            names += [c.metadata.name for c in page.items]
            token = page.metadata._continue
            if not token:
                break
            # With a selector the server cannot count what is left, so it says nothing.
            self.assertIsNone(page.metadata.remaining_item_count)
        self.assertEqual(pages, 3)
        self.assertEqual(sorted(names), [f"page-{i}" for i in range(7)])
        first = self.core.list_namespaced_config_map(self.ns, limit=1)
        self.assertGreaterEqual(first.metadata.remaining_item_count, 6)

    # ---- watch --------------------------------------------------------------------------------------------------

    def test_watch_with_bookmarks_sees_changes(self):
        rv = self.core.list_namespaced_config_map(self.ns).metadata.resource_version
        name = "watched-" + uuid.uuid4().hex[:6]
        timer = threading.Timer(0.5, lambda: self.configmap(name, {"suite": "watch"}))
        timer.start()
        w = watch.Watch()
        seen = []
        try:
            for ev in w.stream(self.core.list_namespaced_config_map, self.ns, resource_version=rv,
                               allow_watch_bookmarks=True, timeout_seconds=15):
                obj = ev["object"]
                if ev["type"] == "BOOKMARK":
                    # A bookmark carries only a resourceVersion (the client hands it over as a raw dict).
                    md = obj["metadata"] if isinstance(obj, dict) else obj.metadata
                    self.assertTrue(md["resourceVersion"] if isinstance(md, dict) else md.resource_version)
                    continue
                seen.append((ev["type"], obj.metadata.name))
                if obj.metadata.name == name:
                    w.stop()
        finally:
            timer.cancel()
        self.assertIn(("ADDED", name), seen)

    def test_watch_bookmark_arrives(self):
        # The embedded cluster sends a bookmark after a second without events, kube-apiserver about once a minute
        # and 2 s before the watch's timeout: 150 s gives a loaded machine two chances.
        patience = 10 if ARGS.devcluster else 150
        rv = self.core.list_namespaced_config_map(self.ns).metadata.resource_version
        w = watch.Watch()
        bookmark_rv = None
        started = time.monotonic()
        for ev in w.stream(self.core.list_namespaced_config_map, self.ns, resource_version=rv,
                           allow_watch_bookmarks=True, timeout_seconds=patience):
            if ev["type"] == "BOOKMARK":
                obj = ev["object"]
                md = obj["metadata"] if isinstance(obj, dict) else obj.metadata
                bookmark_rv = md["resourceVersion"] if isinstance(md, dict) else md.resource_version
                w.stop()
        self.assertIsNotNone(bookmark_rv, f"no BOOKMARK within {time.monotonic() - started:.0f}s")
        self.assertGreaterEqual(int(bookmark_rv), int(rv))

    # ---- custom objects with scale and status subresources -------------------------------------------------

    def test_custom_objects_scale_and_status(self):
        cs = self.custom.create_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, self.cloneset("cs-a"))
        # Schema defaults are applied at admission.
        self.assertEqual(cs["spec"]["updateStrategy"]["maxUnavailable"], "20%")
        self.assertEqual(cs["spec"]["revisionHistoryLimit"], 10)
        self.custom.patch_namespaced_custom_object_scale(GROUP, VERSION, self.ns, PLURAL, "cs-a",
                                                         {"spec": {"replicas": 4}})
        scale = self.custom.get_namespaced_custom_object_scale(GROUP, VERSION, self.ns, PLURAL, "cs-a")
        self.assertEqual(scale["spec"]["replicas"], 4)
        self.assertEqual(scale["kind"], "Scale")
        got = self.custom.get_namespaced_custom_object_status(GROUP, VERSION, self.ns, PLURAL, "cs-a")
        status = {"replicas": 0, "observedGeneration": got["metadata"]["generation"], "labelSelector": "app=cs-a"}
        got["status"] = status
        self.custom.replace_namespaced_custom_object_status(GROUP, VERSION, self.ns, PLURAL, "cs-a", got)
        after = self.custom.get_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, "cs-a")
        self.assertEqual(after["status"]["labelSelector"], "app=cs-a")
        self.assertEqual(after["spec"]["replicas"], 4)
        listed = self.custom.list_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL,
                                                           field_selector="metadata.name=cs-a")
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], ["cs-a"])

    def test_invalid_cloneset_is_refused_at_admission(self):
        cases = [
            ("replicas", lambda s: s["spec"].update(replicas=-1), "spec.replicas",
             "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
            ("type", lambda s: s["spec"].update(updateStrategy={"type": "Rolling"}), "spec.updateStrategy.type",
             'Unsupported value: "Rolling"'),
            ("partition", lambda s: s["spec"].update(updateStrategy={"partition": "abc"}),
             "spec.updateStrategy.partition", "should match"),
            ("selector", lambda s: s["spec"]["template"]["metadata"]["labels"].update(app="other"), "spec",
             "`selector` does not match template `labels`"),
        ]
        for name, edit, field, message in cases:
            with self.subTest(name):
                body = self.cloneset("bad-" + name)
                edit(body)
                with self.assertRaises(ApiException) as ctx:
                    self.custom.create_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, body)
                self.assertEqual(ctx.exception.status, 422, ctx.exception.body)
                import json
                status = json.loads(ctx.exception.body)
                self.assertEqual(status["reason"], "Invalid")
                self.assertIn(message, status["message"])
                self.assertIn(field, [c.get("field") for c in status["details"]["causes"]])

    def test_unknown_fields_strict_and_pruned(self):
        body = self.cloneset("typo")
        body["spec"]["replicaz"] = 3
        api = client.ApiClient()
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{self.ns}/{PLURAL}"
        with self.assertRaises(ApiException) as ctx:
            api.call_api(path, "POST", query_params=[("fieldValidation", "Strict")], body=body,
                         header_params={"Content-Type": "application/json", "Accept": "application/json"},
                         auth_settings=["BearerToken"], response_type="object")
        self.assertEqual(ctx.exception.status, 400)
        import json
        self.assertIn('unknown field "spec.replicaz"', json.loads(ctx.exception.body)["message"])
        stored = self.custom.create_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, body)
        self.assertNotIn("replicaz", stored["spec"])

    # ---- Secrets, events, PVCs, limits ---------------------------------------------------------------------------

    def test_secret_string_data_is_merged(self):
        s = self.core.create_namespaced_secret(self.ns, client.V1Secret(
            metadata=client.V1ObjectMeta(name="creds"), data={"a": base64.b64encode(b"x").decode()},
            string_data={"password": "hunter2"}))
        self.assertIsNone(s.string_data)
        self.assertEqual(base64.b64decode(s.data["password"]), b"hunter2")
        self.assertEqual(base64.b64decode(self.core.read_namespaced_secret("creds", self.ns).data["a"]), b"x")

    def test_events_in_both_groups(self):
        ref = client.V1ObjectReference(kind="ConfigMap", name="ev-target", namespace=self.ns)
        # A new-style event (eventTime, action, reporting*): the events.k8s.io/v1 model of the client requires
        # eventTime, which a real server leaves null for events written without it.
        self.core.create_namespaced_event(self.ns, client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="ev-core"), involved_object=ref, reason="Tested",
            message="from core", type="Normal", event_time=datetime.datetime.now(datetime.timezone.utc),
            action="Test", reporting_component="pyclient", reporting_instance="pyclient-1"))
        events = client.EventsV1Api()
        got = events.read_namespaced_event("ev-core", self.ns)
        self.assertEqual(got.note, "from core")
        self.assertEqual(got.regarding.name, "ev-target")
        events.create_namespaced_event(self.ns, client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="ev-new"), event_time=datetime.datetime.now(datetime.timezone.utc),
            regarding=ref, reason="Tested", note="from events.k8s.io", type="Normal", action="Test",
            reporting_controller="pyclient", reporting_instance="pyclient-1"))
        core_view = self.core.read_namespaced_event("ev-new", self.ns)
        self.assertEqual(core_view.message, "from events.k8s.io")
        names = [e.metadata.name for e in events.list_namespaced_event(self.ns).items]
        self.assertIn("ev-core", names)
        self.assertIn("ev-new", names)
        selected = events.list_namespaced_event(self.ns, field_selector="regarding.name=ev-target,reason=Tested")
        self.assertEqual(sorted(e.metadata.name for e in selected.items), ["ev-core", "ev-new"])

    def test_pvc_in_use_is_protected(self):
        # Only a scheduled pod holds its claim (the pvc-protection controller ignores pods not on a node), and a pod
        # is scheduled once its claim is bound: use the default StorageClass, or a class of our own where there is
        # none (the embedded cluster binds claims of any class that exists).
        storage = client.StorageV1Api()
        default = [c.metadata.name for c in storage.list_storage_class().items
                   if (c.metadata.annotations or {}).get("storageclass.kubernetes.io/is-default-class") == "true"]
        class_name = default[0] if default else self.ns
        if not default:
            storage.create_storage_class(client.V1StorageClass(
                metadata=client.V1ObjectMeta(name=class_name), provisioner="pyclient.test/none"))
            self.addCleanup(storage.delete_storage_class, class_name)
        self.core.create_namespaced_persistent_volume_claim(self.ns, client.V1PersistentVolumeClaim(
            metadata=client.V1ObjectMeta(name="data"),
            spec=client.V1PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], storage_class_name=class_name,
                                                    resources=client.V1ResourceRequirements(
                                                        requests={"storage": "1Gi"}))))
        pvc = self.core.read_namespaced_persistent_volume_claim("data", self.ns)
        self.assertIn("kubernetes.io/pvc-protection", pvc.metadata.finalizers)
        self.core.create_namespaced_pod(self.ns, client.V1Pod(
            metadata=client.V1ObjectMeta(name="user"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")],
                                  volumes=[client.V1Volume(name="v", persistent_volume_claim=client.
                                                           V1PersistentVolumeClaimVolumeSource(claim_name="data"))])))
        wait_for("the pod using the claim to be scheduled",
                 lambda: self.core.read_namespaced_pod("user", self.ns).spec.node_name, timeout=60)
        self.core.delete_namespaced_persistent_volume_claim("data", self.ns)
        time.sleep(1)  # give a real cluster's pvc-protection controller time to (wrongly) let it go
        pvc = self.core.read_namespaced_persistent_volume_claim("data", self.ns)
        self.assertIsNotNone(pvc.metadata.deletion_timestamp)
        self.core.delete_namespaced_pod("user", self.ns, grace_period_seconds=0)

        def gone():
            try:
                self.core.read_namespaced_persistent_volume_claim("data", self.ns)
                return False
            except ApiException as e:
                return e.status == 404
        wait_for("the PVC to go once its pod is deleted", gone, timeout=60)

    def test_annotations_over_256k_are_refused(self):
        with self.assertRaises(ApiException) as ctx:
            self.core.create_namespaced_config_map(self.ns, client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="big", annotations={"a": "x" * (300 * 1024)})))
        self.assertEqual(ctx.exception.status, 422)
        self.assertIn("metadata.annotations: Too long: may not be more than 262144 bytes", ctx.exception.body)

    def test_version(self):
        v = client.VersionApi().get_code()
        self.assertEqual(v.major, "1")
        self.assertTrue(v.git_version.startswith("v1."))


def _served():
    try:
        client.CustomObjectsApi().list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, limit=1)
        return True
    except ApiException:
        return False


def main():
    global ARGS, BACKEND
    parser = argparse.ArgumentParser()
    parser.add_argument("--devcluster", help="start this cloneset-devcluster binary as the backend")
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ARGS, rest = parser.parse_known_args()
    BACKEND = Backend()
    try:
        result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    finally:
        BACKEND.close()
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
