// Small progressive enhancements; every page works without this file.
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.selectAll) return;
  const form = box.closest("form");
  if (!form) return;
  for (const item of form.querySelectorAll(`input[type=checkbox][name="${box.dataset.selectAll}"]`)) {
    item.checked = box.checked;
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

// A row's Reject sends the reason typed in the bar above the list; clear it once used, so the next
// rejection does not silently carry the same reason. (The row, and the button with it, is swapped out
// by then, so the form is found by its id.)
document.addEventListener("htmx:afterRequest", (event) => {
  const path = event.detail.requestConfig ? event.detail.requestConfig.path : "";
  if (!event.detail.successful || !/\/inbox\/\d+\/reject$/.test(path)) return;
  const reason = document.querySelector("#bulk input[name=reason]");
  if (reason) reason.value = "";
});
