#!/usr/bin/env bash
# The project's Node (.node-version) for every make target. A machine whose node is another major line (an older
# system Node, say) gets the pinned version from the npm registry (package node-<platform>-<arch>, the official
# binary) in .run/node/bin, which the Makefile puts first on PATH; npm keeps being the machine's own, run by it.
set -euo pipefail
cd "$(dirname "$0")/.."
want="$(tr -d ' \n\r' <.node-version)"
dir="$PWD/.run/node"

major() { local v="${1#v}"; echo "${v%%.*}"; }
[ -x "$dir/bin/node" ] && [ "$("$dir/bin/node" -v)" = "v$want" ] && exit 0
# Not ours: the PATH without .run/node/bin (the Makefile put it first).
system_node="$(PATH="${PATH//$dir\/bin:/}" command -v node || true)"
if [ -n "$system_node" ] && [ "$(major "$("$system_node" -v)")" = "$(major "$want")" ]; then
  rm -rf "$dir"
  exit 0
fi

command -v npm >/dev/null || {
  echo "node: Node $want is needed and no npm is here to fetch it; install Node $(major "$want") (https://nodejs.org)" >&2
  exit 1
}
case "$(uname -s)" in Linux) platform=linux ;; Darwin) platform=darwin ;; *) platform=unsupported ;; esac
case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=unsupported ;; esac
package="node-$platform-$arch@$want"
echo "node: ${system_node:+$("$system_node" -v) is not Node $(major "$want"); }fetching $package from the npm registry into .run/node" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack "$package" --silent >/dev/null 2>&1); then
  echo "node: could not fetch $package; install Node $want yourself (https://nodejs.org) and run make again" >&2
  exit 1
fi
tar -xzf "$tmp"/*.tgz -C "$tmp"
"$tmp/package/bin/node" -v >/dev/null
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$tmp/package" "$dir"
