package main

import (
	"context"
	"encoding/json"
	"net"
	"time"

	"github.com/weirflow/weir"
)

// tcpPortType is a custom trigger type: it fires once a TCP address
// accepts connections (a database back from maintenance, a service that a
// previous task started). main registers it with weir.RegisterTrigger, so
// every role running this program (the triggerer above all) knows it, and
// DAGs and deferrals can name it like a built-in type.
//
// kwargs: address (host:port, required), poke_interval (a duration,
// default 1s). Event: {"address": ..., "waited": "3s"}.
var tcpPortType = weir.TriggerType{
	Name:    "tcp_port",
	Summary: "fires once a TCP address accepts connections",
	New:     newTCPPort,
}

type tcpPort struct {
	Address      string `json:"address"`
	PokeInterval string `json:"poke_interval"`
	interval     time.Duration
}

// newTCPPort validates kwargs without side effects: it runs when a DAG is
// loaded and when a task defers, not only in the triggerer.
func newTCPPort(kwargs json.RawMessage) (weir.Trigger, error) {
	p := &tcpPort{PokeInterval: "1s"}
	if err := weir.DecodeTriggerKwargs(kwargs, p); err != nil {
		return nil, err
	}
	if _, port, err := net.SplitHostPort(p.Address); err != nil || port == "" {
		return nil, weir.InvalidKwarg("address", "must be host:port, such as \"db.internal:5432\", got %q", p.Address)
	}
	d, err := time.ParseDuration(p.PokeInterval)
	if err != nil || d <= 0 {
		return nil, weir.InvalidKwarg("poke_interval", "must be a positive duration such as \"5s\", got %q", p.PokeInterval)
	}
	p.interval = d
	return p, nil
}

// Run dials until the address answers, then emits one event. It returns
// when ctx ends (the wait was cancelled or moved to another triggerer).
func (p *tcpPort) Run(ctx context.Context, rt *weir.TriggerRuntime) error {
	var dialer net.Dialer
	last := ""
	for {
		dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := dialer.DialContext(dialCtx, "tcp", p.Address)
		cancel()
		if err == nil {
			_ = conn.Close()
			waited := rt.Now().Sub(rt.CreatedAt).Round(time.Second)
			return rt.Emit(ctx, map[string]string{"address": p.Address, "waited": waited.String()})
		}
		if msg := err.Error(); msg != last { // log each distinct failure once
			rt.Logf("%s does not accept connections yet: %v", p.Address, err)
			last = msg
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.interval):
		}
	}
}

// customTriggerDAG waits for the service at the param address with the
// custom tcp_port trigger, then uses it:
//
//	go run ./examples/sdk dags test go_custom_trigger --conf '{"address": "127.0.0.1:5432"}'
//
// wait_for_service starts from the trigger: the DAG declares the wait, so
// any registered type may be used. Running code (tc.Defer) may defer only
// on [triggerer] task_trigger_types, which a deployment extends to opt a
// custom type in (docs/security.md#triggers).
func customTriggerDAG() *weir.DAG {
	dag := weir.NewDAG("go_custom_trigger",
		weir.Description("Waits in the triggerer for a TCP address with the program's own trigger type, tcp_port."),
		weir.Tags("example", "go", "deferral"),
		weir.Params(map[string]any{"address": "127.0.0.1:8080"}))
	// String kwargs are templates, rendered when each try starts.
	waitForService := weir.TriggerSpec{Type: "tcp_port", Kwargs: json.RawMessage(`{"address": "{{ params.address }}"}`)}
	dag.Go("wait_for_service", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		event, err := weir.TriggerEvent[map[string]string](tc)
		if err != nil {
			return nil, err
		}
		tc.Logger.Info("service is up", "address", event["address"], "waited", event["waited"])
		return event, nil
	}, weir.StartFromTrigger(waitForService, "", weir.DeferTimeout(time.Hour)))
	return dag
}
