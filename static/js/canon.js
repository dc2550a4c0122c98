// Small progressive enhancements; every page works without this file.
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.selectAll) return;
  const form = box.closest("form");
  if (!form) return;
  // `elements`, not the form's descendants: the inbox's row checkboxes join the form by their `form` attribute.
  for (const item of form.elements) {
    if (item instanceof HTMLInputElement && item.type === "checkbox" && item.name === box.dataset.selectAll) {
      item.checked = box.checked;
    }
  }
});

// A one-way action asks first (`data-confirm` on its form). Forms that htmx posts use `hx-confirm`.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// htmx 2 does not swap error answers: say so instead of leaving a click that seems to do nothing.
function showProblem(text) {
  const box = document.getElementById("messages");
  if (!box) return;
  const line = document.createElement("p");
  line.className = "message error";
  line.setAttribute("role", "alert");
  line.textContent = text;
  box.replaceChildren(line);
}

document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr.status;
  if (status === 403) {
    showProblem("Refused (403): you may not do this, or the page is out of date. Reload the page and try again.");
  } else if (status === 404) {
    showProblem("Not found (404): it may have been removed from your view. Reload the page.");
  } else {
    showProblem(`The server could not do this (${status}). Nothing was changed by this click; try again.`);
  }
});

document.addEventListener("htmx:sendError", () => {
  showProblem("The server could not be reached. Nothing was changed; check the connection and try again.");
});

// Triage by keyboard on the inbox and an entry's page: triage.js, which those pages load.
