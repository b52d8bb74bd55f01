#!/usr/bin/env python3
"""Bulk-creates CloneSets and their pods directly through the API (no executor involved), for executor benchmarks.

Usage: seed_cluster.py SERVER TOKEN --clonesets 1000 --pods 100 [--procs 4] [--namespace default] [--paused]
Pods carry what the executor's cache keeps: the CloneSet's labels, an instance id, a revision hash and a controller
ownerReference to the CloneSet; ~1.2 KB of JSON each, like a real small pod. No InPlaceUpdateReady readiness gate
(the executor would add its condition to every pod, 100 000 writes before anything else).
"""
import argparse
import http.client
import json
import multiprocessing
import random
import string
import sys
import time
import urllib.parse

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def conn(server):
    u = urllib.parse.urlparse(server)
    if u.scheme != "http":
        sys.exit("seed_cluster.py needs an --insecure-http devcluster (http:// server)")
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def post(c, token, path, body):
    c.request("POST", path, json.dumps(body), {"Authorization": "Bearer " + token,
                                                "Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status not in (200, 201):
        raise RuntimeError(f"POST {path}: {r.status} {data[:300]!r}")
    return json.loads(data)


def seed_one(args):
    server, token, ns, i, pods, paused = args
    c = conn(server)
    name = f"cs-{i}"
    cs = post(c, token, f"/apis/apps.kruise.io/v1alpha1/namespaces/{ns}/clonesets", {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name}},
                 "updateStrategy": {"type": "InPlaceIfPossible", "paused": paused},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "registry.local/app:v1"}]}}}})
    uid = cs["metadata"]["uid"]
    rng = random.Random(i)
    ids = set()
    while len(ids) < pods:
        ids.add("".join(rng.choice(ALPHABET) for _ in range(5)))
    for iid in sorted(ids):
        post(c, token, f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-{iid}", "namespace": ns,
                         "labels": {"app": name, "apps.kruise.io/cloneset-instance-id": iid,
                                    "controller-revision-hash": f"{name}-5d8f7c9b6",
                                    "pod-template-hash": "5d8f7c9b6",
                                    "lifecycle.apps.kruise.io/state": "Normal"},
                         "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                              "name": name, "uid": uid, "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"containers": [{"name": "main", "image": "registry.local/app:v1",
                                     "env": [{"name": "MODE", "value": "production"},
                                             {"name": "LOG_LEVEL", "value": "info"}],
                                     "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                   "limits": {"cpu": "500m", "memory": "256Mi"}},
                                     "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                                                        "periodSeconds": 5}}],
                     "terminationGracePeriodSeconds": 30}})
    c.close()
    return pods


def main():
    p = argparse.ArgumentParser()
    p.add_argument("server")
    p.add_argument("token")
    p.add_argument("--clonesets", type=int, default=1000)
    p.add_argument("--pods", type=int, default=100)
    p.add_argument("--procs", type=int, default=4)
    p.add_argument("--namespace", default="default")
    p.add_argument("--paused", action="store_true")
    a = p.parse_args()
    start = time.time()
    jobs = [(a.server, a.token, a.namespace, i, a.pods, a.paused) for i in range(a.clonesets)]
    done = 0
    with multiprocessing.Pool(a.procs) as pool:
        for n in pool.imap_unordered(seed_one, jobs):
            done += n
    secs = time.time() - start
    print(f"seeded {a.clonesets} CloneSets and {done} pods in {secs:.1f} s ({done / secs:.0f} pods/s)", file=sys.stderr)


if __name__ == "__main__":
    main()
