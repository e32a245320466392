package weir

import (
	"net"
	"strings"
	"testing"
)

// The deferral examples of examples/sdk (deferral.go, tcpport.go), run by
// the built example binary; called from TestSDKProgramEndToEnd.

// goDeferral: every go_deferral task waits in the triggerer and succeeds
// on its first try, with what it read on resume as its return value.
func goDeferral(t *testing.T, bin string) {
	home := t.TempDir()
	assertRows(t, dagsTest(t, bin, home, "go_deferral"), map[string]string{
		"submit_then_report": "success 1", "wait_once": "success 1", "start_after_timer": "success 1",
		"cool_down": "success 1", "after_cool_down": "success 1"})
	st := openStore(t, home)
	for task, want := range map[string]string{
		"submit_then_report": `{"batch":7,"resumed":true}`,
		"wait_once":          `"resumed in the same function"`,
		"start_after_timer":  `"started from the trigger (resume method \"\")"`,
	} {
		if got := returnValue(t, st, "go_deferral", task, -1); got != want {
			t.Errorf("%s returned %s, want %s", task, got, want)
		}
	}
	if got := returnValue(t, st, "go_deferral", "after_cool_down", -1); !strings.HasPrefix(got, `"cool_down fired at 20`) {
		t.Errorf("after_cool_down returned %s, want the sensor's event time", got)
	}
}

// goCustomTrigger: go_custom_trigger waits with the program's own tcp_port
// trigger for a listener of this test, and returns the trigger's event; an
// address the trigger refuses fails the task at its defer call.
func goCustomTrigger(t *testing.T, bin string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	home := t.TempDir()
	addr := ln.Addr().String()
	assertRows(t, dagsTest(t, bin, home, "go_custom_trigger", "--conf", `{"address": "`+addr+`"}`),
		map[string]string{"wait_for_service": "success 1"})
	if got := returnValue(t, openStore(t, home), "go_custom_trigger", "wait_for_service", -1); !strings.HasPrefix(got, `{"address":"`+addr+`","waited":"`) {
		t.Errorf("wait_for_service returned %s, want the tcp_port event for %s", got, addr)
	}
}
