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

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=60s ./internal/dagfile

bench:
	./bench/run.sh

run: build
	./bin/weir standalone --dags examples/dags
