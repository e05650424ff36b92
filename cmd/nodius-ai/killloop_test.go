package main_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// killLoop runs the binary with args over and over and kills it with SIGKILL at a
// random moment, until it was killed kills times. A whole approve or undo takes
// ~150 ms on a quiet machine: the kill comes within the first 120 ms, so most
// rounds are cut somewhere inside it, quiet or busy. before runs ahead of each
// round; finished gets the exit code and stderr of a run that ended before its
// kill. The graph file must parse after every round. It fails the test when fewer
// than one round in ten is killed (the kills would prove nothing).
func (e *env) killLoop(kills int, before func(), finished func(code int, stderr string), args ...string) {
	e.t.Helper()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(len(args))))
	killed := 0
	for i := 0; killed < kills; i++ {
		if i > 10*kills {
			e.t.Fatalf("only %d kills in %d rounds", killed, i)
		}
		if before != nil {
			before()
		}
		c := exec.Command(binary, args...)
		c.Env = e.vars
		var se bytes.Buffer
		c.Stderr = &se
		if err := c.Start(); err != nil {
			e.t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			finished(code, se.String())
		case <-time.After(time.Duration(rng.IntN(120)) * time.Millisecond):
			_ = c.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
		readGraph(e.t, e.graph) // parses after every round
	}
}

// noTempFiles fails the test when the graph writer left a temporary file.
func (e *env) noTempFiles() {
	e.t.Helper()
	ents, _ := os.ReadDir(e.dir)
	for _, ent := range ents {
		if strings.Contains(ent.Name(), ".tmp-") {
			e.t.Errorf("temporary file left: %s", ent.Name())
		}
	}
}
