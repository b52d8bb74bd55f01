// Starts a real cloneset-planner on 127.0.0.1 (port 0) for the tests and the example, and stops it.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";

export interface PlannerProcess {
  address: string;
  stop(): Promise<void>;
}

export function startPlanner(bin: string | undefined, timeoutMs = 60_000): Promise<PlannerProcess> {
  if (!bin) return Promise.reject(new Error("no planner binary: set PLANNER_BIN to build/bin/cloneset-planner (ctest sets it)"));
  if (!existsSync(bin)) return Promise.reject(new Error(`planner binary ${bin}: not found`));
  const child: ChildProcess = spawn(bin, ["--listen=127.0.0.1:0", "--metrics_listen=", "--log_level=warn"],
    { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => { log += d.toString(); });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  // Never outlive the test process.
  process.once("exit", () => { if (child.exitCode === null) child.kill("SIGKILL"); });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => { void stop(); reject(new Error(`planner printed no address within ${timeoutMs} ms: ${log}`)); }, timeoutMs);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      for (const line of out.split("\n")) {
        const m = /^(?!.*metrics).*listening on (\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve({ address: m[1], stop });
          return;
        }
      }
    });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`planner exited (${code}) before listening: ${log}`)); });
  });
}
