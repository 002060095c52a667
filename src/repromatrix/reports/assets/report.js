(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var table = document.getElementById("grid");
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var nPkg = data.packages.length;
  var panel = document.getElementById("detail");
  var panelBody = document.getElementById("detail-body");

  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }
  function shq(s) {  // shlex.quote
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }
  function versionCells(tr) {
    return Array.prototype.slice.call(tr.querySelectorAll("td.ver"), 0, nPkg);
  }
  function cmpVersion(a, b) {  // PEP 440 enough for sorting: numbers as numbers
    var pa = a.split(/[^0-9A-Za-z]+/), pb = b.split(/[^0-9A-Za-z]+/);
    for (var i = 0; i < Math.max(pa.length, pb.length); i++) {
      var x = pa[i] || "", y = pb[i] || "";
      var nx = /^\d+$/.test(x), ny = /^\d+$/.test(y);
      if (nx && ny && +x !== +y) return +x - +y;
      if (nx !== ny) return nx ? 1 : -1;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  }

  // Versions that differ from the previous visible row stand out: where a colour
  // changes between two rows, the highlighted version is what moved. In a sweep-like
  // tier (one package moves, every row changes it) the rows where an outcome changes
  // are marked instead: those are the transitions.
  function outcomes(tr) {
    return Array.prototype.map.call(tr.querySelectorAll("td.c"), function (td) {
      return (/s-[a-z-]+/.exec(td.className) || [""])[0];
    }).join(" ");
  }
  function markChanges() {
    var previous = null, before = null, shown = 0;
    rows.forEach(function (tr) {
      if (tr.classList.contains("hidden")) return;
      shown++;
      var cells = versionCells(tr);
      cells.forEach(function (td, i) {
        var changed = !data.sweep && previous !== null && previous[i] !== td.textContent;
        td.classList.toggle("chg", changed);
      });
      previous = cells.map(function (td) { return td.textContent; });
      var now = tr.querySelector("td.c:not(.s-missing)") ? outcomes(tr) : null;
      tr.classList.toggle("transition", !!data.sweep && before !== null && now !== null &&
        now !== before);
      if (now !== null) before = now;
    });
    document.getElementById("shown").textContent =
      shown + " of " + rows.length + " combinations shown";
  }

  function applyFilters() {
    var verdict = document.querySelector("select[data-filter=verdict]").value;
    var pkgs = Array.prototype.slice.call(document.querySelectorAll("select[data-filter=pkg]"));
    var problems = document.getElementById("problems").checked;
    rows.forEach(function (tr) {
      var hide = (verdict && tr.dataset.verdict !== verdict) ||
        (problems && !tr.hasAttribute("data-problem"));
      var cells = versionCells(tr);
      pkgs.forEach(function (sel) {
        if (sel.value && cells[+sel.dataset.col].textContent !== sel.value) hide = true;
      });
      tr.classList.toggle("hidden", !!hide);
    });
    var text = document.getElementById("casefilter").value.toLowerCase();
    var hidden = {};
    data.cases.forEach(function (id, i) {
      var head = table.querySelector("th.case[data-case='" + i + "']");
      var hide = (text && id.toLowerCase().indexOf(text) < 0) ||
        (problems && head && head.hasAttribute("data-quiet"));
      hidden[i] = !!hide;
      table.querySelectorAll("[data-case='" + i + "'],td[data-c='" + i + "']").forEach(
        function (el) { el.classList.toggle("colhidden", !!hide); });
    });
    // A file's header spans its visible cases, and goes when none is left.
    table.querySelectorAll("th.file").forEach(function (th) {
      var visible = th.dataset.cases.split(",").filter(function (i) { return !hidden[i]; });
      th.colSpan = Math.max(visible.length, 1);
      th.classList.toggle("colhidden", visible.length === 0);
    });
    markChanges();
  }

  function sortBy(col) {
    var order = [col];
    for (var i = 0; i < nPkg; i++) if (i !== col) order.push(i);
    rows.sort(function (a, b) {
      var va = versionCells(a), vb = versionCells(b);
      for (var k = 0; k < order.length; k++) {
        var c = cmpVersion(va[order[k]].textContent, vb[order[k]].textContent);
        if (c) return c;
      }
      return +a.dataset.r - +b.dataset.r;
    });
    rows.forEach(function (tr) { tbody.appendChild(tr); });
    table.querySelectorAll("th.pkg").forEach(function (th) {
      th.classList.toggle("sorted", +th.dataset.col === col);
    });
    markChanges();
  }

  function show(html) {
    panelBody.innerHTML = html;
    panel.hidden = false;
  }
  function clearMarks() {
    table.querySelectorAll(".selected").forEach(function (el) { el.classList.remove("selected"); });
    table.querySelectorAll("tr.neighbour").forEach(function (el) { el.classList.remove("neighbour"); });
  }
  function rowOf(id) {
    return rows.filter(function (tr) { return data.combinations[+tr.dataset.r].id === id; })[0];
  }

  function showCell(td) {
    var r = +td.parentNode.dataset.r, c = +td.dataset.c;
    var combo = data.combinations[r], caseId = data.cases[c];
    var cell = data.cells[r + ":" + c];
    clearMarks();
    td.classList.add("selected");
    var html = "<h2>" + esc(combo.id) + " · <code>" + esc(caseId) + "</code></h2>";
    if (!cell) {
      var found = td.classList.contains("s-missing") ? "not run in this combination" : "passed";
      show(html + "<p>" + found + "</p><p>repro: <code class=cmd>" +
        esc(combo.repro + " -- " + shq(caseId)) + "</code></p>");
      return;
    }
    html += "<p><b>" + esc(cell.regressed ? "REGRESSED (" + cell.status + ")" : cell.status) +
      "</b>" + (cell.error_type ? " <code>" + esc(cell.error_type) + "</code>" : "") +
      (cell.attempts.length > 1 ? " · attempts: " + esc(cell.attempts.join(", ")) : "") + "</p>";
    if (cell.known_issue) {
      html += "<p>known issue: <a href='" + esc(cell.known_issue.link) + "'>" +
        esc(cell.known_issue.link) + "</a> " + esc(cell.known_issue.note) + "</p>";
    }
    if (cell.change) html += "<p>against the baseline run: " + esc(cell.change) + "</p>";
    cell.transitions.forEach(function (t) {
      html += "<p>" + esc(t.text) + " (passes in " + esc(t.good) + ")" +
        (t.bisect ? "<br><code class=cmd>" + esc(t.bisect) + "</code>" : "") + "</p>";
      var other = rowOf(t.good);
      if (other) other.classList.add("neighbour");
    });
    if (cell.message) html += "<pre>" + esc(cell.message) + "</pre>";
    if (cell.traceback) html += "<details open><summary>traceback (end)</summary><pre>" +
      esc(cell.traceback) + "</pre></details>";
    html += "<p>repro: <code class=cmd>" + esc(cell.repro) + "</code></p>";
    show(html);
  }

  function showCombination(th) {
    var combo = data.combinations[+th.parentNode.dataset.r];
    clearMarks();
    var resolved = Object.keys(combo.resolved).map(function (k) {
      return esc(k) + " " + esc(combo.resolved[k]);
    }).join(", ");
    var requested = Object.keys(combo.requested).map(function (k) {
      return esc(k) + " " + esc(combo.requested[k]);
    }).join(", ");
    show("<h2>" + esc(combo.id) + " · " + esc(combo.verdict) + "</h2><p>" + esc(combo.reason) +
      "</p>" + (combo.message ? "<pre>" + esc(combo.message) + "</pre>" : "") +
      "<p>requested: " + requested + "</p><p>resolved" +
      (combo.python ? " (python " + esc(combo.python) + ")" : "") + ": " +
      (resolved || "nothing (not built)") + "</p><p>repro: <code class=cmd>" +
      esc(combo.repro) + "</code></p>");
  }

  table.addEventListener("click", function (event) {
    var td = event.target.closest("td.c");
    if (td) return showCell(td);
    var th = event.target.closest("tbody th.cid");
    if (th) return showCombination(th);
    var head = event.target.closest("th.pkg[data-col]");
    if (head) return sortBy(+head.dataset.col);
  });
  document.getElementById("close").addEventListener("click", function () {
    panel.hidden = true;
    clearMarks();
  });
  document.querySelectorAll(".controls select, .controls input").forEach(function (el) {
    el.addEventListener("input", applyFilters);
    el.addEventListener("change", applyFilters);
  });
  // Links into the report: index.html#ROW:COL opens a cell's details;
  // #verdict=V&PACKAGE=VERSION&problems=1&case=TEXT&sort=PACKAGE sets the controls
  // (problems=1: only the rows and case columns that are not all passing).
  function fromHash() {
    var hash = decodeURIComponent(location.hash.slice(1));
    var cell = /^(\d+):(\d+)$/.exec(hash);
    if (cell) {
      var tr = rows.filter(function (r) { return r.dataset.r === cell[1]; })[0];
      var td = tr && tr.querySelector("td.c[data-c='" + cell[2] + "']");
      if (td) showCell(td);
      return;
    }
    var sort = null;
    hash.split("&").forEach(function (pair) {
      var at = pair.indexOf("="), key = pair.slice(0, at), value = pair.slice(at + 1);
      if (at < 0) return;
      if (key === "verdict") document.querySelector("select[data-filter=verdict]").value = value;
      else if (key === "problems") document.getElementById("problems").checked = value === "1";
      else if (key === "case") document.getElementById("casefilter").value = value;
      else if (key === "sort") sort = data.packages.indexOf(value);
      else {
        var column = data.packages.indexOf(key);
        var select = document.querySelector("select[data-filter=pkg][data-col='" + column + "']");
        if (select) select.value = value;
      }
    });
    if (sort !== null && sort >= 0) sortBy(sort);
    applyFilters();
  }
  markChanges();
  fromHash();
  document.body.dataset.ready = "1";
})();
