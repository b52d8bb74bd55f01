// The client against a fake planner on 127.0.0.1 (an in-process @grpc/grpc-js server): errors keep their gRPC
// code and message, and a plan made without reading the pod table the request carried (an older planner) is
// refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PlanRequestSchema, PlanResponseSchema, PlannerClient, PlannerError, PodTableUnreadError } from "../src/index";
import type { PlanRequest, PlanResponse } from "../src/index";

interface Fake {
  podsRead?: number;
  error?: { code: grpc.status; details: string };
}

async function startFake(fake: Fake): Promise<{ client: PlannerClient; stop: () => void }> {
  const server = new grpc.Server();
  const definition: grpc.ServiceDefinition = {
    Plan: {
      path: "/cloneset.planner.v1.Planner/Plan",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: PlanRequest) => Buffer.from(toBinary(PlanRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(PlanRequestSchema, b),
      responseSerialize: (m: PlanResponse) => Buffer.from(toBinary(PlanResponseSchema, m)),
      responseDeserialize: (b: Buffer) => fromBinary(PlanResponseSchema, b),
    },
  };
  server.addService(definition, {
    Plan: (_call: grpc.ServerUnaryCall<PlanRequest, PlanResponse>, callback: grpc.sendUnaryData<PlanResponse>) => {
      if (fake.error) callback({ code: fake.error.code, details: fake.error.details }, null);
      else callback(null, create(PlanResponseSchema, { podsRead: fake.podsRead ?? 0 }));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const client = new PlannerClient(`127.0.0.1:${port}`);
  return { client, stop: () => { client.close(); server.forceShutdown(); } };
}

const table = { name: [1, 2], stringData: new TextEncoder().encode("ab"), stringEnds: [1, 2] };
const cases: { name: string; fake: Fake; request: Parameters<PlannerClient["plan"]>[0]; code: string; text: string; unread?: boolean }[] = [
  { name: "a table of 2 pods read by the planner", fake: { podsRead: 2 }, request: { podTable: table }, code: "OK", text: "" },
  { name: "a planner older than the table reads none", fake: { podsRead: 0 }, request: { podTable: table }, code: "",
    text: "sent 2 pods in pod_table, the planner read 0", unread: true },
  { name: "pods sent as objects: no check", fake: { podsRead: 0 }, request: { pods: [{}] }, code: "OK", text: "" },
  { name: "INVALID_ARGUMENT keeps its code and the field", fake: { error: { code: grpc.status.INVALID_ARGUMENT, details: "spec.replicas: must be >= 0" } },
    request: {}, code: "INVALID_ARGUMENT", text: "spec.replicas: must be >= 0" },
  { name: "UNAVAILABLE keeps its code", fake: { error: { code: grpc.status.UNAVAILABLE, details: "stopping" } },
    request: {}, code: "UNAVAILABLE", text: "stopping" },
];

for (const c of cases) {
  test(`client: ${c.name}`, async () => {
    const { client, stop } = await startFake(c.fake);
    try {
      let err: unknown;
      try {
        await client.plan(c.request, { timeoutMs: 30_000 });
      } catch (e) {
        err = e;
      }
      if (c.code === "OK") {
        assert.equal(err, undefined);
        return;
      }
      assert.ok(err instanceof Error, `want an error, got ${String(err)}`);
      assert.ok(err.message.includes(c.text), `message "${err.message}" does not contain "${c.text}"`);
      if (c.unread) assert.ok(err instanceof PodTableUnreadError, String(err));
      else {
        assert.ok(err instanceof PlannerError, String(err));
        assert.equal(err.codeName, c.code);
        assert.equal(err.details, c.text);
      }
    } finally {
      stop();
    }
  });
}
