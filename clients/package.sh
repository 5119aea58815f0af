#!/usr/bin/env bash
# Builds what people install without Swift, from a checkout, into OUTDIR:
#
#   clients/package.sh OUTDIR
#
#   auth_agent-V-py3-none-manylinux_2_G_ARCH.whl  the Python client with the agent (pipx/uv/uvx auth-agent)
#   auth_agent_client-V-py3-none-any.whl          the Python client alone (an agent installed otherwise)
#   auth-agent-V.tgz                              npm `auth-agent`: the Node client, `bin` auth-agent, and
#   auth-agent-linux-ARCH-V.tgz                     its optional dependency @auth-agent/linux-ARCH, the agent
#   auth-agent-client-V.tgz                       npm `auth-agent-client`: the Node client alone
#   auth-agent_V_DEBARCH.deb                      the agent, its man page, completions and license
#   SHA256SUMS
#
# Steps: the static release build (`swift build -c release --static-swift-stdlib --disable-local-rpath`:
# no `$ORIGIN` RUNPATH, so the dynamic loader does not search the install directory; with
# AUTH_AGENT_PACKAGE_BINARY=PATH, that build made earlier instead — the tests reuse theirs), a
# stripped copy, then each package around it. The version is the agent's own (`auth-agent
# --version`); the clients' declared versions must match it. The oldest glibc the binary runs on
# is read from its symbol versions (GLIBC_ABI_DT_RELR, from -z pack-relative-relocs, means 2.36)
# and becomes the wheel's manylinux tag and the .deb's libc6 dependency. Needs python3 (3.11+),
# node and npm (no registry: `npm pack` only), dpkg-deb, readelf and strip (binutils), gzip.
set -euo pipefail

fail() { echo "package.sh: $*" >&2; exit 1; }
say() { echo "package.sh: $*" >&2; }
[ $# -eq 1 ] || fail "usage: clients/package.sh OUTDIR"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
for tool in python3 node npm dpkg-deb readelf strip gzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed and not on PATH"
done
python3 -c 'import tomllib' 2>/dev/null || fail "python3 is $(python3 -V 2>&1); wheel.py needs 3.11+ (tomllib)"
work="$(mktemp -d "${TMPDIR:-/tmp}/auth-agent-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# 1. The static release build, and a stripped copy of it.
if [ -n "${AUTH_AGENT_PACKAGE_BINARY:-}" ]; then
  built="$AUTH_AGENT_PACKAGE_BINARY"
  say "using the build at $built (AUTH_AGENT_PACKAGE_BINARY)"
else
  command -v swift >/dev/null 2>&1 || fail "swift is needed to build the agent (or set AUTH_AGENT_PACKAGE_BINARY)"
  (cd "$root" && swift build -c release --static-swift-stdlib --disable-local-rpath --product auth-agent >&2)
  built="$(cd "$root" && swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)/auth-agent"
fi
[ -x "$built" ] || fail "$built is not an executable"
if grep -q 'NEEDED.*libswift' <<<"$(readelf -d "$built")"; then
  fail "$built links the Swift runtime dynamically: build it with --static-swift-stdlib"
fi
agent="$work/auth-agent"
cp "$built" "$agent"
strip --strip-all "$agent"
chmod 0755 "$agent"

version="$("$agent" --version | awk '{print $2}')"
[ -n "$version" ] || fail "$agent --version printed no version"
python_version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$root/clients/python/auth_agent/_version.py")"
node_version="$(node -p 'require(process.argv[1]).version' "$root/clients/node/package.json")"
[ "$python_version" = "$version" ] || fail "clients/python/auth_agent/_version.py says $python_version, the agent $version"
[ "$node_version" = "$version" ] || fail "clients/node/package.json says $node_version, the agent $version"

case "$(readelf -h "$agent" | sed -n 's/^ *Machine: *//p')" in
  *X86-64*) arch=x86_64 node_arch=x64 deb_arch=amd64 ;;
  AArch64) arch=aarch64 node_arch=arm64 deb_arch=arm64 ;;
  *) fail "no package names for the machine of $agent: $(readelf -h "$agent" | sed -n 's/^ *Machine: *//p')" ;;
esac
# The newest GLIBC_2.N version the binary asks for; GLIBC_ABI_DT_RELR (packed relative
# relocations) exists from glibc 2.36 on, though no symbol of 2.36 is asked for.
needs="$(readelf -V --wide "$agent")"
versions="$(sed -n 's/.*Name: GLIBC_\(2\.[0-9.]*\).*/\1/p' <<<"$needs")"
if grep -q 'Name: GLIBC_ABI_DT_RELR' <<<"$needs"; then versions="$versions"$'\n'"2.36"; fi
glibc="$(sort -uV <<<"$versions" | tail -n 1)"
glibcxx="$(sed -n 's/.*Name: \(GLIBCXX_[0-9.]*\).*/\1/p' <<<"$needs" | sort -uV | tail -n 1)"
manylinux="manylinux_${glibc/./_}_$arch"

# 2. The Python wheels.
python3 "$root/clients/python/wheel.py" "$out" --version "$version" >/dev/null
python3 "$root/clients/python/wheel.py" "$out" --version "$version" --agent "$agent" --platform "$manylinux" >/dev/null

# 3. The npm packages (`npm pack` reads only the directory: no registry).
pack() { (cd "$1" && npm pack --silent --pack-destination "$out" >/dev/null); }
platform_dir="$work/npm-platform"
mkdir -p "$platform_dir/bin"
cp "$agent" "$platform_dir/bin/auth-agent"
node - "$platform_dir" "$version" "$node_arch" <<'EOF'
const [directory, version, cpu] = process.argv.slice(2);
const fs = require('node:fs');
fs.writeFileSync(`${directory}/package.json`, JSON.stringify({
  name: `@auth-agent/linux-${cpu}`, version,
  description: `The auth-agent binary for Linux ${cpu} (glibc); installed by the auth-agent package, which runs it`,
  os: ['linux'], cpu: [cpu], files: ['bin/auth-agent'], preferUnplugged: true, license: 'MIT',
}, null, 2) + '\n');
fs.writeFileSync(`${directory}/README.md`, `# @auth-agent/linux-${cpu}\n\nThe auth-agent binary for Linux ${cpu}. Install \`auth-agent\`, which depends on it.\n`);
EOF
pack "$platform_dir"
main_dir="$work/npm-main"
mkdir -p "$main_dir"
cp -R "$root/clients/node/index.js" "$root/clients/node/index.d.ts" "$root/clients/node/src" "$root/clients/node/bin" \
  "$root/clients/node/README.md" "$main_dir/"
# Every platform a release publishes: npm installs the one whose os and cpu match, skips the others.
node - "$root/clients/node/package.json" "$main_dir/package.json" <<'EOF'
const [source, target] = process.argv.slice(2);
const fs = require('node:fs');
const client = JSON.parse(fs.readFileSync(source, 'utf8'));
const { scripts, ...rest } = client;
const platforms = Object.fromEntries(['linux-x64', 'linux-arm64'].map((p) => [`@auth-agent/${p}`, client.version]));
fs.writeFileSync(target, JSON.stringify({
  ...rest, name: 'auth-agent',
  description: 'auth-agent, the process programs delegate logins and request signing to, with its Node client (the agent binary comes with @auth-agent/PLATFORM)',
  bin: { 'auth-agent': 'bin/auth-agent.js' }, files: [...client.files, 'bin/'], optionalDependencies: platforms,
}, null, 2) + '\n');
EOF
pack "$main_dir"
pack "$root/clients/node"

# 4. The Debian package.
deb="$work/deb"
install -D -m 0755 "$agent" "$deb/usr/bin/auth-agent"
mkdir -p "$deb/usr/share/man/man1" "$deb/usr/share/bash-completion/completions" "$deb/usr/share/zsh/vendor-completions" \
  "$deb/usr/share/fish/vendor_completions.d" "$deb/usr/share/doc/auth-agent" "$deb/DEBIAN"
"$agent" help --man | gzip -9n > "$deb/usr/share/man/man1/auth-agent.1.gz"
"$agent" completion bash > "$deb/usr/share/bash-completion/completions/auth-agent"
"$agent" completion fish > "$deb/usr/share/fish/vendor_completions.d/auth-agent.fish"
# zsh autoloads _auth-agent as the completion function: the first call defines the bash-style
# function (compdef then points at it) and completes the words it was called for.
{ echo '#compdef auth-agent'; "$agent" completion zsh; echo '_bash_complete -F _auth_agent'; } \
  > "$deb/usr/share/zsh/vendor-completions/_auth-agent"
{
  printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: auth-agent\n\n'
  # The README's "Copyright (c) YEAR HOLDER" line names the holder once.
  printf 'Files: *\nCopyright: %s\nLicense: MIT\n' "$(sed -n 's/^Copyright (c) //p' "$root/README.md" | head -n 1)"
  # The README's license text, as DEP-5 wants it: each line indented, blank lines as " .".
  sed -n '/^## License/,$p' "$root/README.md" | sed -n '/^```text$/,/^```$/p' | sed '1d;$d' \
    | sed 's/^$/./; s/^/ /'
} > "$deb/usr/share/doc/auth-agent/copyright"
grep -q 'Permission is hereby granted' "$deb/usr/share/doc/auth-agent/copyright" || fail "README.md has no license text under '## License'"
chmod 0644 "$deb"/usr/share/man/man1/* "$deb"/usr/share/*/*/* "$deb/usr/share/fish/vendor_completions.d/auth-agent.fish" \
  "$deb/usr/share/doc/auth-agent/copyright"
# libcurl carries every HTTP request (loaded on first use); libsecret and libcrypto only the keyring and DPoP.
depends="libc6 (>= $glibc)"
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
  # dpkg-shlibdeps for libstdc++ and libgcc; libc6 stays ours: Debian's symbols files do not know
  # GLIBC_ABI_DT_RELR, so it would say 2.35, and the binary does not start on glibc 2.35.
  mkdir -p "$work/shlibs/debian"
  printf 'Source: auth-agent\n\nPackage: auth-agent\nArchitecture: any\n' > "$work/shlibs/debian/control"
  others="$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$agent" 2>/dev/null | sed -n 's/^shlibs:Depends=//p' | tr ',' '\n' \
    | sed 's/^ *//' | { grep -v '^libc6 ' || true; } | paste -sd, - | sed 's/,/, /g')"
  [ -n "$others" ] && depends="$depends, $others"
else
  depends="$depends, libgcc-s1, libstdc++6"
fi
cat > "$deb/DEBIAN/control" <<EOF
Package: auth-agent
Version: $version
Architecture: $deb_arch
Maintainer: auth-agent authors <auth-agent@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$deb" | cut -f1)
Depends: $depends, libcurl4 | libcurl3-gnutls
Suggests: libsecret-1-0, gnome-keyring, libssl3
Section: utils
Priority: optional
Description: delegate logins and request signing to a long-lived process
 auth-agent logs users in, signs HTTP requests, refreshes tokens and tells
 its hosts when a user logged in or out, over JSON-RPC on stdin/stdout; it is
 also a git and kubectl credential helper and a bridge for MCP hosts
 (auth-agent mcp URL). Try it with: auth-agent demo
EOF
dpkg-deb --root-owner-group -Zxz --build "$deb" "$out/auth-agent_${version}_${deb_arch}.deb" >/dev/null

# 5. Sums and sizes.
artefacts=(
  "auth_agent-$version-py3-none-$manylinux.whl" "auth_agent_client-$version-py3-none-any.whl"
  "auth-agent-$version.tgz" "auth-agent-linux-$node_arch-$version.tgz" "auth-agent-client-$version.tgz"
  "auth-agent_${version}_${deb_arch}.deb"
)
(cd "$out" && sha256sum "${artefacts[@]}" > SHA256SUMS)
size() { stat -c %s "$1"; }
mb() { awk -v b="$1" 'BEGIN { if (b < 1000000) printf "%d kB", b / 1000; else printf "%.1f MB", b / 1000000 }'; }
echo "auth-agent $version for linux $arch: binary $(mb "$(size "$built")") built, $(mb "$(size "$agent")") stripped;" \
  "needs glibc >= $glibc ($manylinux), $glibcxx (libstdc++)"
for artefact in "${artefacts[@]}"; do
  printf '%10s  %s\n' "$(mb "$(size "$out/$artefact")")" "$artefact"
done
echo "SHA-256 sums in $out/SHA256SUMS"
