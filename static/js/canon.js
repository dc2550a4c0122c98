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

// --- Inbox triage by keyboard (docs/dashboard.md, "Inbox") ---------------------------------------
// j/k move between rows (one row at a time is in the Tab order: a roving tabindex), x ticks, m merges
// (a flagged row asks first: m again, or Enter, confirms),
// r opens the row's reason field (Enter rejects, Escape cancels), e opens the entry, u undoes the last
// action, ? lists the keys. After an action, focus moves on to the next undecided row; the result is
// announced by the toast, a live region the server fills.
const ROW = "#inbox-list tr.entry-row";

function rows() {
  return [...document.querySelectorAll(ROW)];
}

function undecided(row) {
  return row.classList.contains("status-pending");
}

function currentRow() {
  const active = document.activeElement;
  return (active && active.closest && active.closest(ROW)) || document.querySelector(`${ROW}.current`);
}

function markCurrent(row) {
  for (const other of document.querySelectorAll(`${ROW}.current, ${ROW}[tabindex="0"]`)) {
    if (other !== row) {
      other.classList.remove("current");
      other.tabIndex = -1;
    }
  }
  row.classList.add("current");
  row.tabIndex = 0;
}

function focusRow(row) {
  if (!row) return;
  markCurrent(row);
  row.focus();
}

function moveBy(step) {
  const all = rows();
  if (!all.length) return;
  const current = currentRow();
  const at = all.indexOf(current);
  // The first key press from outside the list goes to its current row.
  if (at >= 0 && !current.contains(document.activeElement)) step = 0;
  focusRow(at < 0 ? all[0] : all[Math.min(Math.max(at + step, 0), all.length - 1)]);
}

// The next undecided row after the one with id `fromId`, else the nearest one before it.
function focusNextUndecided(fromId) {
  const all = rows();
  const at = all.findIndex((row) => row.id === fromId);
  const next = all.slice(at + 1).find(undecided) || all.slice(0, Math.max(at, 0)).reverse().find(undecided);
  focusRow(next || document.getElementById(fromId) || all[0]);
}

// The first row takes part in the Tab order until another is chosen; a row focused by Tab or a click
// becomes the current one.
function initRows() {
  const all = rows();
  if (all.length && !all.some((row) => row.tabIndex === 0)) markCurrent(all.find(undecided) || all[0]);
  for (const list of document.querySelectorAll("#inbox-list .triage")) list.classList.add("keyed");
  armUndo();
}

// The current row shows its excerpt once the list is in use. A press of the pointer moves focus before
// its click lands, so the rows keep their height until the click: otherwise a title clicked below an
// open excerpt would move away from under the pointer and the click would miss it.
function engage(row) {
  markCurrent(row);
  row.closest(".triage")?.classList.add("engaged");
}

let pointing = false;
document.addEventListener("pointerdown", () => { pointing = true; }, true);
for (const type of ["pointerup", "pointercancel"]) {
  document.addEventListener(type, () => setTimeout(() => { pointing = false; }), true);
}

document.addEventListener("focusin", (event) => {
  const row = event.target.closest && event.target.closest(ROW);
  if (row && !pointing) engage(row);
});

// An Undo is offered only while the undo window is open: the toast's button leaves when it closes.
function armUndo() {
  for (const button of document.querySelectorAll("[data-until]:not([data-armed])")) {
    button.dataset.armed = "1";
    const left = Number(button.dataset.until) * 1000 - Date.now();
    setTimeout(() => button.closest("form").remove(), Math.max(left, 0));
  }
}

function openKeys() {
  const dialog = document.getElementById("triage-keys");
  if (dialog && !dialog.open) dialog.showModal();
}

function openReason(row) {
  const box = row.querySelector("details.reject-box");
  if (!box) return;
  box.open = true;
  box.querySelector("input[data-reason]").focus();
}

const KEYS = {
  j: () => moveBy(1),
  k: () => moveBy(-1),
  x: (row) => row && row.querySelector("input[type=checkbox]")?.click(),
  m: (row) => row && row.querySelector("[data-merge]")?.closest("form").requestSubmit(),
  r: (row) => row && openReason(row),
  e: (row) => row && row.querySelector("a[data-open]")?.click(),
  u: () => document.querySelector("#toast [data-undo]")?.click(),
  "?": openKeys,
};

document.addEventListener("keydown", (event) => {
  if (!document.getElementById("inbox-list") || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (event.key === "Escape" && target.matches && target.matches("input[data-reason]")) {
    const row = target.closest(ROW);
    target.closest("details").open = false;
    focusRow(row);
    event.preventDefault();
    return;
  }
  if (target.closest && target.closest("input, textarea, select, [contenteditable], dialog")) return;
  const action = KEYS[event.key];
  if (!action) return;
  event.preventDefault();
  action(currentRow());
});

document.addEventListener("click", (event) => {
  if (!event.target.closest) return;
  if (event.target.closest("[data-open-keys]")) openKeys();
  const row = event.target.closest(ROW);
  if (row) engage(row);
});

// Where an action came from, so focus can move on once htmx has swapped its answer in.
let origin = null;

document.addEventListener("htmx:beforeRequest", (event) => {
  const elt = event.detail.elt;
  const row = elt.closest && elt.closest(ROW);
  const undo = elt.querySelector && elt.querySelector("input[name=action][value=undo]");
  const ids = elt instanceof HTMLFormElement ? [...new FormData(elt).getAll("ids")] : [];
  if (undo) origin = { id: `entry-${ids[0]}`, undo: true };
  else if (row) origin = { id: row.id, undo: false };
  else if (elt.id === "bulk" && ids.length) origin = { id: `entry-${ids[0]}`, undo: false, bulk: elt };
  else origin = null;
});

document.addEventListener("htmx:afterRequest", (event) => {
  const done = origin;
  origin = null;
  if (!done || !event.detail.successful) return;
  if (done.bulk) {
    const selectAll = done.bulk.querySelector("[data-select-all]");
    if (selectAll) selectAll.checked = false;
    const reason = done.bulk.querySelector("input[name=reason]");
    if (reason) reason.value = "";
  }
  // A merge that asks first (a flagged text, competing boundaries) keeps the row, and focus moves to
  // its answer: Enter or m again merges a flagged one; nothing is merged by the first press.
  const question = document.querySelector(`#${done.id} [data-question]`);
  const confirm = question && question.querySelector("[data-merge]");
  // A refused row (changed since it was shown, …) keeps focus: it is to be read again, not skipped.
  const refusal = document.querySelector(`#${done.id} .message.error`);
  if (confirm) {
    markCurrent(question.closest(ROW));
    confirm.focus();
  } else if (question) focusRow(question.closest(ROW));
  else if (refusal) focusRow(refusal.closest(ROW));
  else if (done.undo) focusRow(document.getElementById(done.id));
  else focusNextUndecided(done.id);
  armUndo();
});

document.addEventListener("htmx:afterSettle", initRows);
initRows();
