// Markdown to DOM nodes for untrusted model output: markdown-it (raw HTML off, so `<script>`
// in an answer is text) writes the HTML, DOMPurify keeps only the tags and attributes below,
// and the links are checked here. Only http(s) and mailto links stay links; each names its
// host and asks before it is followed (links.js); images are never loaded: an image becomes
// its alt text and a link showing its address.

import DOMPurify from '../vendor/dompurify/purify.es.mjs';
import markdownit from '../vendor/markdown-it/markdown-it.esm.min.mjs';

const SAFE_URL = /^(?:https?:\/\/|mailto:)/i;

const PURIFY = {
  ALLOWED_TAGS: [
    'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre',
    'code', 'em', 'strong', 's', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'a', 'span',
  ],
  ALLOWED_ATTR: ['href', 'class', 'start'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

const md = markdownit({ html: false, linkify: false, typographer: false });
// Every link is parsed as one (a `javascript:` link shows its words, not its syntax); what
// may stay a link is decided on the sanitized DOM below.
md.validateLink = () => true;

md.renderer.rules.image = (tokens, index) => {
  const token = tokens[index];
  const src = md.utils.escapeHtml(token.attrGet('src') || '');
  const alt = md.utils.escapeHtml(token.content || '');
  return `<span class="image-ref">${alt ? `${alt} ` : ''}(image: <a href="${src}">${src}</a>)</span>`;
};

// Table alignment as classes: the page's policy refuses inline styles.
md.core.ruler.push('align_classes', (state) => {
  for (const token of state.tokens) {
    const style = token.attrGet('style');
    if (!style) continue;
    token.attrs = token.attrs.filter(([name]) => name !== 'style');
    const align = /text-align:\s*(left|right|center)/.exec(style);
    if (align) token.attrJoin('class', `align-${align[1]}`);
  }
});

/** Render markdown `source` into a DocumentFragment of safe elements. */
export function renderMarkdown(source) {
  const fragment = DOMPurify.sanitize(md.render(source), PURIFY);
  for (const node of [...fragment.childNodes]) {
    if (node.nodeType === Node.TEXT_NODE && !node.data.trim()) node.remove(); // between blocks
  }
  for (const link of fragment.querySelectorAll('a')) checkLink(link);
  for (const table of fragment.querySelectorAll('table')) wrap(table, 'table-wrap');
  for (const pre of fragment.querySelectorAll('pre')) codeBlock(pre);
  return fragment;
}

/** The host a link leads to, as a person should read it (punycode shown as it is). */
export function linkHost(href) {
  if (/^mailto:/i.test(href)) return href.slice(7).split('?')[0];
  try {
    return new URL(href).host;
  } catch {
    return href;
  }
}

function checkLink(link) {
  const href = link.getAttribute('href') || '';
  if (!SAFE_URL.test(href)) {
    link.replaceWith(...link.childNodes);
    return;
  }
  link.setAttribute('rel', 'noopener noreferrer nofollow');
  link.setAttribute('target', '_blank');
  link.title = href;
  link.classList.add('external');
  const shown = link.textContent.trim();
  if (shown !== href && shown !== decoded(href)) link.dataset.host = linkHost(href);
}

function decoded(href) {
  try {
    return decodeURI(href);
  } catch {
    return href;
  }
}

function wrap(node, className) {
  const box = document.createElement('div');
  box.className = className;
  node.replaceWith(box);
  box.append(node);
  return box;
}

function codeBlock(pre) {
  const code = pre.querySelector('code');
  const language = /language-([\w+-]+)/.exec(code?.className || '')?.[1] || '';
  const box = wrap(pre, 'code-block');
  const head = document.createElement('div');
  head.className = 'code-head';
  const label = document.createElement('span');
  label.textContent = language || 'code';
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'copy copy-code';
  copy.textContent = 'Copy';
  copy.setAttribute('aria-label', `Copy ${language || 'code'}`);
  head.append(label, copy);
  box.prepend(head);
}
