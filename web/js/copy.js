// Copy buttons: the text goes to the clipboard and the button says so for a moment.

const DONE_MS = 1500;

/** Put `text` on the clipboard; true when it worked. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A click on `button` copies what `getText()` returns and shows the outcome. */
export async function copyFrom(button, getText) {
  const label = button.dataset.label || button.textContent;
  button.dataset.label = label;
  const ok = await copyText(getText());
  button.textContent = ok ? 'Copied' : 'Copy failed';
  button.classList.toggle('done', ok);
  setTimeout(() => {
    button.textContent = label;
    button.classList.remove('done');
  }, DONE_MS);
}

/** Code blocks are re-rendered while an answer streams: one listener serves all their buttons. */
export function listenForCodeCopies(root) {
  root.addEventListener('click', (event) => {
    const button = event.target.closest('.copy-code');
    if (!button) return;
    const code = button.closest('.code-block')?.querySelector('code');
    if (code) copyFrom(button, () => code.textContent);
  });
}
