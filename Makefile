# Weir's developer entry points. `make test` is the README's test command and
# what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build test vet lint vulncheck bench fuzz run chaos

# The binary is static (CGO_ENABLED=0: Go's own DNS resolver and user
# lookup, no libc): it runs on any Linux, and starts faster than one linked
# against libc (docs/performance-history.md, seventeenth round). It records
# the commit it is built from (-buildvcs=auto: when built in a git
# checkout), which `weir version` and `weir health` show.
build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o bin/weir ./cmd/weir

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet $(PKGS)

# The fault-injection suite (internal/chaos) runs here with 30 SIGKILLs per
# role; go test hides a passing package's output, so its figures are written
# to bin/chaos-figures.txt and printed at the end.
test: vet
	@mkdir -p bin && rm -f bin/chaos-figures.txt
	WEIR_CHAOS_REPORT=$(CURDIR)/bin/chaos-figures.txt $(GO) test -count=1 -timeout 20m $(PKGS)
	@cat bin/chaos-figures.txt 2>/dev/null || true

# The fault-injection suite alone, longer: CHAOS_KILLS SIGKILLs per role
# (CHAOS_SEED=n replays the fault moments of an earlier run).
CHAOS_KILLS ?= 200
CHAOS_SEED ?= 0
chaos:
	@mkdir -p bin
	$(GO) test -count=1 -timeout 3h ./internal/chaos -chaos.kills=$(CHAOS_KILLS) -chaos.seed=$(CHAOS_SEED) \
		-chaos.report=$(CURDIR)/bin/chaos-figures.txt
	@cat bin/chaos-figures.txt

# golangci-lint is pinned in its own module (tools/lint) so it never touches Weir's dependencies.
lint: vet
	$(GO) tool -modfile=tools/lint/go.mod golangci-lint run ./...

# govulncheck against the pinned vulnerability database (tools/vuln); fails on
# a vulnerability Weir's code reaches.
vulncheck:
	GOTOOLCHAIN=auto ./tools/vuln/check.sh

# Every fuzz target for FUZZTIME each (seed corpora are in the tests; new
# failures are written to the package's testdata/fuzz).
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzLoad$$' -fuzztime=$(FUZZTIME) ./internal/dagfile
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./internal/schedule
	$(GO) test -run='^$$' -fuzz='^FuzzRender$$' -fuzztime=$(FUZZTIME) ./internal/template
	$(GO) test -run='^$$' -fuzz='^FuzzParseValue$$' -fuzztime=$(FUZZTIME) ./internal/statevalue
	$(GO) test -run='^$$' -fuzz='^FuzzCheckKey$$' -fuzztime=$(FUZZTIME) ./internal/statevalue
	$(GO) test -run='^$$' -fuzz='^FuzzTaskRef$$' -fuzztime=$(FUZZTIME) ./internal/stateref
	$(GO) test -run='^$$' -fuzz='^FuzzStateRequest$$' -fuzztime=$(FUZZTIME) ./internal/execapi
	$(GO) test -run='^$$' -fuzz='^FuzzUnquotedTriggerData$$' -fuzztime=$(FUZZTIME) ./internal/template

bench:
	./bench/run.sh

run: build
	./bin/weir standalone --dags examples/dags
