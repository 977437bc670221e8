#!/bin/sh
# Run inside the image by scripts/test-image, under compose.yaml's security options and with no
# network: every tool that needs a system package works, and the image holds what it claims.
set -eu
failed=0
check() {
  if "$@"; then echo "ok    $label"; else echo "FAIL  $label"; failed=1; fi
}

label="augure --version names the commit" check sh -c 'augure --version | grep -q "(git [0-9a-f]"'

# Exits 1 here (no bot token, no model endpoint): the browser and sandbox lines are the point.
augure doctor >/tmp/doctor.txt 2>&1 || true
sed "s/^/  doctor> /" /tmp/doctor.txt
for line in "ok    browser: Chromium" "ok    sandbox: " "ok    seccomp: " \
    "ok    tool browser: ready" "ok    tool sandbox_exec: ready"; do
  label="doctor: $line" check grep -q "^$line" /tmp/doctor.txt
done

# The browser tool opens a page served inside the container (the network is none).
mkdir -p /tmp/site
echo '<html><title>inside</title><body><p>served from inside the image</p></body></html>' \
  >/tmp/site/index.html
python3 -m http.server --directory /tmp/site --bind 127.0.0.1 8765 >/dev/null 2>&1 &
server=$!
sleep 1
AUGURE__TOOLS__HTTP__ALLOW_PRIVATE_NETWORKS=true augure tools run browser \
  --args '{"action": "open", "url": "http://127.0.0.1:8765/"}' </dev/null >/tmp/browser.txt 2>&1 || true
kill "$server"
sed "s/^/  browser> /" /tmp/browser.txt
label="browser opens a page" check grep -q "served from inside the image" /tmp/browser.txt

# sandbox_exec needs the owner's approval: `script` gives the call a terminal and answers y.
printf 'y\n' | script -qec "augure tools run sandbox_exec --args \
  '{\"command\": \"echo sandboxed-\$((6 * 7)) as \$(id -u)\"}'" /dev/null >/tmp/sandbox.txt 2>&1 || true
sed "s/^/  sandbox> /" /tmp/sandbox.txt
label="sandbox_exec runs a command" check grep -q "sandboxed-42" /tmp/sandbox.txt

# docker/seccomp.json refuses ptrace (PTRACE_TRACEME) with EPERM.
label="seccomp profile refuses ptrace" check python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.ptrace(0, 0, 0, 0) == -1 and ctypes.get_errno() == 1 else 1)'

# The runtime virtualenv installs nothing: no pip, no setuptools.
label="no pip or setuptools in /opt/venv" check sh -c \
  '! /opt/venv/bin/python -c "import pip" 2>/dev/null && ! /opt/venv/bin/python -c "import setuptools" 2>/dev/null'
label="nothing left of the build's pip configuration" check sh -c \
  '[ -z "$(ls -A /mnt)" ] && [ ! -e /etc/pip.conf ] && [ -z "${PIP_CONFIG_FILE:-}" ]'

# Without a token the bot says what to set, in one line.
augure run >/tmp/run.txt 2>&1 && started=0 || started=$?
label="augure run without a token names TELEGRAM_BOT_TOKEN" check sh -c \
  "[ $started = 1 ] && grep -q TELEGRAM_BOT_TOKEN /tmp/run.txt && ! grep -q Traceback /tmp/run.txt"

exit "$failed"
