// Each square opens its answer, case by case: the rule, the cause, the error, the
// registered issue (an http(s) link only) and the repro command (data in #atlas-data,
// written by page.py). Every text goes in escaped.
(function () {
  var data = JSON.parse(document.getElementById("atlas-data").textContent);
  var box = document.getElementById("detail");
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function link(url) {
    return /^https?:\/\/[^\s"'<>`]+$/i.test(url)
      ? '<a href="' + esc(url) + '" rel="noopener noreferrer">' + esc(url) + "</a>" : "";
  }
  function pins(p) {
    return Object.keys(p).map(function (k) { return k + " " + p[k]; }).join(", ");
  }
  function show(td) {
    var a = data.answers[td.dataset.k];
    if (!a) return;
    var out = "<h2>" + esc(a.title) + ": " + esc(a.status) +
      (a.evidence ? " (" + esc(a.evidence) + ")" : "") + "</h2>";
    if (a.note) out += "<div>" + esc(a.note) + "</div>";
    if (a.error) out += "<pre>" + esc(a.error) + "</pre>";
    if (a.runs) out += "<div>runs passed: " + esc(a.runs) + "</div>";
    out += "<ul>";
    a.cases.forEach(function (c) {
      out += "<li><code>" + esc(c.case) + "</code>: <b>" + esc(c.status) + "</b>" +
        (c.evidence ? " (" + esc(c.evidence) + ")" : "") +
        (c.runs ? " · " + esc(c.runs) + " runs passed" : "") +
        (c.note ? "<br>" + esc(c.note) : "") +
        (c.cause ? "<br>cause: <code>" + esc(c.cause) + "</code>" : "") +
        (c.error && c.error !== c.cause ? "<pre>" + esc(c.error) + "</pre>" : "") +
        (c.link ? "<br>registered: " + link(c.link) : "") +
        (c.repro ? "<br>rerun: <code>" + esc(c.repro) + "</code>" : "");
      if (c.cells.length) {
        out += "<br>cells: " + c.cells.map(function (i) {
          var cell = data.cells[i];
          return cell ? esc(pins(cell.pins)) + " → " + esc(cell.outcome) : "";
        }).join("; ");
      }
      out += "</li>";
    });
    out += "</ul>";
    box.innerHTML = out;
    document.querySelectorAll("td.sq.on").forEach(function (x) { x.classList.remove("on"); });
    td.classList.add("on");
  }
  document.querySelectorAll("td.sq").forEach(function (td) {
    td.addEventListener("click", function () { show(td); });
  });
})();
