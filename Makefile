# Weir's developer entry points. `make test` is the README's test command and
# what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build test vet lint vulncheck bench fuzz run

build:
	$(GO) build -o bin/weir ./cmd/weir

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet $(PKGS)

test: vet
	$(GO) test -count=1 -timeout 20m $(PKGS)

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
