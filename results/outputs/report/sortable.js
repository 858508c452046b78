// srtui report: click a column heading to sort its table (numbers as numbers, again to reverse).
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var numeric = th.dataset.numeric === "1";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.key, y = b.cells[col].dataset.key;
        if (numeric) {
          x = x === "" ? Infinity : parseFloat(x);
          y = y === "" ? Infinity : parseFloat(y);
          return up ? x - y : y - x;
        }
        return up ? x.localeCompare(y) : y.localeCompare(x);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
