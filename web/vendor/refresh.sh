#!/bin/sh
# Re-copy the page's front-end packages from the npm registry at the versions pinned in
# package.json / package-lock.json (checked by their integrity hashes). No build step: the
# files below are served as they are. To upgrade: change a pin in package.json, run
# `npm install --package-lock-only` here, then this script, and commit the result.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
m="$work/node_modules"
mkdir -p "$here/markdown-it" "$here/dompurify" "$here/swagger-ui" "$here/vega"
cp "$m/markdown-it/dist/browser/markdown-it.esm.min.mjs" "$m/markdown-it/LICENSE" "$here/markdown-it/"
cp "$m/dompurify/dist/purify.es.mjs" "$m/dompurify/LICENSE" "$here/dompurify/"
cp "$m/swagger-ui-dist/swagger-ui-bundle.js" "$m/swagger-ui-dist/swagger-ui-standalone-preset.js" \
   "$m/swagger-ui-dist/swagger-ui.css" "$m/swagger-ui-dist/LICENSE" "$m/swagger-ui-dist/NOTICE" \
   "$here/swagger-ui/"
# Vega: the three browser builds (UMD, loaded in order by web/js/vega.js), their licences, and
# the licence of every package they bundle, listed from the lock.
for p in vega vega-lite vega-embed; do
  cp "$m/$p/build/$p.min.js" "$here/vega/"
  cp "$m/$p/LICENSE" "$here/vega/LICENSE-$p"
done
(cd "$work" && node -e '
  const lock = require("./package-lock.json").packages;
  const skip = /^node_modules\/(dompurify|markdown-it|swagger-ui-dist|@scarf|argparse|entities|linkify-it|mdurl|punycode|uc.micro|@types)/;
  const rows = Object.entries(lock).filter(([k]) => k && !skip.test(k))
    .map(([k, v]) => `| ${k.replace(/^.*node_modules\//, "")} | ${v.version} | ${v.license} |`);
  console.log("# What vega, vega-lite and vega-embed depend on\n\nTheir browser builds in this folder bundle the packages of this list they use (versions and licences from package-lock.json; the command-line ones, such as yargs, stay out).\n\n| package | version | licence |\n| --- | --- | --- |\n" + rows.join("\n"));
') > "$here/vega/BUNDLED.md"
# Source maps are not shipped: drop the comments that point at them.
sed -i '/^\/\/# sourceMappingURL=/d' "$here"/markdown-it/*.mjs "$here"/dompurify/*.mjs \
   "$here"/swagger-ui/*.js "$here"/vega/*.js
sed -i 's#/\*\# sourceMappingURL=[^*]*\*/##' "$here/swagger-ui/swagger-ui.css"
