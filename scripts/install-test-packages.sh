#!/usr/bin/env bash
# Installs the system programs the test suites need, when they are missing:
#   sshd (openssh-server, with ssh-keygen and ssh-agent from openssh-client)
#        for the ssh executor tests, which start a real OpenSSH server on 127.0.0.1;
#   bwrap (bubblewrap) for the sandboxed local executor tests;
#   rg (ripgrep) for the grep tool's ripgrep engine;
#   chromium for the web UI's browser tests (driven by playwright-core);
#   tmux for the terminal UI's tests (a real pseudo-terminal, send-keys / capture-pane);
#   postgresql (initdb and postgres) for the PostgreSQL storage tests and benchmark, which
#        start their own throwaway cluster on 127.0.0.1 (the system service is not started).
# Idempotent: does nothing when all are present. Debian/Ubuntu (apt-get) only; uses sudo
# when not run as root.
set -euo pipefail

have() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/local/sbin/$1" ] || [ -x "/sbin/$1" ]
}

missing=()
have sshd || missing+=(openssh-server)
{ have ssh-keygen && have ssh-agent && have ssh-add; } || missing+=(openssh-client)
have bwrap || missing+=(bubblewrap)
have rg || missing+=(ripgrep)
have chromium || missing+=(chromium)
have tmux || missing+=(tmux)

# Debian keeps initdb and postgres in /usr/lib/postgresql/<version>/bin, off PATH.
have_postgresql() {
  local bin
  for bin in /usr/lib/postgresql/*/bin; do
    if [ -x "$bin/initdb" ] && [ -x "$bin/postgres" ]; then return 0; fi
  done
  have initdb && have postgres
}
have_postgresql || missing+=(postgresql)

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-test-packages: sshd, ssh-keygen, ssh-agent, bwrap, rg, chromium, tmux and PostgreSQL are present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-packages: missing ${missing[*]}, and apt-get is not available: install them with your package manager" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-test-packages: missing ${missing[*]}; run this script as root or install sudo" >&2
    exit 1
  fi
  sudo=(sudo)
fi

# Installing openssh-server or postgresql would start the system's sshd or PostgreSQL cluster;
# the tests start their own. A policy-rc.d that denies service starts prevents that, when the
# system has none already.
policy=/usr/sbin/policy-rc.d
created_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  created_policy=true
fi
cleanup() {
  if [ "$created_policy" = true ]; then "${sudo[@]}" rm -f "$policy"; fi
}
trap cleanup EXIT

echo "install-test-packages: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
