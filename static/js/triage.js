// Triage by keyboard, on the inbox and on an entry's page (docs/dashboard.md, "Keys"). Loaded by those
// two pages only; every action is a link or a form that works without this file.
//
// The list: j/k move between rows (one row at a time is in the Tab order: a roving tabindex), x ticks,
// *a / *n tick every row of the page or none, m merges and r rejects the ticked rows when any are
// ticked, else the current one (a flagged row asks first: m again, or Enter, confirms), Enter or o opens
// the current row, e opens it at its edit form, z undoes the last action, ? lists the keys. After an
// action, focus moves on to the next pending row, and the rows that follow in the queue slide in as
// decided ones leave it (`refill`). The result is announced by the toast, a live region the server fills.
//
// An entry's page: j/k the next and previous entry of the list, m merges, r focuses the reason, e opens
// the edit form, z undoes, u or Escape go back to the list (its filters kept, the entry current).
(() => {
  const ROW = "#inbox-list tr.entry-row";
  // Where a key is text, or belongs to an open dialog: a tick box or a button is neither.
  const TYPING = "input:not([type=checkbox], [type=radio], [type=submit], [type=button]), textarea, select, [contenteditable], dialog";
  // How long a `*` waits for its second key.
  const PREFIX_MS = 2000;

  // --- Shared -------------------------------------------------------------------------------------

  // A line in the page's messages, for a key that has nothing to act on: never a silent key.
  function say(text) {
    const box = document.getElementById("messages");
    if (!box) return;
    const line = document.createElement("p");
    line.className = "message";
    line.textContent = text;
    box.replaceChildren(line);
  }

  function openKeys() {
    const dialog = document.getElementById("triage-keys");
    if (dialog && !dialog.open) dialog.showModal();
  }

  function undo() {
    const button = document.querySelector("#toast [data-undo]");
    if (button) button.click();
    else say("Nothing to undo: the last merge or rejection is undone only from the page it left you on, within its undo window.");
  }

  // An Undo is offered only while the undo window is open: the toast's button leaves when it closes.
  function armUndo() {
    for (const button of document.querySelectorAll("[data-until]:not([data-armed])")) {
      button.dataset.armed = "1";
      const left = Number(button.dataset.until) * 1000 - Date.now();
      setTimeout(() => button.closest("form").remove(), Math.max(left, 0));
    }
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("[data-open-keys]")) openKeys();
  });

  // --- The list -----------------------------------------------------------------------------------

  function rows() {
    return [...document.querySelectorAll(ROW)];
  }

  // Read from `data-status`, not the class: htmx keeps a swapped row's old class until it settles.
  function pending(row) {
    return row.dataset.status === "pending";
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

  // The pending row after the row `fromId`, else the nearest one before it; null when none is left.
  function nextPending(fromId) {
    const all = rows();
    const at = all.findIndex((row) => row.id === fromId);
    return all.slice(at + 1).find(pending) || all.slice(0, Math.max(at, 0)).reverse().find(pending) || null;
  }

  // After a decision: the row `fromId` keeps focus while it is pending (a bulk action left it alone),
  // else the next pending row takes it; with none left, the row stays current until the list refills.
  function settleOn(fromId) {
    const row = document.getElementById(fromId);
    if (row && pending(row)) focusRow(row);
    else focusRow(nextPending(fromId) || row || rows()[0]);
  }

  function ticked() {
    return [...document.querySelectorAll(`${ROW} input[name=ids]:checked`)];
  }

  function tickAll(on) {
    for (const box of document.querySelectorAll(`${ROW} input[name=ids]`)) box.checked = on;
    const all = document.querySelector("#bulk [data-select-all]");
    if (all) all.checked = on;
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

  document.addEventListener("click", (event) => {
    const row = event.target.closest && event.target.closest(ROW);
    if (row) engage(row);
  });

  // The first row takes part in the Tab order until another is chosen; a row focused by Tab or a click
  // becomes the current one. Coming back from an entry's page (`#entry-<id>`), its row is the current one.
  function initRows() {
    const all = rows();
    if (all.length && !all.some((row) => row.tabIndex === 0)) markCurrent(all.find(pending) || all[0]);
    for (const list of document.querySelectorAll("#inbox-list .triage")) list.classList.add("keyed");
    armUndo();
  }

  function cameBack() {
    const id = location.hash.slice(1);
    const row = id.startsWith("entry-") && document.getElementById(id);
    if (row && row.matches(ROW)) focusRow(row);
  }

  function openReason(row) {
    const box = row.querySelector("details.reject-box");
    if (!box) return;
    box.open = true;
    box.querySelector("input[data-reason]").focus();
  }

  function notPending(row) {
    say(`#${row.dataset.entry} was ${row.querySelector("td.state")?.textContent.trim() || "decided"}: j and k move to a pending row.`);
  }

  function merge(row) {
    // A bulk merge waiting for its flagged entries to be confirmed: m again confirms it.
    const asked = document.querySelector("#confirm-flagged button[name=action][value=merge]");
    if (asked) return asked.click();
    if (ticked().length) return document.querySelector("#bulk button[name=action][value=merge]").click();
    if (!row) return;
    const button = row.querySelector("[data-merge]");
    if (button) button.closest("form").requestSubmit();
    else notPending(row);
  }

  function reject(row) {
    if (ticked().length) return document.querySelector("#bulk input[name=reason]").focus();
    if (!row) return;
    if (row.querySelector("details.reject-box")) openReason(row);
    else notPending(row);
  }

  function open(row, at = "") {
    const link = row && row.querySelector("a[data-open]");
    if (link) location.href = link.href + at;
  }

  const LIST_KEYS = {
    j: () => moveBy(1),
    k: () => moveBy(-1),
    x: (row) => {
      if (!row) return;
      const box = row.querySelector("input[name=ids]");
      if (box) box.click();
      else notPending(row);
    },
    m: merge,
    r: reject,
    o: (row) => open(row),
    e: (row) => open(row, "#edit"),
    z: undo,
    "?": openKeys,
  };

  // Escape in a reason field gives the keys back: a row's closes its box, the bulk bar's is left.
  function leaveField(target) {
    if (target.matches("input[data-reason]") && target.closest(ROW)) {
      const row = target.closest(ROW);
      target.closest("details").open = false;
      focusRow(row);
      return true;
    }
    if (target.matches("#bulk input[name=reason]")) {
      focusRow(currentRow() || rows().find(pending));
      return true;
    }
    return false;
  }

  // --- The list refills ---------------------------------------------------------------------------
  // A pending list loses its decided entries on the server while their rows stay here, folded: the
  // entries that now belong on the page are asked for and slide in at the end of their group, with the
  // pages and count, or the empty state once nothing is left.
  let refilling = false;
  let again = false;

  function refill() {
    const list = document.getElementById("inbox-list");
    const table = document.getElementById("inbox-rows");
    if (!list || !table || !table.dataset.refill || typeof htmx === "undefined") return;
    if (refilling) {
      again = true;
      return;
    }
    refilling = true;
    const params = new URLSearchParams(table.dataset.query || "");
    params.set("refill", "1");
    for (const row of rows().filter(pending)) params.append("shown", row.dataset.entry);
    for (const body of table.querySelectorAll("tbody[id^='inbox-group-']")) {
      params.append("group", body.id.slice("inbox-group-".length));
    }
    const done = () => {
      refilling = false;
      if (again) {
        again = false;
        refill();
      } else refilled();
    };
    htmx.ajax("GET", `${table.dataset.refill}?${params}`, { source: list, target: list, swap: "none" }).then(done, done);
  }

  // The current row was decided and still has focus (nothing else was chosen meanwhile): focus goes to
  // the first of the rows that slid in, or to the empty state.
  function refilled() {
    const current = currentRow();
    const active = document.activeElement;
    if (!current || pending(current) || (active !== current && active !== document.body)) return;
    const next = nextPending(current.id);
    if (next) focusRow(next);
    else document.querySelector("#inbox-empty .empty")?.focus();
  }

  // Where an action came from, by request, so focus can move on once htmx has swapped its answer in.
  const origins = new WeakMap();

  document.addEventListener("htmx:beforeRequest", (event) => {
    const elt = event.detail.elt;
    if (!(elt instanceof HTMLFormElement) || !elt.closest("#inbox-list, #toast")) return;
    const row = elt.closest(ROW);
    const ids = [...new FormData(elt).getAll("ids")];
    const at = currentRow();
    let origin = null;
    if (elt.querySelector("input[name=action][value=undo]")) origin = { id: `entry-${ids[0]}`, undo: true };
    else if (row) origin = { id: row.id };
    else if (ids.length) origin = { id: at ? at.id : `entry-${ids[0]}`, bulk: elt };
    if (origin) origins.set(event.detail.xhr, origin);
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const done = origins.get(event.detail.xhr);
    origins.delete(event.detail.xhr);
    if (!done || !event.detail.successful) return;
    if (done.bulk) {
      const selectAll = document.querySelector("#bulk [data-select-all]");
      if (selectAll) selectAll.checked = false;
      const reason = document.querySelector("#bulk input[name=reason]");
      if (reason) reason.value = "";
    }
    const flaggedAgain = document.querySelector("#confirm-flagged button[name=action][value=merge]");
    // A bulk merge that asks first (flagged entries) shows its question above the list: Enter or m
    // again merges them. Once answered, the question leaves.
    if (done.bulk && flaggedAgain && done.bulk !== flaggedAgain.form) {
      flaggedAgain.focus();
      return;
    }
    if (done.bulk && done.bulk === flaggedAgain?.form) document.getElementById("confirm-flagged").remove();
    // A merge that asks first (a flagged text, competing boundaries) keeps the row, and focus moves to
    // its answer: Enter or m again merges a flagged one; nothing is merged by the first press.
    const question = document.querySelector(`#${done.id} [data-question]`);
    const confirm = question && question.querySelector("[data-merge]");
    // A refused row (changed since it was shown, …) keeps focus: it is to be read again, not skipped.
    const refusal = !done.bulk && document.querySelector(`#${done.id} .message.error`);
    if (confirm) {
      markCurrent(question.closest(ROW));
      confirm.focus();
    } else if (question) focusRow(question.closest(ROW));
    else if (refusal) focusRow(refusal.closest(ROW));
    else if (done.undo) focusRow(document.getElementById(done.id));
    else settleOn(done.id);
    armUndo();
    refill();
  });

  document.addEventListener("htmx:afterSettle", initRows);

  // --- An entry's page ----------------------------------------------------------------------------

  function follow(selector, none) {
    const link = document.querySelector(selector);
    if (link) location.href = link.href;
    else say(none);
  }

  function openEdit() {
    const box = document.getElementById("edit");
    if (!box) return say("This entry cannot be edited: only a pending one is, by a coordinator.");
    box.open = true;
    box.querySelector("input:not([type=hidden]), textarea").focus();
  }

  function back() {
    const list = document.querySelector("a[data-list]");
    const page = document.querySelector("[data-entry-page]");
    if (list) location.href = `${list.href}#entry-${page.dataset.entryPage}`;
  }

  const ENTRY_KEYS = {
    j: () => follow(".queue-nav a[rel=next]", "This is the last entry of the list: u goes back to it."),
    k: () => follow(".queue-nav a[rel=prev]", "This is the first entry of the list: u goes back to it."),
    m: () => {
      const button = document.querySelector(".decide [data-merge]");
      if (button) button.form.requestSubmit(button);
      else say("Nothing to merge: this entry is not pending, or you may not decide it.");
    },
    r: () => {
      const reason = document.querySelector(".decide input[data-reason]");
      if (reason) reason.focus();
      else say("Nothing to reject: this entry is not pending, or you may not decide it.");
    },
    e: openEdit,
    z: undo,
    u: back,
    Escape: back,
    "?": openKeys,
  };

  // Escape in a field of the page gives the keys back: the edit form folds, the reason field is left.
  function leaveEntryField(target) {
    const edit = target.closest("#edit");
    if (edit) {
      edit.open = false;
      edit.querySelector("summary").focus();
    } else target.blur();
    return true;
  }

  // --- Keys ---------------------------------------------------------------------------------------

  let prefix = "";
  let prefixTimer = 0;

  function onKey(event, keys, row) {
    if (prefix === "*") {
      prefix = "";
      clearTimeout(prefixTimer);
      if (event.key === "a" || event.key === "n") {
        event.preventDefault();
        tickAll(event.key === "a");
        return;
      }
    }
    if (event.key === "*" && keys === LIST_KEYS) {
      prefix = "*";
      prefixTimer = setTimeout(() => { prefix = ""; }, PREFIX_MS);
      event.preventDefault();
      return;
    }
    // Enter opens a row only from the row itself: on its links and buttons it does what they do.
    const action = event.key === "Enter" && keys === LIST_KEYS ? (event.target.matches(ROW) ? LIST_KEYS.o : null) : keys[event.key];
    if (!action) return;
    event.preventDefault();
    action(row);
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    const onList = document.getElementById("inbox-list") !== null;
    const onEntry = document.querySelector("[data-entry-page]") !== null;
    if (!onList && !onEntry) return;
    if (target.closest && target.closest(TYPING)) {
      if (event.key !== "Escape" || target.closest("dialog")) return;
      if (onList ? leaveField(target) : leaveEntryField(target)) event.preventDefault();
      return;
    }
    onKey(event, onList ? LIST_KEYS : ENTRY_KEYS, onList ? currentRow() : null);
  });

  // Ctrl+Enter (⌘+Enter) in the edit form saves it, as in a comment box.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    const form = event.target.closest && event.target.closest("#edit form");
    if (form) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  function start() {
    initRows();
    cameBack();
    // Once loaded: the browser's own move to the `#edit` fragment would take focus back.
    if (location.hash === "#edit" && document.querySelector("[data-entry-page]")) {
      if (document.readyState === "complete") openEdit();
      else window.addEventListener("load", openEdit, { once: true });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
