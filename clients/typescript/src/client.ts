// A thin TypeScript client of the CloneSet planner (cloneset.planner.v1, docs/planner-api.md) over @grpc/grpc-js.
// The messages are generated from proto/planner.proto by protoc-gen-es (src/gen/planner_pb.ts, made by
// clients/typescript/build.sh, never committed); requests and answers travel as their binary protobuf encoding.
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import {
  ComputeRevisionRequestSchema,
  ComputeRevisionResponseSchema,
  PlanRequestSchema,
  PlanResponseSchema,
  ValidateRequestSchema,
  ValidateResponseSchema,
} from "./gen/planner_pb";
import type {
  ComputeRevisionRequest,
  ComputeRevisionResponse,
  PlanRequest,
  PlanResponse,
  ValidateRequest,
  ValidateResponse,
} from "./gen/planner_pb";

export type Method = "Plan" | "Validate" | "ComputeRevision";

// A failed call: the method, the gRPC status code (number and name, e.g. 3 "INVALID_ARGUMENT") and the planner's
// message, which names the field for INVALID_ARGUMENT ("clone_set.spec.replicas: must be >= 0").
export class PlannerError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`planner ${method}: ${grpc.status[code] ?? code}: ${details}`);
    this.name = "PlannerError";
  }
  // The code's name, as in the shared vectors ("INVALID_ARGUMENT").
  get codeName(): string {
    return grpc.status[this.code] ?? String(this.code);
  }
}

// Thrown by plan() when the request carried its pods as pod_table and the planner did not read them all
// (PlanResponse.podsRead): a planner older than the table sees no pods, and its plan would recreate every one.
// Send the pods as `pods` to such a planner.
export class PodTableUnreadError extends Error {
  constructor(readonly sent: number, readonly read: number) {
    super(`planner Plan: sent ${sent} pods in pod_table, the planner read ${read}: ` +
      "the planner did not read pod_table (a planner older than the table): send the pods as `pods`");
    this.name = "PodTableUnreadError";
  }
}

export interface CallOptions {
  timeoutMs?: number; // default 10 000
}

const SERVICE = "/cloneset.planner.v1.Planner/";

export class PlannerClient {
  private readonly client: grpc.Client;

  // address "127.0.0.1:7070". Plaintext unless credentials say otherwise (grpc.credentials.createSsl(...)).
  constructor(address: string, credentials?: grpc.ChannelCredentials, options?: grpc.ClientOptions) {
    if (!address) throw new Error("planner address: empty (want host:port)");
    this.client = new grpc.Client(address, credentials ?? grpc.credentials.createInsecure(), options);
  }

  close(): void {
    this.client.close();
  }

  // The next plan of one CloneSet. A plan made without reading a pod table the request carried is refused
  // (PodTableUnreadError: the podsRead check of docs/planner-api.md).
  async plan(request: PlanRequest | MessageInitShape<typeof PlanRequestSchema>, options?: CallOptions): Promise<PlanResponse> {
    const req = create(PlanRequestSchema, request);
    const resp = await this.unary("Plan", PlanRequestSchema, PlanResponseSchema, req, options);
    const sent = req.podTable?.name.length ?? 0;
    if (sent > 0 && resp.podsRead !== sent) throw new PodTableUnreadError(sent, resp.podsRead);
    return resp;
  }

  // Defaulting and the admission rules; a rejected CloneSet is an answer (errors), not an exception.
  validate(request: ValidateRequest | MessageInitShape<typeof ValidateRequestSchema>, options?: CallOptions): Promise<ValidateResponse> {
    return this.unary("Validate", ValidateRequestSchema, ValidateResponseSchema, create(ValidateRequestSchema, request), options);
  }

  // The ControllerRevision the CloneSet's template maps to.
  computeRevision(request: ComputeRevisionRequest | MessageInitShape<typeof ComputeRevisionRequestSchema>,
    options?: CallOptions): Promise<ComputeRevisionResponse> {
    return this.unary("ComputeRevision", ComputeRevisionRequestSchema, ComputeRevisionResponseSchema,
      create(ComputeRevisionRequestSchema, request), options);
  }

  // Sends bytes as they are as the request of `method` (for tests of what the planner does with a malformed
  // request) and decodes the answer as the method's response.
  callRaw(method: Method, payload: Uint8Array, options?: CallOptions): Promise<MessageShape<DescMessage>> {
    const output = { Plan: PlanResponseSchema, Validate: ValidateResponseSchema, ComputeRevision: ComputeRevisionResponseSchema }[method];
    return this.call(method, (b: Uint8Array) => Buffer.from(b), (b: Buffer) => fromBinary(output as DescMessage, b), payload, options);
  }

  private unary<I extends DescMessage, O extends DescMessage>(method: Method, input: I, output: O, request: MessageShape<I>,
    options?: CallOptions): Promise<MessageShape<O>> {
    return this.call(method, (m: MessageShape<I>) => Buffer.from(toBinary(input, m)),
      (b: Buffer) => fromBinary(output, b), request, options);
  }

  private call<Req, Resp>(method: Method, serialize: (r: Req) => Buffer, deserialize: (b: Buffer) => Resp, request: Req,
    options?: CallOptions): Promise<Resp> {
    const deadline = new Date(Date.now() + (options?.timeoutMs ?? 10_000));
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(SERVICE + method, serialize, deserialize, request, new grpc.Metadata(), { deadline },
        (err: grpc.ServiceError | null, value?: Resp) => {
          if (err) reject(new PlannerError(method, err.code, err.details));
          else resolve(value as Resp);
        });
    });
  }
}
