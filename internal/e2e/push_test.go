package e2e

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// pushDAGFile: "produce" (stream: true) pushes 20 items from a shell
// loop, repeats one (nothing added), closes its stream, and checks that
// a push after the close is refused; "use" iterates over it, "after"
// runs once every use is done; "not_producer" checks that a task without
// stream: true cannot push.
const pushDAGFile = `dag_id: pushes
tasks:
  - task_id: produce
    operator: bash
    stream: true
    bash_command: |
      set -u
      err=$(mktemp)
      for i in $(seq 0 18); do weir stream push --index $i "{\"n\": $i}" >/dev/null || exit 3; sleep 0.1; done
      { printf '{"n": 19, "pad": "'; head -c 300000 /dev/zero | tr '\0' x; printf '"}'; } | weir stream push --index 19 - >/dev/null || exit 6
      weir stream push --index 5 '{"n": 5}' | grep -q '"skipped":1' || { echo "a repeated index was not skipped"; exit 4; }
      weir stream close >/dev/null || exit 3
      if weir stream push '{"n": 99}' 2> "$err"; then echo "a push after the close succeeded"; exit 4; fi
      grep -q "is closed" "$err" || { cat "$err"; exit 5; }
      if weir stream push 'not json' 2> "$err"; then exit 4; fi
      grep -q "not a JSON value" "$err" || { cat "$err"; exit 5; }
  - task_id: use
    operator: bash
    iterate: produce
    bash_command: echo "item {{ .map_args.item.n }}"
  - task_id: after
    operator: bash
    depends_on: [use]
    bash_command: echo done
  - task_id: not_producer
    operator: bash
    bash_command: |
      err=$(mktemp)
      if weir stream push '{"x": 1}' 2> "$err"; then echo "pushed without stream: true"; exit 4; fi
      grep -q "does not declare stream: true" "$err" || { cat "$err"; exit 5; }
`

// TestShellProducerPushesItems runs a shell producer on each engine: its
// items become instances of the iterating task while it still pushes
// (timestamps), an item larger than a command line takes comes from
// stdin, a repeated sequence index adds nothing, a push after the
// close and a push from a task without stream: true are refused with
// clear errors, and the downstream task runs once after all instances.
func TestShellProducerPushesItems(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		s := runOnce(t, env, "pushes", pushDAGFile)
		var produce, after core.TaskInstance
		var uses []core.TaskInstance
		for _, ti := range s.api.TaskInstances("pushes", "r1") {
			switch ti.TaskID {
			case "produce":
				produce = ti
			case "after":
				after = ti
			case "use":
				uses = append(uses, ti)
			}
		}
		if len(uses) != 20 || uses[0].MapIndex != 0 || uses[19].MapIndex != 19 {
			t.Fatalf("%d instances of use, want 20 with map indexes 0..19", len(uses))
		}
		if uses[0].StartDate == nil || produce.EndDate == nil || !uses[0].StartDate.Before(*produce.EndDate) {
			t.Errorf("use[0] started at %v, not before produce ended (%v)", uses[0].StartDate, produce.EndDate)
		}
		for _, u := range uses {
			if u.State != core.TISuccess || after.StartDate == nil || u.EndDate == nil || after.StartDate.Before(*u.EndDate) {
				t.Fatalf("use[%d] = %s ending %v, after started %v; want every use done before after", u.MapIndex, u.State, u.EndDate, after.StartDate)
			}
		}
		if after.TryNumber != 1 {
			t.Errorf("after ran %d tries, want 1", after.TryNumber)
		}
	})
}
