// Package plannertest starts a real cloneset-planner on 127.0.0.1 (port 0) for the client's tests and examples,
// and stops it.
package plannertest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Planner is a running cloneset-planner process.
type Planner struct {
	Address string // host:port it listens on
	cmd     *exec.Cmd
	done    chan struct{}
	log     strings.Builder
}

// Start runs the planner binary bin on 127.0.0.1 with a free port and waits (up to timeout) for the address it
// prints ("listening on <addr>"). bin empty is an error naming what is missing.
func Start(bin string, timeout time.Duration) (*Planner, error) {
	if bin == "" {
		return nil, errors.New("no planner binary: set PLANNER_BIN to build/bin/cloneset-planner (ctest sets it)")
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("planner binary: %w", err)
	}
	cmd := exec.Command(bin, "--listen=127.0.0.1:0", "--metrics_listen=", "--log_level=warn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Planner{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &syncWriter{b: &p.log}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "listening on "); i >= 0 && !strings.Contains(line, "metrics") {
				select {
				case addr <- strings.TrimSpace(line[i+len("listening on "):]):
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	select {
	case a := <-addr:
		p.Address = a
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("planner exited before listening: %s", p.log.String())
	case <-time.After(timeout):
		p.Stop()
		return nil, fmt.Errorf("planner printed no address within %v: %s", timeout, p.log.String())
	}
}

// Stop sends SIGTERM, then SIGKILL after 5 s, and waits for the process.
func (p *Planner) Stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

type syncWriter struct{ b *strings.Builder }

func (w *syncWriter) Write(b []byte) (int, error) { return w.b.Write(b) }
