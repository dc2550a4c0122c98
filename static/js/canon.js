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
