(function () {
  "use strict";
  // Built for thousands of rows: what the filters read is read from the page once
  // (versions, outcomes), columns are hidden by one stylesheet, and only the rows near
  // the scrolled view are laid out (the others are "off", spacers keep their height):
  // a filter over 2,000 combinations lays out a screenful, not 30,000 cells.
  var data = JSON.parse(document.getElementById("data").textContent);
  var table = document.getElementById("grid");
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var matrixOrder = rows.slice();
  var nPkg = data.packages.length;
  var panel = document.getElementById("detail");
  var panelBody = document.getElementById("detail-body");
  var columnStyle = document.createElement("style");
  document.head.appendChild(columnStyle);
  var FIXED = 2;  // combination, verdict: the version columns follow

  var info = rows.map(function (tr) {
    var cells = Array.prototype.slice.call(tr.querySelectorAll("td.ver"), 0, nPkg);
    return {
      tr: tr,
      r: +tr.dataset.r,
      cells: cells,
      versions: cells.map(function (td) { return td.textContent; }),
      outcomes: Array.prototype.map.call(tr.querySelectorAll("td.c"), function (td) {
        return td.className;
      }).join(" "),
      ran: !!tr.querySelector("td.c:not(.s-missing)"),
      hidden: false
    };
  });
  var byRow = {};
  info.forEach(function (row) { byRow[row.r] = row; });
  var wrap = table.parentNode;  // the scrolling box
  var visible = info.slice();  // the rows the filters keep, in page order
  var windowed = [];  // those laid out now
  var rowHeight = 0;
  var BUFFER = 30;  // rows laid out above and below the view
  function spacer() {
    var tr = document.createElement("tr"), td = document.createElement("td");
    tr.className = "spacer";
    td.colSpan = 999;
    tr.appendChild(td);
    return tr;
  }
  var above = spacer(), below = spacer();
  tbody.insertBefore(above, tbody.firstChild);
  tbody.appendChild(below);

  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }
  function shq(s) {  // shlex.quote
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }
  function str(i) { return typeof i === "number" ? data.strings[i] : (i || ""); }
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
  function markChanges() {
    var previous = null, before = null;
    visible = info.filter(function (row) { return !row.hidden; });
    visible.forEach(function (row) {
      row.changed = row.versions.map(function (v, i) {
        return !data.sweep && previous !== null && previous[i] !== v;
      });
      previous = row.versions;
      var now = row.ran ? row.outcomes : null;
      row.edge = !!data.sweep && before !== null && now !== null && now !== before;
      if (now !== null) before = now;
    });
    document.getElementById("shown").textContent =
      visible.length + " of " + info.length + " combinations shown";
    windowed.forEach(function (row) { row.painted = false; });
    showWindow();
  }
  function paint(row) {  // the marks markChanges worked out, on a row being laid out
    if (row.painted) return;
    row.painted = true;
    for (var i = 0; i < nPkg; i++) {
      if (row.cells[i].classList.contains("chg") !== row.changed[i]) {
        row.cells[i].classList.toggle("chg", row.changed[i]);
      }
    }
    if (row.tr.classList.contains("transition") !== row.edge) {
      row.tr.classList.toggle("transition", row.edge);
    }
  }
  function showWindow() {
    // Geometry first, while only the rows laid out so far are: reading it after the
    // classes below change would lay out every row.
    if (!rowHeight) {
      var first = windowed[0] || visible[0];
      rowHeight = (first && first.tr.getBoundingClientRect().height) || 22;
    }
    var head = table.tHead.offsetHeight;
    var from = Math.max(0, Math.floor((wrap.scrollTop - head) / rowHeight) - BUFFER);
    var to = Math.min(visible.length,
      from + Math.ceil((wrap.clientHeight || window.innerHeight) / rowHeight) + 2 * BUFFER);
    var now = visible.slice(from, to);
    var place = new Map();
    visible.forEach(function (row, i) { place.set(row, i); });
    info.forEach(function (row) {
      var i = place.get(row);
      var off = i !== undefined && (i < from || i >= to);
      if (row.tr.classList.contains("hidden") !== row.hidden) {
        row.tr.classList.toggle("hidden", row.hidden);
      }
      if (row.tr.classList.contains("off") !== off) row.tr.classList.toggle("off", off);
    });
    now.forEach(paint);
    windowed = now;
    above.firstChild.style.height = from * rowHeight + "px";
    below.firstChild.style.height = (visible.length - to) * rowHeight + "px";
    above.hidden = !from;
    below.hidden = to >= visible.length;
  }
  var scheduled = false;
  wrap.addEventListener("scroll", function () {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; showWindow(); });
  });
  window.addEventListener("resize", function () { showWindow(); });

  function applyFilters() {
    var verdict = document.querySelector("select[data-filter=verdict]").value;
    var pkgs = Array.prototype.slice.call(document.querySelectorAll("select[data-filter=pkg]"));
    var problems = document.getElementById("problems").checked;
    info.forEach(function (row) {  // the rows' classes follow in showWindow, in one pass
      var hide = (verdict && row.tr.dataset.verdict !== verdict) ||
        (problems && !row.tr.hasAttribute("data-problem"));
      pkgs.forEach(function (sel) {
        if (sel.value && row.versions[+sel.dataset.col] !== sel.value) hide = true;
      });
      row.hidden = !!hide;
    });
    var text = document.getElementById("casefilter").value.toLowerCase();
    var hidden = {}, rules = [];
    data.cases.forEach(function (id, i) {
      var head = table.querySelector("th.case[data-case='" + i + "']");
      var hide = (text && id.toLowerCase().indexOf(text) < 0) ||
        (problems && head && head.hasAttribute("data-quiet"));
      hidden[i] = !!hide;
      if (head) head.classList.toggle("colhidden", !!hide);
      if (hide) rules.push("#grid td[data-c='" + i + "']");
    });
    // In the problems view a version column that no shown row installs says nothing.
    var empty = [];
    if (problems) {
      for (var c = 0; c < nPkg; c++) {
        var used = info.some(function (row) { return !row.hidden && row.versions[c] !== "-"; });
        if (!used) empty.push(c);
      }
    }
    empty.forEach(function (c) {
      rules.push("#grid tbody tr>:nth-child(" + (FIXED + c + 1) + ")");
      rules.push("#grid thead tr.files>:nth-child(" + (FIXED + c + 1) + ")");
    });
    columnStyle.textContent = rules.length ? rules.join(",") + "{display:none}" : "";
    table.dataset.emptyColumns = empty.map(function (c) { return data.packages[c]; }).join(" ");
    // A file's header spans its visible cases, and goes when none is left.
    table.querySelectorAll("th.file").forEach(function (th) {
      var visible = th.dataset.cases.split(",").filter(function (i) { return !hidden[i]; });
      th.colSpan = Math.max(visible.length, 1);
      th.classList.toggle("colhidden", visible.length === 0);
    });
    markChanges();
  }

  function place(order) {
    info = order;
    var fragment = document.createDocumentFragment();
    fragment.appendChild(above);
    info.forEach(function (row) { fragment.appendChild(row.tr); });
    fragment.appendChild(below);
    tbody.appendChild(fragment);
  }
  function sortBy(col) {
    var order = [col];
    for (var i = 0; i < nPkg; i++) if (i !== col) order.push(i);
    place(info.slice().sort(function (a, b) {
      for (var k = 0; k < order.length; k++) {
        var c = cmpVersion(a.versions[order[k]], b.versions[order[k]]);
        if (c) return c;
      }
      return a.r - b.r;
    }));
    table.querySelectorAll("th.pkg").forEach(function (th) {
      th.classList.toggle("sorted", +th.dataset.col === col);
    });
    markChanges();
  }
  // What needs attention first: by verdict (REGRESSED, FAILING, LOST, ...), then in
  // matrix order.
  function byAttention() {
    place(info.slice().sort(function (a, b) {
      var ra = data.rank[a.tr.dataset.verdict], rb = data.rank[b.tr.dataset.verdict];
      return (ra === undefined ? 99 : ra) - (rb === undefined ? 99 : rb) || a.r - b.r;
    }));
  }
  function inMatrixOrder() {
    place(matrixOrder.map(function (tr) { return byRow[+tr.dataset.r]; }));
    table.querySelectorAll("th.pkg.sorted").forEach(function (th) { th.classList.remove("sorted"); });
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
    var found = info.filter(function (row) { return data.combinations[row.r].id === id; })[0];
    return found && found.tr;
  }
  function cellOf(td) {
    return data.cells[td.parentNode.dataset.r + ":" + td.dataset.c];
  }
  function statusOf(td) {
    return (/\bs-([a-z-]+)/.exec(td.className) || ["", ""])[1];
  }

  function showCell(td) {
    var r = +td.parentNode.dataset.r, c = +td.dataset.c;
    var combo = data.combinations[r], caseId = data.cases[c];
    var cell = cellOf(td);
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
    var message = str(cell.message), traceback = str(cell.traceback);
    if (message) html += "<pre>" + esc(message) + "</pre>";
    if (traceback) html += "<details open><summary>traceback (end)</summary><pre>" +
      esc(traceback) + "</pre></details>";
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

  // A cell's hover text, made when the pointer first reaches it.
  table.addEventListener("mouseover", function (event) {
    var td = event.target.closest("td.c");
    if (!td || td.title) return;
    var cell = cellOf(td), line = "";
    if (cell) {
      line = (str(cell.message).split("\n").filter(function (l) { return l.trim(); })[0] || "").trim();
      if (line.length > 240) line = line.slice(0, 239) + "…";
    }
    td.title = data.cases[+td.dataset.c] + "\n" + statusOf(td) + (line ? ": " + line : "");
  });
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
  document.getElementById("problems").addEventListener("change", function () {
    if (this.checked) byAttention(); else inMatrixOrder();
    applyFilters();
  });

  // Links into the report: index.html#ROW:COL opens a cell's details;
  // #verdict=V&PACKAGE=VERSION&problems=1&case=TEXT&sort=PACKAGE sets the controls
  // (problems=1: only the rows and case columns that are not all passing, what needs
  // attention first); #all is the full grid. Without a fragment the page opens on the
  // problems when a verdict needs attention, one click (#all) from the full grid.
  function fromHash() {
    var hash = decodeURIComponent(location.hash.slice(1));
    var cell = /^(\d+):(\d+)$/.exec(hash);
    if (cell) {
      var row = byRow[+cell[1]];
      var td = row && row.tr.querySelector("td.c[data-c='" + cell[2] + "']");
      if (td) {
        var at = visible.indexOf(row);
        if (at >= 0) {
          wrap.scrollTop = table.tHead.offsetHeight + at * rowHeight - wrap.clientHeight / 3;
          showWindow();
        }
        showCell(td);
      }
      return;
    }
    var problems = document.getElementById("problems");
    document.querySelector("select[data-filter=verdict]").value = "";
    document.querySelectorAll("select[data-filter=pkg]").forEach(function (s) { s.value = ""; });
    document.getElementById("casefilter").value = "";
    problems.checked = !hash && data.attention;
    var sort = null;
    hash.split("&").forEach(function (pair) {
      var at = pair.indexOf("="), key = pair.slice(0, at), value = pair.slice(at + 1);
      if (at < 0) return;
      if (key === "verdict") document.querySelector("select[data-filter=verdict]").value = value;
      else if (key === "problems") problems.checked = value === "1";
      else if (key === "case") document.getElementById("casefilter").value = value;
      else if (key === "sort") sort = data.packages.indexOf(value);
      else {
        var column = data.packages.indexOf(key);
        var select = document.querySelector("select[data-filter=pkg][data-col='" + column + "']");
        if (select) select.value = value;
      }
    });
    if (problems.checked) byAttention(); else inMatrixOrder();
    document.getElementById("attention").hidden = !problems.checked;
    if (sort !== null && sort >= 0) sortBy(sort);
    applyFilters();
  }
  window.addEventListener("hashchange", fromHash);
  markChanges();
  fromHash();
  document.body.dataset.ready = "1";
})();
