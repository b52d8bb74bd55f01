"""client_python_vectors: the Python client against a real planner on loopback, with the shared test vectors
(tests/vectors/planner/v1/*.json, format in tests/vectors/README.md).

    python test_vectors.py --planner-binary build/bin/cloneset-planner --vectors tests/vectors/planner/v1 \
        --proto proto/planner.proto
"""

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import sys
import unittest

import grpc
from google.protobuf import json_format
from google.protobuf import text_format

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from planner_process import PlannerProcess  # noqa: E402

import cloneset_planner as cp  # noqa: E402
from cloneset_planner.v1 import planner_pb2 as pb  # noqa: E402
from cloneset_planner.v1 import planner_pb2_grpc  # noqa: E402

ARGS = None
REQUESTS = {"Plan": pb.PlanRequest, "Validate": pb.ValidateRequest, "ComputeRevision": pb.ComputeRevisionRequest}
RESPONSES = {"Plan": pb.PlanResponse, "Validate": pb.ValidateResponse, "ComputeRevision": pb.ComputeRevisionResponse}


def load_vectors():
    vectors = {}
    for path in sorted(glob.glob(os.path.join(ARGS.vectors, "*.json"))):
        with open(path) as f:
            v = json.load(f)
        vectors[v["name"]] = v
    return vectors


class GeneratedCode(unittest.TestCase):
    def test_generated_from_this_proto(self):
        with open(ARGS.proto, "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(cp.v1.PROTO_SHA256, want,
                         "cloneset_planner/v1 was generated from another proto/planner.proto: regenerate it with "
                         "`./run clients python` (./run build does)")


class Vectors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vectors = load_vectors()
        cls.planner = PlannerProcess(ARGS.planner_binary)
        cls.client = cp.PlannerClient(cls.planner.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.planner.stop()

    def call(self, method, request):
        return {"Plan": self.client.plan, "Validate": self.client.validate,
                "ComputeRevision": self.client.compute_revision}[method](request)

    def test_vectors_are_there(self):
        # No silent pass on an empty or unreadable directory.
        self.assertGreaterEqual(len(self.vectors), 20, f"too few vectors in {ARGS.vectors}")
        self.assertEqual({v["method"] for v in self.vectors.values()}, set(REQUESTS))

    def test_every_vector(self):
        for name, v in self.vectors.items():
            with self.subTest(vector=name):
                method = v["method"]
                if "requestBytes" in v:
                    self.check_raw_bytes(v)
                    continue
                request = json_format.Parse(json.dumps(v["request"]), REQUESTS[method]())
                if "error" in v:
                    with self.assertRaises(cp.PlannerError) as caught:
                        self.call(method, request)
                    self.check_error(v["error"], caught.exception)
                    continue
                got = self.call(method, request)
                want = json_format.Parse(json.dumps(v["response"]), RESPONSES[method]())
                if got != want:
                    self.fail(f"{name}: the planner's answer differs from the vector\n--- want\n"
                              f"{text_format.MessageToString(want)}\n--- got\n{text_format.MessageToString(got)}")

    def check_error(self, expected, error):
        self.assertEqual(error.code.name, expected["code"])
        self.assertIn(expected["messageContains"], error.message)
        if expected["code"] == "INVALID_ARGUMENT":
            self.assertIsInstance(error, cp.InvalidArgument)
            self.assertFalse(error.retryable)

    def check_raw_bytes(self, v):
        # Bytes that are not a request message, sent as the call's payload as they are.
        import base64
        call = self.client._channel.unary_unary(f"/cloneset.planner.v1.Planner/{v['method']}",
                                                request_serializer=None, response_deserializer=None)
        with self.assertRaises(grpc.RpcError) as caught:
            call(base64.b64decode(v["requestBytes"]), timeout=30)
        self.check_error(v["error"], cp.error_from_rpc(caught.exception))

    def test_every_action_kind_is_read(self):
        kinds = set()
        for v in self.vectors.values():
            if v["method"] == "Plan" and "response" in v:
                plan = json_format.Parse(json.dumps(v["response"]), pb.PlanResponse())
                kinds.update(a.WhichOneof("kind") for a in plan.actions)
        self.assertEqual(kinds, set(cp.ACTION_KINDS))

    def test_in_place_batches_expand_to_the_per_pod_plan(self):
        batched = json_format.Parse(json.dumps(self.vectors["plan_in_place_update_batches"]["response"]),
                                    pb.PlanResponse())
        per_pod = json_format.Parse(json.dumps(self.vectors["plan_in_place_update"]["response"]), pb.PlanResponse())
        self.assertTrue(any(a.HasField("start_in_place_updates") for a in batched.actions))
        self.assertEqual(cp.expand_in_place_batches(batched), per_pod)

    def test_invalid_argument_names_the_field(self):
        v = self.vectors["plan_error_invalid_partition"]
        with self.assertRaises(cp.InvalidArgument) as caught:
            self.client.plan(json_format.Parse(json.dumps(v["request"]), pb.PlanRequest()))
        self.assertEqual(caught.exception.field, "spec.updateStrategy.partition")


class OlderPlanner(planner_pb2_grpc.PlannerServicer):
    """A planner that predates pod_table: it never reads the table and answers pods_read 0."""

    def Plan(self, request, context):
        return pb.PlanResponse()


class PodsReadCheck(unittest.TestCase):
    def test_a_planner_that_did_not_read_the_table_is_refused(self):
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=1))
        planner_pb2_grpc.add_PlannerServicer_to_server(OlderPlanner(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            vectors = load_vectors()
            table_request = json_format.Parse(json.dumps(vectors["plan_pod_table"]["request"]), pb.PlanRequest())
            self.assertEqual(cp.pods_in_request(table_request), 4)
            with cp.PlannerClient(f"127.0.0.1:{port}") as client:
                with self.assertRaises(cp.OlderPlannerError) as caught:
                    client.plan(table_request)
                self.assertEqual((caught.exception.sent, caught.exception.read), (4, 0))
                # Pods sent as objects: nothing to check, the plan is returned.
                objects_request = json_format.Parse(json.dumps(vectors["plan_in_place_update"]["request"]),
                                                    pb.PlanRequest())
                self.assertEqual(client.plan(objects_request), pb.PlanResponse())
        finally:
            server.stop(None)


class ApplyPlan(unittest.TestCase):
    """apply_plan's rules on the vectors' plans, against a recording handler."""

    class Recorder(cp.PlanHandler):
        def __init__(self, fail=()):
            self.calls, self.fail = [], set(fail)

        def __getattr__(self, name):
            if name in cp.ACTION_KINDS:
                def record(message):
                    pod = getattr(message, "name", "")
                    self.calls.append((name, pod))
                    if (name, pod) in self.fail or name in self.fail:
                        raise RuntimeError(f"{name} {pod} failed")
                return record
            return super().__getattr__(name)

        def write_status(self, status):
            self.calls.append(("write_status", ""))

    def plan(self, name):
        return json_format.Parse(json.dumps(load_vectors()[name]["response"]), pb.PlanResponse())

    def test_status_is_written_last(self):
        recorder = self.Recorder()
        applied = cp.apply_plan(self.plan("plan_in_place_update_batches"), recorder)
        self.assertTrue(applied.ok)
        self.assertEqual(recorder.calls[-1], ("write_status", ""))
        self.assertEqual([c[0] for c in recorder.calls[:-1]],
                         ["patch_pod_status", "patch_pod", "patch_pod_status", "patch_pod"])

    def test_a_failed_creation_ends_the_plan_after_its_batch(self):
        plan = self.plan("plan_scale_out_from_zero")
        first_pod = next(cp.pod_of_action(a) for a in plan.actions if a.HasField("create_pod"))
        recorder = self.Recorder(fail=[("create_pod", "")])
        applied = cp.apply_plan(plan, recorder)
        batches = [a.create_pod.batch for a in plan.actions if a.HasField("create_pod")]
        self.assertGreater(len(set(batches)), 1, "the vector should create pods in more than one batch")
        self.assertEqual(sum(1 for c in recorder.calls if c[0] == "create_pod"), batches.count(batches[0]))
        self.assertIsNotNone(applied.stopped)
        self.assertNotIn(("write_status", ""), recorder.calls)
        self.assertTrue(first_pod)

    def test_stop_on_error_stops(self):
        plan = self.plan("plan_in_place_update")
        self.assertTrue(plan.actions[0].stop_on_error)
        recorder = self.Recorder(fail=["patch_pod_status"])
        applied = cp.apply_plan(plan, recorder)
        self.assertEqual(len(recorder.calls), 1)
        self.assertEqual(len(applied.failures), 1)
        self.assertIn("patch_pod_status", applied.stopped)

    def test_unhandled_kinds_fail_loudly(self):
        applied = cp.apply_plan(self.plan("plan_scale_in"), cp.PlanHandler())
        self.assertIsInstance(applied.failures[0].error, NotImplementedError)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--planner-binary", required=True)
    parser.add_argument("--vectors", required=True)
    parser.add_argument("--proto", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v"] + rest)


if __name__ == "__main__":
    main()
