"""Python client of the CloneSet planner API (``cloneset.planner.v1``, proto/planner.proto).

The planner is a stateless gRPC service: send it a snapshot of one CloneSet and its instances, apply the actions it
answers with to your own system, repeat. This package holds the generated messages (``cloneset_planner.v1``) and a
thin helper for that loop::

    from cloneset_planner import PlannerClient, apply_plan, plan_request, v1

    with PlannerClient("127.0.0.1:7070") as planner:
        plan = planner.plan(plan_request(clone_set, my_pods, revisions=my_revisions, now_nanos=now))
        applied = apply_plan(plan, my_handler)   # a PlanHandler: create_pod, patch_pod, ..., write_status

See docs/planner-api.md and examples/fleet_rollout.py.
"""

from cloneset_planner import v1
from cloneset_planner.client import (Cancelled, DeadlineExceeded, InternalError, InvalidArgument, OlderPlannerError,
                                     PlannerClient, PlannerError, ResourceExhausted, Unavailable, error_from_rpc,
                                     pods_in_request)
from cloneset_planner.plans import (ACTION_KINDS, AppliedPlan, Conflict, Failure, PlanHandler, apply_plan,
                                    expand_in_place_batches, pod_of_action, schedule)
from cloneset_planner.snapshot import (canonical_json, clone_set_from_manifest, format_rfc3339, nanos_of,
                                       plan_request, plan_seed, pod_from_manifest, pvc_from_manifest,
                                       revision_from_manifest, timestamp)

__version__ = "1.0.0"

__all__ = [
    "v1", "PlannerClient", "PlannerError", "InvalidArgument", "ResourceExhausted", "Unavailable",
    "DeadlineExceeded", "Cancelled", "InternalError", "OlderPlannerError", "error_from_rpc", "pods_in_request",
    "ACTION_KINDS", "AppliedPlan", "Conflict", "Failure", "PlanHandler", "apply_plan", "expand_in_place_batches",
    "pod_of_action", "schedule", "canonical_json", "clone_set_from_manifest", "format_rfc3339", "nanos_of",
    "plan_request", "plan_seed", "pod_from_manifest", "pvc_from_manifest", "revision_from_manifest", "timestamp",
]
