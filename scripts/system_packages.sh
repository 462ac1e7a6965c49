#!/usr/bin/env bash
# The Debian packages some tests use, installed when missing and apt-get can run (as root); otherwise a warning and
# those tests skip with the reason. Called by scripts/test.sh (and so by .ci/run).
set -uo pipefail
missing=()
# Debian Chromium for the browser test (no browser download from a test tool)
command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || missing+=(chromium chromium-driver)
# a CJK font for the PDF export test (WeasyPrint draws with the system's fonts; nothing is fetched at run time)
[ -n "$(fc-list :lang=zh 2>/dev/null)" ] || missing+=(fonts-noto-cjk)  # (grep -q under pipefail: SIGPIPE)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing ${missing[*]} (apt-get)" >&2
  (export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null) \
    && exit 0
fi
echo "warning: not installed: ${missing[*]} (Debian: apt install ${missing[*]}); the browser test or the PDF test's" \
  "CJK check will be skipped" >&2
exit 0
