// The console's one script (served by sitebiz; the CSP allows no inline script). Pages work
// without it; it adds copy buttons and hands the session's CSRF token to htmx's requests.
// htmx (also served by sitebiz) does the live parts: lists that poll for what is new.

const csrfToken = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content');

// htmx requests that change something carry the CSRF token as a header too (forms also have it
// as a hidden field).
document.addEventListener('htmx:configRequest', (event) => {
  if (csrfToken) event.detail.headers['X-CSRF-Token'] = csrfToken;
});

// <button data-copy="element-id">: copies the element's text, and says so.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') ?? '');
  if (!source) return;
  const status = button.parentElement?.querySelector('.copy-status');
  try {
    await navigator.clipboard.writeText(source.textContent?.trim() ?? '');
    if (status) status.textContent = 'Copied.';
  } catch {
    // No clipboard (an http page that is not localhost): select the text so the user can copy it.
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    if (status) status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
  }
});
