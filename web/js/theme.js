// Light or dark: the system's choice (prefers-color-scheme) until the toggle picks one, which
// this browser then remembers.

const THEME_KEY = 'chat.theme';
const system = matchMedia('(prefers-color-scheme: dark)');

function chosen() {
  const theme = localStorage.getItem(THEME_KEY);
  return theme === 'dark' || theme === 'light' ? theme : null;
}

/** The theme in effect: the remembered choice, else the system's. */
export function currentTheme() {
  return chosen() || (system.matches ? 'dark' : 'light');
}

function apply(button) {
  const theme = currentTheme();
  document.documentElement.dataset.theme = theme;
  if (!button) return;
  button.setAttribute('aria-pressed', String(theme === 'dark'));
  button.textContent = theme === 'dark' ? 'Light mode' : 'Dark mode';
  button.title = chosen() ? 'Your choice, remembered in this browser' : 'Following the system setting';
}

/** Apply the theme now and whenever the system changes; `button` switches and remembers. */
export function initTheme(button) {
  apply(button);
  system.addEventListener('change', () => apply(button));
  button.addEventListener('click', () => {
    localStorage.setItem(THEME_KEY, currentTheme() === 'dark' ? 'light' : 'dark');
    apply(button);
  });
}
