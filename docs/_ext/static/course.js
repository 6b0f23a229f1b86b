// toptwo book: click a stored figure to see it at the size of the window; click again or
// press Escape to close.
document.addEventListener("click", (e) => {
  const img = e.target.closest && e.target.closest("article div.cell_output img");
  if (!img) return;
  img.classList.toggle("toptwo-zoomed");
});
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    document.querySelectorAll("img.toptwo-zoomed").forEach((i) => i.classList.remove("toptwo-zoomed"));
  }
});
