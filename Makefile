# llm_eval: build, test and run. `make test` is what CI runs.
GO ?= go

.PHONY: test
test:
	$(GO) test -race ./...
