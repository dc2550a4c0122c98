// A form that posts says it is working while it is sent, and cannot be sent twice: the form is
// `aria-busy`, its submit buttons are disabled and the one pressed shows a spinner (canon.css), until
// htmx has the answer, or, for a plain form, until the next page replaces this one.
const BUSY = "data-busy";

function submitButtons(form) {
  // `elements`: the buttons that join the form by their `form` attribute count too.
  return [...form.elements].filter((item) => item instanceof HTMLButtonElement && item.type === "submit");
}

function markBusy(form, pressed) {
  form.setAttribute("aria-busy", "true");
  for (const button of submitButtons(form)) {
    if (button.disabled) continue; // disabled for a reason of its own: left as it is
    button.disabled = true;
    button.setAttribute(BUSY, button === pressed ? "pressed" : "");
  }
}

function markDone(form) {
  form.removeAttribute("aria-busy");
  for (const button of submitButtons(form)) {
    if (!button.hasAttribute(BUSY)) continue;
    button.disabled = false;
    button.removeAttribute(BUSY);
  }
}

function posts(form) {
  return form instanceof HTMLFormElement && form.method === "post";
}

// A plain post. The buttons are disabled once every listener has had its say (a confirmation can
// still cancel it) and the browser has read the form: a disabled button's name and value would be
// left out of what is sent.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!posts(form)) return;
  setTimeout(() => {
    if (!event.defaultPrevented) markBusy(form, event.submitter);
  });
});

// An htmx post: busy from the moment it is sent until its answer is in (or it failed).
document.addEventListener("htmx:beforeSend", (event) => {
  const form = event.detail.elt;
  if (posts(form)) markBusy(form, event.detail.requestConfig.triggeringEvent?.submitter);
});

document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (posts(form)) markDone(form);
});

// Back to a page the browser kept in memory: its forms were left busy when it was left.
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  for (const form of document.querySelectorAll("form[aria-busy]")) markDone(form);
});
