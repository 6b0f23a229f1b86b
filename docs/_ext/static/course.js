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

// Search result snippets: Sphinx fetches each page and shows the start of its main text.
// Without this, a lesson's snippet would start with the launch bar ("Download …") and
// show formulas as raw LaTeX ("\(\mathbf p\)"). The bar is dropped and math becomes
// plain text (the same rules as the page titles, docs/_ext/course_site.py latex_to_text).
const toptwoSymbols = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", Delta: "Δ",
  epsilon: "ε", varepsilon: "ε", eta: "η", theta: "θ", lambda: "λ", mu: "μ", pi: "π",
  sigma: "σ", tau: "τ", ell: "ℓ", le: "≤", leq: "≤", ge: "≥", geq: "≥", times: "×",
  cdot: "·", to: "→", infty: "∞", approx: "≈", neq: "≠", sqrt: "√", log: "log",
  in: "∈", sum: "Σ", ldots: "…", dots: "…", mid: "|"};
function toptwoPlainMath(tex) {
  let out = tex.replace(/\\(mathbf|boldsymbol|mathrm|mathit|operatorname|text|left|right)(?![A-Za-z])/g, "")
    .replace(/\\[,;!]/g, " ")
    .replace(/\\(?:hat|widehat)\s*\{?\s*([A-Za-z])\s*\}?/g, "$1\u0302")
    .replace(/\\(?:bar|overline)\s*\{?\s*([A-Za-z])\s*\}?/g, "$1\u0304")
    .replace(/\\\|/g, "‖")
    .replace(/\\([A-Za-z]+)/g, (m, name) => toptwoSymbols[name] || name);
  return out.replace(/[{}^_]/g, "").replace(/\s+/g, " ").trim();
}
function toptwoSearchText(text) {
  return text.replace(/\\\(([\s\S]*?)\\\)/g, (m, t) => toptwoPlainMath(t))
    .replace(/\\\[([\s\S]*?)\\\]/g, (m, t) => toptwoPlainMath(t))
    .replace(/\$\$([\s\S]*?)\$\$/g, (m, t) => toptwoPlainMath(t));
}
function toptwoPatchSearch() {
  if (typeof Search === "undefined" || !Search.htmlToText || Search.toptwoPatched) return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".toptwo-launch, details.hide summary").forEach((e) => e.remove());
    return toptwoSearchText(original(doc.documentElement.outerHTML, anchor));
  };
  Search.toptwoPatched = true;
}
toptwoPatchSearch();
document.addEventListener("DOMContentLoaded", toptwoPatchSearch);

// On a phone a multi-panel figure is drawn at a fraction of its size: under every stored
// figure shown reduced, a link to the PNG itself, which the browser shows at full resolution
// (pinch to zoom). Shown on narrow screens only (course.css).
function toptwoFullSizeLinks() {
  document.querySelectorAll("article div.cell_output img").forEach((img) => {
    if (img.dataset.toptwoLinked) return;
    img.dataset.toptwoLinked = "1";
    const a = document.createElement("a");
    a.className = "toptwo-fullsize";
    a.href = img.getAttribute("src");
    a.target = "_blank";
    a.rel = "noopener";
    a.textContent = "Open the figure at full size";
    img.insertAdjacentElement("afterend", a);
  });
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", toptwoFullSizeLinks);
else toptwoFullSizeLinks();
