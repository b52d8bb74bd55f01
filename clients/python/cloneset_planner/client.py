"""PlannerClient: the three calls of ``cloneset.planner.v1.Planner`` with typed errors.

Errors are exceptions of one family, :class:`PlannerError`, one subclass per gRPC code a caller acts on
differently (docs/planner-api.md, "Errors"): :class:`InvalidArgument` (fix the snapshot; ``field`` names the
field), :class:`ResourceExhausted` (the request or plan is too large), :class:`Unavailable` and
:class:`DeadlineExceeded` (retry with back-off, any replica), and :class:`OlderPlannerError` when the planner did
not read the pods of a ``pod_table`` request (never apply that plan).
"""

from __future__ import annotations

from typing import Optional

import grpc

from cloneset_planner.v1 import planner_pb2 as pb
from cloneset_planner.v1 import planner_pb2_grpc


class PlannerError(Exception):
    """A failed call. ``code`` is the grpc.StatusCode, ``message`` the planner's text."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later (the planner is stateless: any replica will do)."""
        return self.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class InvalidArgument(PlannerError):
    """The snapshot is malformed or the CloneSet is invalid. The message starts with the field's path."""

    @property
    def field(self) -> str:
        """The field the message names: "spec.updateStrategy.partition" of "spec.updateStrategy.partition: ..."."""
        head, sep, _ = self.message.partition(": ")
        return head if sep and " " not in head else ""


class ResourceExhausted(PlannerError):
    """The request is over the planner's size limit, or the plan would be."""


class Unavailable(PlannerError):
    """Transport failure or a stopping planner: retry with back-off."""


class DeadlineExceeded(PlannerError):
    """The call's deadline passed."""


class Cancelled(PlannerError):
    """The call was cancelled."""


class InternalError(PlannerError):
    """A bug in the planner (the server keeps running)."""


class OlderPlannerError(PlannerError):
    """The planner did not read the request's ``pod_table`` (it predates the table and saw no pods).

    Applying its plan would recreate every pod; send the pods as ``pods`` instead.
    """

    def __init__(self, sent: int, read: int):
        super().__init__(grpc.StatusCode.FAILED_PRECONDITION,
                         f"the planner read {read} of the {sent} pods sent as pod_table: it predates the table; "
                         "do not apply this plan, send the pods as `pods`")
        self.sent = sent
        self.read = read


_ERRORS = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.INTERNAL: InternalError,
}


def error_from_rpc(error: grpc.RpcError) -> PlannerError:
    """The typed error of a failed call."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    return _ERRORS.get(code, PlannerError)(code, message or "")


def pods_in_request(request: pb.PlanRequest) -> int:
    """How many pods a PlanRequest carries: the ``pod_table``'s name column, or ``pods``."""
    return len(request.pod_table.name) if request.HasField("pod_table") else len(request.pods)


class PlannerClient:
    """A client of one planner address (``host:port``).

    ``PlannerClient("127.0.0.1:7070")`` connects without TLS; pass ``credentials`` (grpc.ssl_channel_credentials)
    for TLS or mTLS, or an existing ``channel``. ``timeout`` is every call's deadline in seconds.
    """

    def __init__(self, target: Optional[str] = None, *, credentials: Optional[grpc.ChannelCredentials] = None,
                 channel: Optional[grpc.Channel] = None, timeout: float = 30.0):
        if channel is None:
            if not target:
                raise ValueError("PlannerClient: target (host:port) or channel is required")
            channel = (grpc.secure_channel(target, credentials) if credentials is not None
                       else grpc.insecure_channel(target))
            self._owns_channel = True
        else:
            self._owns_channel = False
        self._channel = channel
        self._stub = planner_pb2_grpc.PlannerStub(channel)
        self.timeout = timeout

    def plan(self, request: pb.PlanRequest) -> pb.PlanResponse:
        """The next plan for one CloneSet.

        Raises OlderPlannerError when the request's pods were sent as a ``pod_table`` and the planner says it read
        a different number (``pods_read``): that planner predates the table.
        """
        response = self._call(self._stub.Plan, request)
        sent = pods_in_request(request)
        if request.HasField("pod_table") and response.pods_read != sent:
            raise OlderPlannerError(sent, response.pods_read)
        return response

    def validate(self, request: pb.ValidateRequest) -> pb.ValidateResponse:
        """Defaulting and admission checks; problems are ``errors`` in the response, not a failed call."""
        return self._call(self._stub.Validate, request)

    def compute_revision(self, request: pb.ComputeRevisionRequest) -> pb.ComputeRevisionResponse:
        """The ControllerRevision the CloneSet's template maps to."""
        return self._call(self._stub.ComputeRevision, request)

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def close(self) -> None:
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> "PlannerClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
