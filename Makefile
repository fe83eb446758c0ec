# Two commands for a newcomer: `make demo` and `make test`. Both create .venv/ first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: venv demo test bench clean chromium katex

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	rm -rf out/demo
	$(BIN)/thmforge build-corpus --input samples/arxiv/*.tar --metadata samples/arxiv/arxiv-metadata-oai-snapshot.json --output out/demo --preset local
	$(BIN)/thmforge sql out/demo -c "SELECT kind, count(*) AS n FROM theorems GROUP BY kind ORDER BY n DESC"
	$(BIN)/thmforge search out/demo "every bounded monotone sequence of real numbers converges" -k 3

# Debian's Chromium for the browser test (needs root, as in CI); a no-op when it is there.
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# KaTeX for the search page is committed under retrieval/static/katex (minified, woff2 fonts);
# this refreshes it from the npm registry at the version in its VERSION file.
KATEX_VERSION = $(shell cat retrieval/static/katex/VERSION)
katex:
	tmp=$$(mktemp -d) && cd $$tmp && npm pack -q katex@$(KATEX_VERSION) >/dev/null && tar xzf katex-*.tgz && \
	cd $(CURDIR)/retrieval/static/katex && cp $$tmp/package/dist/katex.min.js $$tmp/package/dist/katex.min.css \
	   $$tmp/package/dist/contrib/auto-render.min.js $$tmp/package/LICENSE . && \
	cp $$tmp/package/dist/fonts/*.woff2 fonts/ && rm -rf $$tmp

test: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) out
