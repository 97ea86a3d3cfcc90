# Two commands: `make run` (set up + start the app) and `make test` (set up + pass the tests).
# Both are idempotent; when everything is installed they cost well under a second of set-up.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
SYS_STAMP := .venv-sys-deps
export MUJOCO_GL ?= egl
export PYOPENGL_PLATFORM ?= egl

# Debian libraries: EGL/Mesa for offscreen MuJoCo rendering, the xcb stack for Qt, Xvfb for a
# virtual screen, ffmpeg's libraries for lerobot's video decoding.
DEB_PKGS := libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libgles2 libglib2.0-0 libxkbcommon0 \
  libxkbcommon-x11-0 libfontconfig1 libfreetype6 libdbus-1-3 libxcb-cursor0 libxcb-icccm4 \
  libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xfixes0 \
  libxcb-xinerama0 libxcb-xkb1 libxcb-xinput0 libx11-xcb1 libxrender1 libxi6 libsm6 libice6 \
  xvfb xauth ffmpeg chromium

.PHONY: run test lint setup sysdeps web bench clean

# With no display (a server, CI, ssh) the window opens on a virtual X screen instead.
run: setup
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && command -v xvfb-run >/dev/null; then \
	  echo "no display found: running the app under Xvfb"; xvfb-run -a -s "-screen 0 1600x1000x24" $(VENV)/bin/teleop app; \
	else $(VENV)/bin/teleop app; fi

# The window tests run in a process of their own: the threads, GL contexts and Qt objects that
# ~900 other tests leave behind never share a process with the windows (two segfaults in window
# construction late in one-process runs; never in a window-only run).
UI_TESTS := $(wildcard tests/test_ui_*.py)
test: setup lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(addprefix --ignore=,$(UI_TESTS))
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(UI_TESTS)

# Style and types: ruff over the tree, mypy over the typed core (pyproject.toml says which).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: setup
	$(VENV)/bin/teleop bench sim --json

setup: sysdeps $(STAMP) web

# Front-end packages (three.js for the headset page, iwer for its tests), from npm, never a CDN.
WEB_DIRS := $(patsubst %/package.json,%,$(wildcard devices/*/package.json))
web: $(addsuffix /node_modules/.installed,$(WEB_DIRS))
%/node_modules/.installed: %/package.json
	cd $* && npm install --no-audit --no-fund --loglevel=error
	@touch $@

sysdeps:
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	  missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	  command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	  if [ -n "$$missing" ]; then \
	    echo "installing Debian packages: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  fi; \
	fi

# Python >= 3.12: the first interpreter found that really runs (pyenv shims may exist but refuse).
PYTHON312 = $(shell for p in python3.13 python3.12 $$(ls -d /root/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null) /usr/bin/python3.12 /usr/local/bin/python3.12 python3; do \
  if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then echo $$p; break; fi; done)

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON312)" ]; then echo "error: no Python >= 3.12 found (tried python3.12, pyenv versions)"; exit 1; fi
	@[ -x $(PY) ] || $(PYTHON312) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
	$(PY) -m pip install -q -e '.[test,bench,cluster]' 2>&1 | grep -v "is ignored: it is neither" ; exit $${PIPESTATUS[0]}
	@rm -f $(VENV)/.installed-*
	@touch $@

clean:
	rm -rf $(VENV) build *.egg-info
