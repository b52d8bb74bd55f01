// client_ts_vectors: every shared vector (tests/vectors/planner/v1/*.json, format in tests/vectors/README.md) sent
// through this client to a real planner on loopback; the answer must equal the vector's response, message for
// message (equals() after fromJson of the expected JSON), or fail with the vector's code and a message naming the
// field.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { equals, fromJson, toJsonString } from "@bufbuild/protobuf";
import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import {
  ComputeRevisionRequestSchema, ComputeRevisionResponseSchema, PlanRequestSchema, PlanResponseSchema,
  PlannerClient, PlannerError, ValidateRequestSchema, ValidateResponseSchema, expandInPlaceBatches,
} from "../src/index";
import type { Method } from "../src/index";
import { startPlanner } from "./planner_process";

interface Vector {
  name: string;
  method: Method;
  request?: JsonValue;
  requestBytes?: string;
  response?: JsonValue;
  error?: { code: string; messageContains: string };
}

const schemas: Record<Method, [DescMessage, DescMessage]> = {
  Plan: [PlanRequestSchema, PlanResponseSchema],
  Validate: [ValidateRequestSchema, ValidateResponseSchema],
  ComputeRevision: [ComputeRevisionRequestSchema, ComputeRevisionResponseSchema],
};

const dir = process.env.VECTORS_DIR;
if (!dir) throw new Error("VECTORS_DIR is not set (ctest sets it to tests/vectors/planner/v1)");
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
if (files.length === 0) throw new Error(`no vectors in ${dir}`);

test("vectors", async (t) => {
  const planner = await startPlanner(process.env.PLANNER_BIN);
  const client = new PlannerClient(planner.address);
  try {
    for (const file of files) {
      const v = JSON.parse(readFileSync(join(dir, file), "utf8")) as Vector;
      await t.test(v.name || file, async () => {
        const [reqSchema, respSchema] = schemas[v.method] ?? assert.fail(`unknown method ${v.method}`);
        let got: unknown;
        let err: unknown;
        try {
          if (v.requestBytes !== undefined) {
            got = await client.callRaw(v.method, Buffer.from(v.requestBytes, "base64"), { timeoutMs: 60_000 });
          } else {
            // Strict: a vector holds only fields of proto/planner.proto.
            const req = fromJson(reqSchema, v.request ?? null) as never;
            got = v.method === "Plan" ? await client.plan(req, { timeoutMs: 60_000 })
              : v.method === "Validate" ? await client.validate(req, { timeoutMs: 60_000 })
              : await client.computeRevision(req, { timeoutMs: 60_000 });
          }
        } catch (e) {
          err = e;
        }
        if (v.error) {
          assert.ok(err instanceof PlannerError, `want ${v.error.code}, got ${err ?? "a response"}`);
          assert.equal(err.codeName, v.error.code, String(err));
          assert.ok(err.message.includes(v.error.messageContains), `message "${err.message}" does not contain "${v.error.messageContains}"`);
          return;
        }
        if (err) throw err;
        const want = fromJson(respSchema, v.response ?? null);
        if (!equals(respSchema, want, got as never)) {
          assert.fail(`response differs from the vector\nwant: ${toJsonString(respSchema, want)}\ngot:  ${toJsonString(respSchema, got as never)}`);
        }
      });
    }
  } finally {
    client.close();
    await planner.stop();
  }
});

// For every Plan vector whose request accepts in-place batches and whose answer has one, expandInPlaceBatches of
// that answer must be the planner's answer to the same request without acceptInPlaceBatches (planner.proto: "the
// plan such a request would have got, byte for byte").
test("expandInPlaceBatches matches the planner", async (t) => {
  const planner = await startPlanner(process.env.PLANNER_BIN);
  const client = new PlannerClient(planner.address);
  let checked = 0;
  try {
    for (const file of files) {
      const v = JSON.parse(readFileSync(join(dir, file), "utf8")) as Vector;
      if (v.method !== "Plan" || v.response === undefined || v.request === undefined) continue;
      const request = fromJson(PlanRequestSchema, v.request);
      const batched = fromJson(PlanResponseSchema, v.response);
      if (!request.acceptInPlaceBatches || !batched.actions.some((a) => a.kind.case === "startInPlaceUpdates")) continue;
      checked++;
      await t.test(v.name || file, async () => {
        request.acceptInPlaceBatches = false;
        const want = await client.plan(request, { timeoutMs: 60_000 });
        expandInPlaceBatches(batched);
        if (!equals(PlanResponseSchema, want, batched)) {
          assert.fail(`expanded batches differ from the planner's per-pod plan\nwant: ${toJsonString(PlanResponseSchema, want)}\n` +
            `got:  ${toJsonString(PlanResponseSchema, batched)}`);
        }
      });
    }
  } finally {
    client.close();
    await planner.stop();
  }
  assert.ok(checked > 0, "no Plan vector accepts in-place batches and answers one: the expansion is not checked against the planner");
});
