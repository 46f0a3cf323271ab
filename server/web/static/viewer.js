// Conveniences only: every page works without this file.
"use strict";
document.documentElement.classList.add("js");

// Following a link to something inside a collapsed <details> opens it (and its parents).
function openTarget() {
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id && document.getElementById(id);
  for (let node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
  if (target) target.scrollIntoView({ block: "center" });
}
window.addEventListener("hashchange", openTarget);
document.addEventListener("DOMContentLoaded", () => {
  openTarget();
  for (const button of document.querySelectorAll("button.expand-all, button.collapse-all")) {
    button.addEventListener("click", () => {
      const open = button.classList.contains("expand-all");
      for (const d of document.querySelectorAll(button.dataset.target + " details.call")) d.open = open;
    });
  }
  // Filters apply as soon as a select changes.
  for (const select of document.querySelectorAll("form.filters select")) {
    select.addEventListener("change", () => select.form.submit());
  }
});
