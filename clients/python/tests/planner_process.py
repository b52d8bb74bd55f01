"""A real cloneset-planner on 127.0.0.1 (port 0) for the client's tests and example, stopped on exit."""

import os
import select
import subprocess
import time


class PlannerProcess:
    def __init__(self, binary: str, timeout: float = 60.0):
        if not os.access(binary, os.X_OK):
            raise FileNotFoundError(f"--planner-binary: no executable at {binary} (build cloneset-planner)")
        self.log_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"planner-pyclient-{os.getpid()}.log")
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--metrics_listen="],
                                        stdout=subprocess.PIPE, stderr=self._log, text=True)
        self.address = self._wait_for_address(timeout)

    def _wait_for_address(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        buffered = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                line = self.process.stdout.readline()
                if not line and self.process.poll() is not None:
                    break
                buffered += line
                if line.startswith("listening on "):
                    return line.split()[-1]
            elif self.process.poll() is not None:
                break
        self.stop(keep_log=True)
        raise RuntimeError(f"the planner did not say 'listening on' within {timeout:.0f} s; stdout: {buffered!r}; "
                           f"log: {self.log_path}")

    def stop(self, keep_log: bool = False) -> None:
        """Stops the planner; its log stays only when asked (a failed start names it in the error)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()
        if not keep_log and os.path.exists(self.log_path):
            os.remove(self.log_path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
