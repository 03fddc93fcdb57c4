// Vega, Vega-Lite and vega-embed (web/vendor/vega/: npm's browser builds, pinned), loaded
// once, on the first chart; and the charts' colours: web/chart-theme.json with the page's CSS
// variables (light or dark, as the page is now) filled in.

const FILES = ['vega.min.js', 'vega-lite.min.js', 'vega-embed.min.js']; // each needs the one before
const VAR = /^var\((--[\w-]+)\)$/;

let loading = null;

/** vega-embed and the theme's template; a failed load is tried again on the next chart. */
export function loadVega() {
  loading ??= (async () => {
    // The builds are UMD scripts: run as modules, they set `vega`, `vegaLite` and `vegaEmbed`
    // on globalThis (the page's policy runs only its own scripts, so no <script> is added).
    for (const file of FILES) await import(new URL(`../vendor/vega/${file}`, import.meta.url).href);
    const response = await fetch(new URL('../chart-theme.json', import.meta.url));
    if (!response.ok) throw new Error(`chart theme: HTTP ${response.status}`);
    return { embed: globalThis.vegaEmbed, template: await response.json() };
  })().catch((err) => {
    loading = null;
    throw err;
  });
  return loading;
}

/** The theme `template` with each `var(--name)` replaced by the page's value now. */
export function themed(template) {
  const style = getComputedStyle(document.documentElement);
  const fill = (value) => {
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    }
    const name = typeof value === 'string' && VAR.exec(value)?.[1];
    return name ? style.getPropertyValue(name).trim() : value;
  };
  return fill(template);
}
