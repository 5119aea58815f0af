#!/bin/sh
# Assembles mcp-remote (the npm package `mcp-remote`, the stdio-to-remote MCP bridge with OAuth most
# hosts' documentation points to) into one Node file, from its public sources, for the bench's
# `--mcp-remote PATH` comparison. The npm registry cannot be reached here; Debian's and the sources'
# repositories can, so this does what mcp-remote's own build (tsup) does: bundle src/proxy.ts with its
# devDependencies, and here its dependencies too, into one ES module.
#
# Usage: assemble-mcp-remote.sh SOURCES OUT.js
#   writes OUT.js (mcp-remote's proxy: `node OUT.js https://server/mcp`) and OUT-client.js beside it
#   (its `mcp-remote-client`, a one-shot tools/list). Nothing is written into SOURCES.
#
# SOURCES is a directory holding one source tree per dependency, named as below, each at the tag the
# lock file of mcp-remote v0.1.43 (pnpm-lock.yaml) resolves to. Each is a public repository
# (owner/name on GitHub) checked out at that tag, e.g. `git clone -b TAG --depth 1 <repository> SOURCES/NAME`,
# or from a bare mirror: `mkdir SOURCES/NAME && git --git-dir=MIRROR archive TAG | tar -x -C SOURCES/NAME`.
#   NAME                 repository                          tag
#   mcp-remote           geelen/mcp-remote                   v0.1.43   (newest tag; its package.json says 0.1.38)
#   typescript-sdk       modelcontextprotocol/typescript-sdk v1.25.3   (@modelcontextprotocol/sdk)
#   zod                  colinhacks/zod                      v4.1.13
#   zod-to-json-schema   StefanTerdell/zod-to-json-schema    1082886   (its v3.25.0 release commit, not tagged)
#   pkce-challenge       crouchcd/pkce-challenge             5.0.1
#   eventsource-parser   rexxars/eventsource-parser          v3.0.6
#   eventsource          EventSource/eventsource             v3.0.7
#   ajv                  ajv-validator/ajv                   v8.17.1
#   ajv-formats          ajv-validator/ajv-formats           v3.0.1
#   fast-uri             fastify/fast-uri                    v3.1.0
#   undici               nodejs/undici                       v7.12.0
#   strict-url-sanitise  geelen/strict-url-sanitise          v0.0.1
# and from Debian (bookworm): apt-get install esbuild node-express node-open node-fast-deep-equal
#   node-json-schema-traverse node-require-from-string
# (express 4.18.2 for ^4.21.2, open 8.4.0 for ^10.1.0: same calls; the other three are the lock file's versions).
# Node 20.19 or later runs the result (undici 7 needs 20.18.1).
set -eu

[ $# -eq 2 ] || { echo "usage: $0 SOURCES OUT.js" >&2; exit 2; }
src=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no directory $1 (see the header of this script)" >&2; exit 1; }
out=$2
command -v esbuild >/dev/null || { echo "$0: esbuild is missing (apt-get install esbuild)" >&2; exit 1; }
for name in mcp-remote typescript-sdk zod zod-to-json-schema pkce-challenge eventsource-parser eventsource ajv ajv-formats fast-uri undici strict-url-sanitise; do
    [ -d "$src/$name" ] || { echo "$0: $src/$name is missing (see the header of this script)" >&2; exit 1; }
done
for name in express open fast-deep-equal json-schema-traverse require-from-string; do
    [ -d "/usr/share/nodejs/$name" ] || { echo "$0: /usr/share/nodejs/$name is missing (apt-get install node-$name)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nm=$work/node_modules
mkdir -p "$nm/@modelcontextprotocol"

# Packages whose package.json already maps to their TypeScript sources under a build condition.
# zod's sources use TypeScript 5.0's `const` type parameters, which Debian's esbuild (0.17.0) cannot
# parse: they only steer type inference, so a copy without the word is the same JavaScript.
cp -R "$src/zod/packages/zod" "$nm/zod"                        # condition @zod/source
find "$nm/zod/src" -name '*.ts' -exec sed -i -E 's/(^|[<,(]|\s)const ([A-Za-z_][A-Za-z0-9_]* extends )/\1\2/g; s/<const ([A-Za-z_][A-Za-z0-9_]*[,>])/<\1/g' {} +
ln -s "$src/eventsource-parser" "$nm/eventsource-parser"       # condition source
ln -s "$src/eventsource" "$nm/eventsource"                     # condition source
# Plain CommonJS packages, used as published.
ln -s "$src/undici" "$nm/undici"
ln -s "$src/fast-uri" "$nm/fast-uri"

# Packages whose package.json points only at a build output: a package.json that points at the sources.
source_package() { # NAME DIR ENTRY
    mkdir -p "$nm/$1"
    ln -s "$2" "$nm/$1/src"
    printf '{"name":"%s","type":"module","main":"src/%s"}\n' "$1" "$3" >"$nm/$1/package.json"
}
source_package pkce-challenge "$src/pkce-challenge/src" index.ts
source_package zod-to-json-schema "$src/zod-to-json-schema/src" index.ts
source_package strict-url-sanitise "$src/strict-url-sanitise/src" index.ts
# The SDK's imports name files (`@modelcontextprotocol/sdk/client/index.js`): its sources stand at the package's root.
ln -s "$src/typescript-sdk/src" "$nm/@modelcontextprotocol/sdk"

# ajv and ajv-formats are CommonJS written in TypeScript (`module.exports = exports = Ajv` beside
# `export default Ajv`): compiled file by file as their own build (tsc, without esModuleInterop) does,
# keeping `.default`, and with `import * as traverse from "json-schema-traverse"` the module itself (callable).
compile_cjs() { # NAME SRCDIR
    mkdir -p "$nm/$1/dist"
    (cd "$2" && esbuild $(find . -name '*.ts' ! -name '*.d.ts') --outdir="$nm/$1/dist" --format=cjs --platform=node --log-level=error)
    find "$nm/$1/dist" -name '*.js' -exec sed -i -E 's/__toESM\(require\("([a-z0-9-]+)"\)\)/require("\1")/g' {} +
    (cd "$2" && find . -name '*.json' -exec sh -c 'mkdir -p "$0/$(dirname "$1")" && cp "$1" "$0/$1"' "$nm/$1/dist" {} \;)
}
compile_cjs ajv "$src/ajv/lib"
cp "$src/ajv/package.json" "$nm/ajv/package.json"
echo 'module.exports.default = module.exports' >>"$nm/ajv/dist/ajv.js"
compile_cjs ajv-formats "$src/ajv-formats/src"
cp "$src/ajv-formats/package.json" "$nm/ajv-formats/package.json"
echo 'module.exports.default = module.exports' >>"$nm/ajv-formats/dist/index.js"

# The sources are outside $work: their packages are found through NODE_PATH.
# The CommonJS parts (express, undici, ajv) call require() for Node's own modules and open looks for an
# `xdg-open` beside itself (__dirname; none there, so it runs the PATH's, as open 10 does bundled): an ES module has neither.
banner="import { createRequire as __mcpRemoteRequire } from 'node:module'; import { dirname as __mcpRemoteDirname } from 'node:path'; \
import { fileURLToPath as __mcpRemotePath } from 'node:url'; const require = __mcpRemoteRequire(import.meta.url); \
const __filename = __mcpRemotePath(import.meta.url); const __dirname = __mcpRemoteDirname(__filename);"
bundle() { # ENTRY OUT
    (cd "$work" && NODE_PATH="$nm:/usr/share/nodejs" esbuild "$src/mcp-remote/src/$1" --bundle --platform=node --format=esm \
        --target=node20 --conditions=@zod/source,source --main-fields=module,main --banner:js="$banner" \
        --log-level=error --outfile="$2")  # warnings: only the sources' tsconfig bases, not fetched
}
mkdir -p "$(dirname "$out")"
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
bundle proxy.ts "$out_abs"
bundle client.ts "${out_abs%.js}-client.js"
echo "$out_abs"
