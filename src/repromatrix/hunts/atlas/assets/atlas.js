// Each square opens its answer: the cells that show it, the failing case, the error,
// the registered issue and the repro command (data in #atlas-data, written by report.py).
(function () {
  var data = JSON.parse(document.getElementById("atlas-data").textContent);
  var box = document.getElementById("detail");
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }
  function pins(p) {
    return Object.keys(p).map(function (k) { return k + " " + p[k]; }).join(", ");
  }
  function show(td) {
    var a = data.answers[td.dataset.k];
    var out = "<h2>" + esc(a.title) + ": " + esc(a.status) +
      (a.evidence ? " (" + esc(a.evidence) + ")" : "") + "</h2>";
    if (a.note) out += "<div>" + esc(a.note) + "</div>";
    if (a.case) out += "<div>failing case: <code>" + esc(a.case) + "</code></div>";
    if (a.error) out += "<pre>" + esc(a.error) + "</pre>";
    if (a.link) out += '<div>registered: <a href="' + esc(a.link) + '">' + esc(a.link) + "</a></div>";
    if (a.failures && a.failures.length > 1) {
      out += "<div>every breaking case:</div><ul>";
      a.failures.forEach(function (f) {
        out += "<li><code>" + esc(f[0]) + "</code>: " + esc(f[1]) +
          (f[2] ? ' <a href="' + esc(f[2]) + '">' + esc(f[2]) + "</a>" : "") + "</li>";
      });
      out += "</ul>";
    }
    if (a.cells.length) {
      out += "<div>cells:</div><ul>";
      a.cells.forEach(function (i) {
        var c = data.cells[i];
        out += "<li>" + esc(pins(c.pins)) + ": <b>" + esc(c.outcome) + "</b>" +
          (c.failures.length ? " — " + esc(c.failures.map(function (f) { return f.case; }).join(", ")) : "") +
          (c.repro ? "<br><code>" + esc(c.repro) + "</code>" : "") + "</li>";
      });
      out += "</ul>";
    } else if (a.status === "untested") {
      out += "<div>no cell has tested this pair yet</div>";
    }
    box.innerHTML = out;
    document.querySelectorAll("td.sq.on").forEach(function (x) { x.classList.remove("on"); });
    td.classList.add("on");
  }
  document.querySelectorAll("td.sq").forEach(function (td) {
    td.addEventListener("click", function () { show(td); });
  });
})();
