# TaskKey: two commands do all the set-up on a fresh Debian machine.
#   make demo   install the C libraries if missing, build, show the main job
#   make test   install the C libraries if missing, lint, run every test
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBIAN_PACKAGES := libssl-dev libsodium-dev pkg-config
PREFIX ?= /usr/local

.PHONY: all deps build release test lint format demo vectors bench interop fuzz install clean

all: build

deps:
	@if ! pkg-config --exists libcrypto libsodium 2>/dev/null; then \
	  echo "make: installing $(DEBIAN_PACKAGES) with apt-get"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(DEBIAN_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test: deps lint
	$(SWIFT) test

lint:
	$(SWIFT) format lint --strict -r Sources Tests Package.swift

format:
	$(SWIFT) format format -i -r Sources Tests Package.swift

demo: build
	@bash scripts/demo.sh "$$($(SWIFT) build --show-bin-path)/taskkey"

# Rewrites Vectors/ from the deterministic generator (a test-only seam).
vectors: deps
	TASKKEY_WRITE_VECTORS=1 $(SWIFT) test --filter VectorGenerationTests

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/taskkey" $(DESTDIR)$(PREFIX)/bin/taskkey

clean:
	rm -rf .build

# Performance goals as ratios against raw OpenSSL in the same run (release build).
bench: deps
	$(SWIFT) run -c release taskkey-bench

# Independent Python cross-check of Vectors/ and the binary, from SECURITY.md.
interop: build
	python3 scripts/interop.py "$$($(SWIFT) build --show-bin-path)/taskkey"

# libFuzzer + AddressSanitizer over the sealed-value reader, base64 and key files.
FUZZ_SECONDS ?= 60
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)
