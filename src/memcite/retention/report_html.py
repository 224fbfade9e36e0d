"""``memcite report``'s page: a ``StatsReport`` (as ``to_dict`` gives it, ``stats --json``'s data)
and the report's extras (``memcite.retention.report_data``) as one self-contained HTML page.

Pure: data in, a string out; nothing is read or written here. The page has no external
resource of any kind: its style and its one small script are inline, allowed by a
Content-Security-Policy that names their SHA-256 (``default-src 'none'``: no request can
leave the page), and its charts are inline SVG drawn here. It reads whole with JavaScript
off; the script only adds sorting and filtering, and honours a fragment such as
``#sort=dead:-days&filter=dead:jenkins`` (a shareable sorted or filtered view).

Everything that comes from the data (labels, paths, titles, notes' names) is escaped with
``html.escape`` as it is written, through ``_Page``; markup itself is only ever constant
text of this module. Free text is masked as the ledger masks what it stores
(``memcite.secrets.mask_secrets``). Every number and date of the page is written through
``_Page.number`` or ``_Page.time``, which name the key of the data it shows (``data-key``):
``stats.totals.dead``-style paths into ``stats --json`` (without the ``stats.``),
``report.…`` into the extras, and ``A - len(B)`` for "and N more", so that a test can check
each one against the JSON it came from.
"""

from __future__ import annotations

import binascii
import hashlib
import re
from html import escape

from memcite.retention.checks import CHECK_OUTCOMES, OUTCOME_MEANING
from memcite.times import iso_utc as _iso
from memcite.times import utc_day as _day

ROWS = 100  # rows per table (stats' --limit for the report): the rest are counted
WEEKS_DRAWN = 156  # weeks in the chart without --since (three years)

_GOOD = {"ok"}
_WARN = {"moved", "unverified"}

STYLE = """
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;
--soft:#f6f8fa;--accent:#0969da;--alive:#1a7f37;--dead:#cf222e;--asked:#8250df;--warn:#9a6700;
--bar:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--soft:#151b23;--accent:#4493f8;--alive:#3fb950;--dead:#f85149;--asked:#ab7df8;
--warn:#d29922;--bar:#4493f8}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg)}
body{margin:0 auto;max-width:76rem;padding:1rem 1.25rem 3rem;font:15px/1.5 system-ui,
-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;background:var(--bg);color:var(--fg)}
h1{font-size:1.6rem;margin:.5rem 0 .25rem}
h2{font-size:1.25rem;margin:2.2rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
a{color:var(--accent)}
p,dl{margin:.4rem 0}
code,.id{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.id{white-space:nowrap}
.muted,figcaption,caption{color:var(--muted)}
header p{margin:.15rem 0}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem 1rem;list-style:none;padding:0;margin:.8rem 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(9.5rem,1fr));gap:.6rem;
margin:.8rem 0;padding:0;list-style:none}
.cards li{border:1px solid var(--line);border-radius:.5rem;padding:.55rem .75rem;
background:var(--soft)}
.cards .n{display:block;font-size:1.55rem;font-weight:600;line-height:1.2}
.cards .dead .n{color:var(--dead)}
.cards .alive .n{color:var(--alive)}
.cards .asked .n{color:var(--asked)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto;margin:.5rem 0}
table{border-collapse:collapse;width:100%;font-size:.92rem}
caption{text-align:left;padding:.2rem 0 .45rem;caption-side:top}
th,td{padding:.32rem .6rem;border-bottom:1px solid var(--line);text-align:left;
vertical-align:top}
thead th{background:var(--soft);white-space:nowrap;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.t{overflow-wrap:anywhere;min-width:8rem}
td time,td a,td .tag{white-space:nowrap}
tr.hidden{display:none}
th button{font:inherit;color:inherit;background:none;border:0;padding:0;margin:0;
cursor:pointer;text-align:inherit;text-decoration:underline dotted}
th button:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
th[aria-sort=ascending] button::after{content:" \\2191"}
th[aria-sort=descending] button::after{content:" \\2193"}
.controls{margin:.45rem 0 0;display:flex;gap:.6rem;align-items:center;flex-wrap:wrap}
.controls input{font:inherit;padding:.25rem .5rem;border:1px solid var(--line);
border-radius:.35rem;background:var(--bg);color:var(--fg);min-width:14rem}
figure{margin:.6rem 0 1rem}
figure .scroll{border:1px solid var(--line);border-radius:.5rem;padding:.6rem .8rem;
background:var(--soft)}
svg{display:block;width:100%;max-width:60rem;overflow:visible;
font:13px system-ui,sans-serif}
svg text{fill:var(--fg)}
svg .axis{stroke:var(--line);stroke-width:1}
svg .tick{fill:var(--muted)}
svg .bar{fill:var(--bar)}
svg .alive{fill:var(--alive)}
svg .dead{fill:var(--dead)}
svg .asked{fill:var(--asked)}
svg .good{fill:var(--alive)}
svg .warn{fill:var(--warn)}
svg .bad{fill:var(--dead)}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;list-style:none;padding:0;margin:.3rem 0}
.sw{display:inline-block;width:.8rem;height:.8rem;border-radius:.15rem;margin-right:.35rem;
vertical-align:-.05rem}
.sw.alive{background:var(--alive)}
.sw.dead{background:var(--dead)}
.sw.asked{background:var(--asked)}
.sw.good{background:var(--alive)}
.sw.warn{background:var(--warn)}
.sw.bad{background:var(--dead)}
.tag{display:inline-block;font-size:.78rem;padding:0 .4rem;border-radius:.7rem;
border:1px solid var(--line);white-space:nowrap}
.tag.dead,.tag.bad{color:var(--dead)}
.tag.asked{color:var(--asked)}
.tag.warn{color:var(--warn)}
.tag.good{color:var(--alive)}
details summary{cursor:pointer;color:var(--accent)}
footer{margin-top:3rem;color:var(--muted);font-size:.85rem}
@media (max-width:40rem){body{padding:.6rem .7rem 2rem;font-size:14px}
th,td{padding:.3rem .4rem}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.3rem}
.cards{grid-template-columns:repeat(2,1fr)}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--soft:#fff;--accent:#000;
--alive:#1a7f37;--dead:#b3121f;--asked:#6a32c9;--warn:#7a5200;--bar:#0b5cad}
html,body{background:#fff;color:#000}body{max-width:none;padding:0;font-size:10.5pt}
nav,.controls{display:none}.scroll{overflow:visible}
h2{break-after:avoid}figure,tr{break-inside:avoid}thead{display:table-header-group}
tr.hidden{display:table-row}a{color:inherit;text-decoration:none}}
"""

SCRIPT = """
(function () {
  "use strict";
  var tables = {};
  Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), setUp);

  function setUp(table) {
    var name = table.getAttribute("data-sortable");
    tables[name] = table;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row, index) {
      row.setAttribute("data-order", String(index));
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (head) {
      var column = head.getAttribute("data-column");
      if (!column) { return; }
      var button = document.createElement("button");
      button.type = "button";
      while (head.firstChild) { button.appendChild(head.firstChild); }
      head.appendChild(button);
      head.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var descending = head.getAttribute("aria-sort") === "ascending";
        sortBy(table, column, descending);
        share();
      });
    });
    if (table.hasAttribute("data-filter")) { addFilter(table, name); }
  }

  function addFilter(table, name) {
    var box = document.createElement("div");
    box.className = "controls";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter";
    input.setAttribute("aria-label", table.getAttribute("data-filter"));
    input.setAttribute("data-filter-for", name);
    var shown = document.createElement("span");
    shown.className = "muted";
    shown.setAttribute("aria-live", "polite");
    box.appendChild(input);
    box.appendChild(shown);
    table.caption.appendChild(box);
    table.filterInput = input;
    table.filterShown = shown;
    input.addEventListener("input", function () { filter(table, input.value); share(); });
  }

  function value(row, index, numeric) {
    var cell = row.cells[index];
    var text = cell.getAttribute("data-sort");
    if (text === null) { text = cell.textContent.trim(); }
    if (!numeric) { return text.toLowerCase(); }
    return text === "" ? -Infinity : Number(text);
  }

  function sortBy(table, column, descending) {
    var heads = table.tHead.rows[0].cells;
    var index = -1;
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute("data-column") === column) { index = i; }
    }
    if (index < 0) { return; }
    var numeric = heads[index].getAttribute("data-type") === "number";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, index, numeric), y = value(b, index, numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      if (descending) { order = -order; }
      return order || Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order"));
    });
    rows.forEach(function (row) { body.appendChild(row); });
    for (var j = 0; j < heads.length; j++) {
      if (heads[j].hasAttribute("aria-sort")) {
        heads[j].setAttribute("aria-sort", j === index ? (descending ? "descending" : "ascending")
                                                      : "none");
      }
    }
    table.setAttribute("data-sorted", (descending ? "-" : "") + column);
  }

  function filter(table, text) {
    var words = text.toLowerCase().split(/\\s+/).filter(Boolean);
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var seen = rows[i].textContent.toLowerCase();
      var keep = words.every(function (word) { return seen.indexOf(word) >= 0; });
      rows[i].classList.toggle("hidden", !keep);
      if (keep) { shown++; }
    }
    table.setAttribute("data-shown", String(shown));
    if (table.filterShown) {
      table.filterShown.textContent = words.length ? shown + " of " + rows.length + " rows" : "";
    }
  }

  function share() {
    var parts = [];
    Object.keys(tables).forEach(function (name) {
      var table = tables[name];
      if (table.getAttribute("data-sorted")) {
        parts.push("sort=" + name + ":" + table.getAttribute("data-sorted"));
      }
      if (table.filterInput && table.filterInput.value) {
        parts.push("filter=" + name + ":" + encodeURIComponent(table.filterInput.value));
      }
    });
    try { history.replaceState(null, "", parts.length ? "#" + parts.join("&") : " "); }
    catch (error) { /* a page opened from a file may refuse: the view still changed */ }
  }

  function fromFragment() {
    var fragment = location.hash.replace(/^#/, "");
    if (!/^(sort|filter)=/.test(fragment)) { return; }
    fragment.split("&").forEach(function (part) {
      var match = /^(sort|filter)=([a-z_]+):(.*)$/.exec(part);
      if (!match || !tables[match[2]]) { return; }
      var table = tables[match[2]];
      if (match[1] === "sort") {
        var descending = match[3].charAt(0) === "-";
        sortBy(table, match[3].replace(/^-/, ""), descending);
      } else {
        var text = "";
        try { text = decodeURIComponent(match[3]); } catch (error) { text = match[3]; }
        if (table.filterInput) { table.filterInput.value = text; }
        filter(table, text);
      }
    });
  }

  fromFragment();
  window.addEventListener("hashchange", fromFragment);
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (details) {
      details.open = true;
    });
  });
})();
"""


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "'sha256-" + binascii.b2a_base64(digest, newline=False).decode() + "'"


# Nothing may load: no script, style, image, font, frame or connection but the inline style and
# script above (named by their hash), and the empty icon (a data: URL, which keeps the browser
# from asking for /favicon.ico).
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_sha256(STYLE)}; script-src {_sha256(SCRIPT)}; "
    "img-src data:; base-uri 'none'; form-action 'none'")

_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*\Z")
_CHECKED_NAMES: set[str] = set()  # tag and attribute names seen to be plain names


def _check_name(name: str) -> None:
    """A tag's or an attribute's name is this module's constant, a plain name: never data."""
    if not _NAME.match(name):
        raise ValueError(f"not a tag or attribute name: {name!r}")
    _CHECKED_NAMES.add(name)


def _escaped(value: object) -> str:
    """``value`` as HTML text or an attribute's value (quotes escaped too)."""
    if type(value) is int or type(value) is float:
        return str(value)
    return escape(str(value), quote=True)


def _mask(text: str) -> str:
    from memcite.display import shown

    return shown(text)


_URL_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~")


def file_url(path: str) -> str | None:
    """``path`` (absolute) as a ``file://`` URL, every byte that is not plain percent-encoded;
    None for a path that names no file (relative, masked, a NUL)."""
    if not path.startswith("/") or "\x00" in path or "[REDACTED:" in path:
        return None
    try:
        data = path.encode("utf-8", "surrogateescape")
    except UnicodeError:
        return None
    return "file://" + "".join(chr(byte) if byte in _URL_SAFE else f"%{byte:02X}"
                               for byte in data)


class _Page:
    """The page as it is written: tags from this module, everything else escaped."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def raw(self, markup: str) -> None:
        """Constant markup of this module only (never data)."""
        self.parts.append(markup)

    def text(self, value: object) -> None:
        self.parts.append(_escaped(value))

    def free(self, value: object) -> None:
        """Text from the data that may hold anything (a label, a path): masked, escaped."""
        self.parts.append(escape(_mask(str(value)), quote=True))

    @staticmethod
    def _attributes(attrs: dict | None) -> str:
        if not attrs:
            return ""
        out = []
        for name, value in attrs.items():
            if value is None or value is False:
                continue
            if name not in _CHECKED_NAMES:
                _check_name(name)
            out.append(f" {name}" if value is True else f' {name}="{_escaped(value)}"')
        return "".join(out)

    def open(self, tag: str, attrs: dict | None = None) -> None:
        if tag not in _CHECKED_NAMES:
            _check_name(tag)
        self.parts.append(f"<{tag}{self._attributes(attrs)}>" if attrs else f"<{tag}>")

    def close(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")

    def element(self, tag: str, text: object = "", attrs: dict | None = None, *,
                free: bool = False) -> None:
        self.open(tag, attrs)
        (self.free if free else self.text)(text)
        self.close(tag)

    def number(self, key: str, value: int | float | None, attrs: dict | None = None,
               *, tag: str = "data") -> None:
        """A number of the data, in ``<data value=… data-key=…>`` (``-`` when it is None)."""
        if value is None:
            self.element("span", "-", {"data-key": key, "data-null": True, **(attrs or {})})
            return
        shown = f"{value:,}" if isinstance(value, int) else f"{value:.3f}"
        merged = {"value": value, "data-key": key, **(attrs or {})} if tag == "data" else \
            {"data-key": key, **(attrs or {})}
        self.element(tag, shown, merged)

    def time(self, key: str, value: int | str | None, *, full: bool = False) -> None:
        """A time of the data (epoch seconds, or an ISO 8601 day), shown as its UTC day."""
        if value is None:
            self.element("span", "never" if key.endswith(("last_cited", "last_used")) else "-",
                         {"data-key": key, "data-null": True})
            return
        if isinstance(value, str):
            self.element("time", value, {"datetime": value, "data-key": key})
            return
        iso = _iso(value)
        shown = (iso.replace("T", " ").removesuffix("Z") + " UTC") if full and iso else _day(value)
        self.element("time", shown or str(value), {"datetime": iso, "data-key": key})

    def html(self) -> str:
        return "".join(self.parts)


# --------------------------------------------------------------------------- tables


class _Column:
    """A table column: its header, the name the fragment sorts it by (None: not sortable),
    numeric or not, and how to write a row's cell."""

    __slots__ = ("title", "name", "numeric", "cell", "free")

    def __init__(self, title: str, name: str | None, numeric: bool, cell, *,
                 free: bool = False) -> None:
        self.title = title
        self.name = name
        self.numeric = numeric
        self.cell = cell  # (page, row, index) -> sort value (None or "t": the cell's text)
        self.free = free  # its text is the data's (a label, a reason): class "t"


def _table(page: _Page, caption_writer, columns: list[_Column], rows: list,
           *, sortable: str | None = None, filter_label: str | None = None,
           empty: str = "none") -> None:
    """A table with a caption and a header row; ``sortable``: the name the script and the
    fragment know it by."""
    page.open("div", {"class": "scroll"})
    attrs = {"data-sortable": sortable, "data-filter": filter_label,
             "id": f"table-{sortable}" if sortable else None}
    page.open("table", attrs)
    page.open("caption")
    caption_writer(page)
    page.close("caption")
    page.raw("<thead><tr>")
    for column in columns:
        page.element("th", column.title, {
            "scope": "col", "class": "num" if column.numeric else None,
            "data-column": column.name if sortable else None,
            "data-type": ("number" if column.numeric else "text") if sortable and column.name
            else None})
    page.raw("</tr></thead><tbody>")
    if not rows:
        page.raw("<tr>")
        page.element("td", empty, {"colspan": len(columns), "class": "muted"})
        page.raw("</tr>")
    for index, row in enumerate(rows):
        page.raw("<tr>")
        for column in columns:
            mark = len(page.parts)
            page.parts.append("")  # the cell's opening tag, once its sort value is known
            sort = column.cell(page, row, index)
            classes = "num" if column.numeric else ("t" if column.free or sort == "t" else None)
            attrs = {"class": classes}
            if sortable and column.name and sort not in (None, "t"):
                attrs["data-sort"] = sort
            page.parts[mark] = f"<td{page._attributes(attrs)}>"
            page.raw("</td>")
        page.raw("</tr>")
    page.raw("</tbody></table></div>")


def _caption(*pieces):
    """A caption writer: ``str`` pieces are constant text, ``(key, value)`` numbers."""

    def write(page: _Page) -> None:
        for piece in pieces:
            if isinstance(piece, tuple):
                page.number(*piece)
            else:
                page.text(piece)

    return write


def _more(page: _Page, stats: dict, total_key: str, list_key: str, what: str) -> None:
    """"; N more not listed", when the list was cut."""
    total, listed = _get(stats, total_key), len(_get(stats, list_key) or ())
    if total is not None and total > listed:
        page.text("; ")
        page.number(f"{total_key} - len({list_key})", total - listed)
        page.text(f" more {what} not listed")


def _get(data: dict, key: str):
    value = data
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value.get(part)
        if value is None:
            return None
    return value


# --------------------------------------------------------------------------- charts


def _svg_open(page: _Page, name: str, height: int, title: str, desc: str) -> None:
    """An SVG as wide as its box and ``height`` pixels high: its shapes are placed in percent
    of the width, its text in pixels, so that it reads the same on a phone and a desktop."""
    page.open("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": "100%",
                      "height": height, "role": "img",
                      "aria-labelledby": f"{name}-title {name}-desc", "data-chart": name})
    page.element("title", title, {"id": f"{name}-title"})
    page.element("desc", desc, {"id": f"{name}-desc"})


def _nice_top(peak: int) -> int:
    """A round number at least ``peak`` for the top of an axis."""
    if peak <= 5:
        return max(peak, 1)
    magnitude = 10 ** (len(str(peak)) - 1)
    for step in (1, 2, 2.5, 5, 10):
        top = int(step * magnitude)
        if top >= peak:
            return top
    return peak


def _pct(value: float) -> str:
    return f"{value:.3f}%"


def _weeks_chart(page: _Page, weeks: list[dict], first: int) -> None:
    """Citations per week as vertical bars (``weeks[first:]`` of the data), each grid line's
    value written above it at the left."""
    shown = weeks[first:]
    height, top, bottom = 220, 18, 26
    plot_h = height - top - bottom
    peak = max((week["citations"] for week in shown), default=0)
    axis_top = _nice_top(peak)
    _svg_open(page, "weeks", height, "Citations per week",
              "Bar chart of the counted citations of each week, oldest on the left; the table "
              "below lists every week drawn.")
    for fraction in (0, 0.5, 1):
        y = top + plot_h * (1 - fraction)
        page.raw(f'<line class="axis" x1="0" x2="100%" y1="{y:.1f}" y2="{y:.1f}"/>')
        page.element("text", f"{round(axis_top * fraction):,}", {
            "class": "tick", "data-tick": True, "x": 0, "y": f"{y - 3:.1f}"})
    step = 100 / max(len(shown), 1)
    bar = step * 0.78
    for offset, week in enumerate(shown):
        value = week["citations"]
        if not value:
            continue
        h = plot_h * value / axis_top
        x = offset * step + (step - bar) / 2
        page.raw(f'<rect class="bar" x="{_pct(x)}" y="{top + plot_h - h:.1f}" width="{_pct(bar)}"'
                 f' height="{h:.1f}"/>')
    labels = sorted({0, len(shown) // 2, len(shown) - 1}) if shown else []
    for offset in labels:
        x = offset * step + step / 2
        anchor = "start" if offset == 0 and len(shown) > 2 else \
            "end" if offset == len(shown) - 1 and len(shown) > 2 else "middle"
        if anchor == "start":
            x = offset * step
        elif anchor == "end":
            x = (offset + 1) * step
        page.open("text", {"class": "tick", "x": _pct(x), "y": height - 8,
                           "text-anchor": anchor})
        key = f"weeks.{first + offset}.week_start"
        page.element("tspan", shown[offset]["week_start"], {"data-key": key})
        page.close("text")
    page.close("svg")


def _hbars(page: _Page, name: str, title: str, desc: str, rows: list[dict]) -> None:
    """Horizontal bars, one row each, its label above it: ``label`` (a writer), ``parts``
    ([(class, value)], stacked), ``value`` (a writer of the numbers after the bar)."""
    row_h = 36
    height = row_h * len(rows) + 4
    peak = max((sum(v for _c, v in row["parts"]) for row in rows), default=0) or 1
    room = 86  # percent of the width for the longest bar: the numbers follow it
    _svg_open(page, name, height, title, desc)
    for index, row in enumerate(rows):
        y = index * row_h
        page.open("text", {"x": 0, "y": y + 13})
        row["label"](page)
        page.close("text")
        x = 0.0
        for css, value in row["parts"]:
            w = room * value / peak
            if value:
                page.raw(f'<rect class="{css}" x="{_pct(x)}" y="{y + 18}" width="{_pct(w)}"'
                         f' height="13" rx="2"/>')
            x += w
        page.open("text", {"x": _pct(x), "dx": 6 if x else 0, "y": y + 29})
        row["value"](page)
        page.close("text")
    page.close("svg")


def _legend(page: _Page, items: list[tuple[str, str]]) -> None:
    page.open("ul", {"class": "legend"})
    for css, text in items:
        page.raw("<li>")
        page.element("span", "", {"class": f"sw {css}", "aria-hidden": "true"})
        page.text(text)
        page.raw("</li>")
    page.close("ul")


# --------------------------------------------------------------------------- sections


def _section(page: _Page, anchor: str, title: str) -> None:
    page.open("section", {"id": anchor, "aria-labelledby": f"{anchor}-h"})
    page.element("h2", title, {"id": f"{anchor}-h"})


def _header(page: _Page, stats: dict, options: dict) -> None:
    page.raw("<header>")
    page.element("h1", "memcite report")
    page.open("p")
    fleet = stats.get("fleet")
    if fleet is not None:
        machines = fleet["machines"]
        page.text(f"Memory use across {len(machines)} machine{'s' * (len(machines) != 1)} of "
                  "the fleet")
        for key in ("machine", "project"):
            if fleet.get(key):
                page.text(f" ({key} ")
                page.element("code", fleet[key], free=True)
                page.text(")")
    else:
        page.text("Memory use of the Codex home ")
        page.element("code", stats.get("codex_home") or "-", free=True)
    page.text(", as of ")
    page.time("as_of", stats["as_of"], full=True)
    page.text(". Dead: unused for more than ")
    page.number("max_unused_days", stats["max_unused_days"])
    page.text(f" days (rule {stats['rule']}).")
    page.close("p")
    if stats.get("since") is not None:
        page.open("p", {"class": "muted"})
        page.text("Citations and their checks: replies made since ")
        page.time("since", stats["since"], full=True)
        page.text(" only.")
        page.close("p")
    page.raw("</header><nav aria-label=\"Sections\"><ul>")
    for anchor, title in options["sections"]:
        page.raw("<li>")
        page.element("a", title, {"href": f"#{anchor}"})
        page.raw("</li>")
    page.raw("</ul></nav>")


def _summary(page: _Page, stats: dict, extras: dict) -> None:
    t = stats["totals"]
    _section(page, "summary", "Summary")
    cards = [("memories", "memories", None), ("totals.cited", "cited", "alive"),
             ("totals.dead", "dead", "dead"), ("totals.asked_to_forget", "asked to forget",
                                               "asked"),
             ("totals.citations", "citations", None), ("totals.replies", "replies", None)]
    page.open("ul", {"class": "cards"})
    for key, label, css in cards:
        page.open("li", {"class": css})
        page.number(key, _get(stats, key), {"class": "n"})
        page.text(label)
        page.close("li")
    page.close("ul")
    page.open("dl", {"class": "facts"})

    def fact(term: str, write) -> None:
        page.element("dt", term)
        page.open("dd")
        write()
        page.close("dd")

    store = stats.get("store")
    if store:
        def store_fact() -> None:
            page.element("code", store["store"])
            page.text(" (")
            page.free(store["store_from"])
            page.text(")" + ("; dual_write: Codex also consolidates the other store"
                             if store.get("dual_write") else ""))
        fact("memory store read", store_fact)
        fact("memory folder", lambda: page.element("code", store["memory_folder"] or "-",
                                                    free=True))
    if stats.get("fleet") is not None:
        fact("read from", lambda: page.text(
            "the fleet server: each machine's memcite and Codex counts added up, cited lines "
            "as each machine checked them when it pushed; machines: "
            + ", ".join(stats["fleet"]["machines"])))
    else:
        fact("Codex home", lambda: page.element("code", stats.get("codex_home") or "-",
                                                free=True))
        fact("usage data", lambda: page.element("code", stats.get("state_db") or
                                                "none (judged without it)", free=True))
        fact("read from", lambda: page.text(
            "memcite's ledger" if stats["source"] == "memcite" else
            "Codex's memories database alone (no memcite ledger: no citation log)"))
        if stats.get("audit") is not None:
            from memcite.retention.audit_counts import audit_line

            def audit_fact() -> None:  # its counts as the page's numbers; a `command` as code
                audit = stats["audit"]
                if audit.get("at") is None:
                    line = audit_line(audit).removeprefix("memory audit").lstrip(" :")
                    for index, part in enumerate(line.split("`")):
                        page.element("code", part) if index % 2 else page.text(part)
                    return
                page.time("audit.at", audit["at"])
                page.text(": ")
                for index, (kind, label) in enumerate((("poisoned", "poisoned"), ("secret", "secrets"),
                                                       ("cross-project", "cross-project"),
                                                       ("directive", "directives"))):
                    page.text(", " if index else "")
                    page.number(f"audit.counts.{kind}", audit["counts"][kind])
                    page.text(f" {label}")
                page.text(" in ")
                page.number("audit.memories", audit["memories"])
                page.text(" memories (")
                page.element("code", "memcite audit")
                page.text(" lists each" + ("" if audit["current"] else
                                           "; the memory folder changed since, run it again") + ")")

            fact("memory audit", audit_fact)
        v2 = (stats.get("consolidation") or {}).get("v2")
        if v2 is not None:
            def v2_fact() -> None:  # Codex's memory/status judgement of its v2 store (no digit
                # in loose text: every number on the page is data)
                page.text("ready to switch; " if v2["ready"] else "not ready; ")
                page.number("consolidation.v2.consolidated_threads", v2["consolidated_threads"])
                page.text(" of the ")
                page.number("consolidation.v2.min_consolidated_threads",
                            v2["min_consolidated_threads"])
                page.text(" threads Codex wants consolidated into it, its summary "
                          + ("valid" if v2["summary_valid"] else "not valid yet") + " (")
                page.element("code", "memcite consolidation")
                page.text(" tells more)")

            fact("Codex's new memory store", v2_fact)

    def memories_fact() -> None:
        page.number("totals.memories", t["memories"])
        page.text(" (in Codex's table ")
        page.number("totals.in_codex_table", t["in_codex_table"])
        page.text(", archived ")
        page.number("totals.archived", t["archived"])
        page.text(", gone from Codex ")
        page.number("totals.gone_from_codex", t["gone_from_codex"])
        page.text(")")
    fact("memories", memories_fact)

    def cited_fact() -> None:
        page.text("by memcite's log ")
        page.number("totals.cited_memcite", t["cited_memcite"])
        page.text(", by Codex's counters ")
        page.number("totals.cited_codex", t["cited_codex"])
        page.text("; never cited: ")
        page.number("totals.never_cited_memcite", t["never_cited_memcite"])
        page.text(" and ")
        page.number("totals.never_cited_codex", t["never_cited_codex"])
    fact("cited", cited_fact)

    def citations_fact() -> None:
        page.number("totals.citations", t["citations"])
        page.text(" in ")
        page.number("totals.replies", t["replies"])
        page.text(" replies; Codex's counters add up to ")
        page.number("totals.codex_citations", t["codex_citations"])
        page.text("; ids not known ")
        page.number("totals.unknown_ids", t["unknown_ids"])
        page.text(", not UUIDs ")
        page.number("totals.not_uuid_ids", t["not_uuid_ids"])
    fact("citations", citations_fact)
    if stats.get("other_homes"):
        fact("other homes", lambda: page.free(", ".join(stats["other_homes"]) +
                                              " (in memcite's database, not counted here)"))
    page.close("dl")
    page.close("section")


def _weeks(page: _Page, stats: dict) -> None:
    weeks = stats.get("weeks")
    _section(page, "weeks", "Citations per week")
    if weeks is None:
        page.element("p", "No citation log: Codex's database alone counts no weeks.",
                      {"class": "muted"})
        page.close("section")
        return
    if not weeks:
        page.element("p", "No citations yet.", {"class": "muted"})
        page.close("section")
        return
    first = max(0, len(weeks) - WEEKS_DRAWN) if stats.get("since") is None else 0
    page.raw("<figure>")
    page.raw('<div class="scroll">')
    _weeks_chart(page, weeks, first)
    page.raw("</div><figcaption>")
    page.text("Counted citations of the replies made each week (weeks start on Monday)")
    if first:
        page.text(": the weeks from ")
        page.time(f"weeks.{first}.week_start", weeks[first]["week_start"])
        page.text(" on, of ")
        page.number("len(weeks)", len(weeks))
        page.text(" weeks with citations or after them (the table lists the same weeks)")
    page.text(".")
    page.raw("</figcaption></figure>")
    page.raw("<details><summary>The weeks as a table</summary>")
    shown = list(enumerate(weeks))[first:]
    _table(page, _caption("Citations per week"), [
        _Column("week of", "week", False,
                lambda p, row, _i: p.time(f"weeks.{row[0]}.week_start", row[1]["week_start"])),
        _Column("citations", "citations", True,
                lambda p, row, _i: p.number(f"weeks.{row[0]}.citations", row[1]["citations"])),
    ], shown)
    page.raw("</details>")
    page.close("section")


def _bucket_label(page: _Page, key: str, bucket: dict, tag: str = "data") -> None:
    low, high = bucket["more_than_days"], bucket["up_to_days"]
    if low is None:
        page.text("up to ")
        page.number(f"{key}.up_to_days", high, tag=tag)
    elif high is None:
        page.text("over ")
        page.number(f"{key}.more_than_days", low, tag=tag)
    else:
        page.number(f"{key}.more_than_days", low, tag=tag)
        page.text("\u2013")
        page.number(f"{key}.up_to_days", high, tag=tag)
    page.text(" days")


def _ages(page: _Page, stats: dict, extras: dict) -> None:
    ages = extras.get("ages")
    _section(page, "ages", "Memories by age of last use")
    if not ages:
        page.element("p", "Not counted for this report.", {"class": "muted"})
        page.close("section")
        return
    page.open("p")
    page.text("Each memory the rule judges, by the days since its last use (the latest of "
              "memcite's citations, Codex's and its re-extraction, under rule "
              f"{ages['rule']}): alive up to ")
    page.number("max_unused_days", stats["max_unused_days"])
    page.text(" days, dead beyond; asked to forget: memcite asked Codex to forget it and "
              "Codex still has it.")
    page.close("p")
    rows = []
    for index, bucket in enumerate(ages["buckets"]):
        key = f"report.ages.buckets.{index}"
        state = "dead" if bucket["dead"] else "alive"

        def label(p, key=key, bucket=bucket) -> None:
            _bucket_label(p, key, bucket, "tspan")

        def value(p, key=key, bucket=bucket) -> None:
            p.number(f"{key}.memories", bucket["memories"], tag="tspan")
            if bucket["asked"]:
                p.text(" (")
                p.number(f"{key}.asked", bucket["asked"], tag="tspan")
                p.text(" asked)")

        rows.append({"label": label, "value": value,
                     "parts": [("asked", bucket["asked"]),
                               (state, bucket["memories"] - bucket["asked"])]})
    page.raw('<figure><div class="scroll">')
    _hbars(page, "ages", "Memories by days since their last use",
           "One bar per span of days unused, youngest first; green bars are alive, red dead, "
           "purple the part asked to forget. The table below gives the same counts.", rows)
    page.raw("</div><figcaption>")
    _legend(page, [("alive", "alive"), ("dead", "dead (unused for too long)"),
                   ("asked", "asked to forget, still in Codex")])
    page.raw("</figcaption></figure>")

    def span(p, row, _i) -> str:
        index, bucket = row
        _bucket_label(p, f"report.ages.buckets.{index}", bucket)
        return None

    def state(p, row, _i) -> None:
        bucket = row[1]
        p.element("span", "dead" if bucket["dead"] else "alive",
                  {"class": f"tag {'dead' if bucket['dead'] else 'good'}"})

    _table(page, _caption("Memories judged: ", ("report.ages.judged", ages["judged"]),
                          "; with no last use at all: ", ("report.ages.unknown", ages["unknown"])),
           [_Column("days unused", None, False, span),
            _Column("state", None, False, state),
            _Column("memories", None, True, lambda p, row, _i: p.number(
                f"report.ages.buckets.{row[0]}.memories", row[1]["memories"])),
            _Column("asked to forget", None, True, lambda p, row, _i: p.number(
                f"report.ages.buckets.{row[0]}.asked", row[1]["asked"]))],
           list(enumerate(ages["buckets"])))
    page.close("section")


def _outcome_class(outcome: str) -> str:
    return "good" if outcome in _GOOD else "warn" if outcome in _WARN else "bad"


def _checks(page: _Page, stats: dict) -> None:
    checks = stats["citation_checks"]
    _section(page, "checks", "Citation checks")
    if not stats.get("citation_log"):
        page.element("p", "No citation log (run memcite record or memcite ingest): nothing "
                     "was checked.", {"class": "muted"})
        page.close("section")
        return
    page.open("p")
    page.text("Each cited line range of the replies, checked against the memory folder as it "
              "is now (")
    page.element("code", checks.get("memory_root") or "no memory folder", free=True)
    page.text("): ")
    page.number("citation_checks.citations", checks["citations"])
    page.text(" cited ranges, ")
    page.number("citation_checks.entries", checks["entries"])
    page.text(" distinct, ")
    page.number("citation_checks.broken", checks.get("broken"))
    page.text(" broken.")
    page.close("p")
    outcomes = [name for name in CHECK_OUTCOMES if name in checks["outcomes"]]
    rows = []
    for name in outcomes:
        counts = checks["outcomes"][name]
        key = f"citation_checks.outcomes.{name}"

        def label(p, name=name) -> None:
            p.text(name.replace("_", " "))

        def value(p, key=key, counts=counts) -> None:
            p.number(f"{key}.citations", counts["citations"], tag="tspan")

        rows.append({"label": label, "value": value,
                     "parts": [(_outcome_class(name), counts["citations"])]})
    page.raw('<figure><div class="scroll">')
    _hbars(page, "checks", "Cited line ranges by the outcome of their check",
           "One bar per outcome; green is unchanged, amber moved or not verifiable, red "
           "broken. The table below gives the counts and what each outcome means.", rows)
    page.raw("</div><figcaption>")
    _legend(page, [("good", "ok"), ("warn", "moved, or not verifiable"), ("bad", "broken")])
    page.raw("</figcaption></figure>")

    def outcome_cell(p, name, _i) -> str:
        p.element("span", name, {"class": f"tag {_outcome_class(name)}"})
        return name

    _table(page, _caption("What the checks found, per outcome"), [
        _Column("outcome", "outcome", False, outcome_cell),
        _Column("ranges", "ranges", True, lambda p, name, _i: p.number(
            f"citation_checks.outcomes.{name}.citations",
            checks["outcomes"][name]["citations"]) or checks["outcomes"][name]["citations"]),
        _Column("distinct", "distinct", True, lambda p, name, _i: p.number(
            f"citation_checks.outcomes.{name}.entries",
            checks["outcomes"][name]["entries"]) or checks["outcomes"][name]["entries"]),
        _Column("meaning", None, False,
                lambda p, name, _i: p.free(OUTCOME_MEANING.get(name, "")) or "t"),
    ], outcomes, sortable="outcomes")
    worst = checks.get("worst") or []

    def place(p, entry, i) -> str:
        p.element("code", entry["path"], free=True)
        return entry["path"]

    def lines(p, entry, i) -> int:
        p.number(f"citation_checks.worst.{i}.line_start", entry["line_start"])
        p.text("\u2013")
        p.number(f"citation_checks.worst.{i}.line_end", entry["line_end"])
        moved = entry.get("moved_to")
        if moved:
            p.text(" (now at ")
            p.number(f"citation_checks.worst.{i}.moved_to.0", moved[0])
            p.text("\u2013")
            p.number(f"citation_checks.worst.{i}.moved_to.1", moved[1])
            p.text(")")
        return entry["line_start"]

    page.element("h3", "The worst cited places")
    _table(page, _caption("Cited ranges that are not ok, most cited first"), [
        _Column("file", "file", False, place),
        _Column("lines", "lines", True, lines),
        _Column("outcome", "outcome", False, lambda p, entry, i: outcome_cell(
            p, entry["outcome"], i)),
        _Column("what is wrong", None, False, lambda p, entry, i: p.free(entry.get("problem")
                                                                         or "") or "t"),
        _Column("times cited", "times", True, lambda p, entry, i: p.number(
            f"citation_checks.worst.{i}.citations", entry["citations"]) or entry["citations"]),
    ], worst, sortable="worst", empty="none: every cited range is ok")
    files = stats.get("files") or []
    page.element("h3", "Cited ranges per file")
    _table(page, _caption("Files of the memory folder by how often they were cited"), [
        _Column("file", "file", False, place),
        _Column("cited ranges", "citations", True, lambda p, item, i: p.number(
            f"files.{i}.citations", item["citations"]) or item["citations"]),
    ], files, sortable="files")
    sections = stats.get("sections") or []
    if sections:
        page.element("h3", "MEMORY.md sections")

        def section_title(p, item, i) -> str:
            p.free(item["path"])
            if not item["citations"]:
                p.text(" ")
                p.element("span", "never cited", {"class": "tag bad"})
            return "t"

        _table(page, _caption("Cited ranges per section of MEMORY.md, in file order"), [
            _Column("section", "section", False, section_title),
            _Column("from line", "line", True, lambda p, item, i: p.number(
                f"sections.{i}.line", item["line"]) or item["line"]),
            _Column("cited ranges", "citations", True, lambda p, item, i: p.number(
                f"sections.{i}.citations", item["citations"]) or item["citations"]),
        ], sections, sortable="sections")
    skipped = checks.get("skipped") or {}
    for path, why in skipped.items():
        page.open("p", {"class": "muted"})
        page.text("Not read: ")
        page.element("code", path, free=True)
        page.text(": ")
        page.free(why)
        page.close("p")
    page.close("section")


def _link(page: _Page, path: str, text_writer) -> None:
    url = file_url(path)
    if url is None:
        text_writer()
        return
    page.open("a", {"href": url})
    text_writer()
    page.close("a")


def _memory_link(page: _Page, extras: dict, thread_id: str) -> str:
    link = (extras.get("links") or {}).get(thread_id)
    if link is None:
        page.element("span", "-", {"class": "muted"})
        return ""
    if link["kind"] == "summary":
        _link(page, link["path"], lambda: page.text("rollout summary"))
        return "summary"
    key = f"report.links.{thread_id}.line"

    def text() -> None:
        page.text("MEMORY.md:")
        page.number(key, link["line"])

    _link(page, link["path"], text)
    return "memory_md"


def _id_cell(p: _Page, row, _i) -> str:
    p.element("code", row["thread_id"], {"class": "id"}, free=True)
    return row["thread_id"]


def _count_cell(list_key: str, log: bool):
    """A cell writer of a memory's count ``field``; memcite's count is no number without a
    citation log (a dash, with no key: the JSON's 0 means "not counted" there)."""
    def field_writer(field: str):
        def write(p: _Page, row, i):
            if field == "usage_count" and not log:
                p.element("span", "-", {"class": "muted"})
                return -1
            value = row.get(field)
            p.number(f"{list_key}.{i}.{field}", value)
            return -1 if value is None else value
        return write
    return field_writer


def _label_cell(p: _Page, row, _i) -> str:
    p.free(row.get("label") or "-")
    if row.get("asked_to_forget"):
        p.text(" ")
        p.element("span", "asked to forget", {"class": "tag asked"})
    return (row.get("label") or "-").lower()


def _dead(page: _Page, stats: dict, extras: dict) -> None:
    dead = stats.get("dead") or []
    _section(page, "dead", "Dead memories")
    log = stats.get("citation_log")

    def caption(p: _Page) -> None:
        p.number("dead_count", stats["dead_count"])
        p.text(" dead: unused for more than ")
        p.number("max_unused_days", stats["max_unused_days"])
        p.text(" days; the ")
        p.number("len(dead)", len(dead))
        p.text(" stalest listed")
        _more(p, stats, "dead_count", "dead", "dead memories")
        p.text(". Select a header to sort.")

    count = _count_cell("dead", log)

    def last(p: _Page, row, i) -> int:
        p.time(f"dead.{i}.last_used", row.get("last_used"))
        return row.get("last_used") or 0

    _table(page, caption, [
        _Column("thread id", "id", False, _id_cell),
        _Column("label", "label", False, _label_cell, free=True),
        _Column("days unused", "days", True, lambda p, row, i: p.number(
            f"dead.{i}.days_unused", row["days_unused"]) or row["days_unused"]),
        _Column("last used", "last", True, last),
        _Column("why", "reason", False, lambda p, row, i: p.free(row["reason"]) or
                row["reason"], free=True),
        _Column("memcite", "memcite", True, count("usage_count")),
        _Column("Codex", "codex", True, count("codex_usage_count")),
        _Column("read it", "file", False, lambda p, row, i: _memory_link(
            p, extras, row["thread_id"])),
    ], dead, sortable="dead", filter_label="Filter the dead memories",
        empty="none: every memory was used recently enough")
    page.element("p", "memcite: citations in memcite's log; Codex: Codex's own usage count "
                 "(- when Codex's counter is empty). Read it: the memory's rollout summary, "
                 "else the line of MEMORY.md that names it.", {"class": "muted"})
    page.close("section")


def _top(page: _Page, stats: dict, extras: dict) -> None:
    top = stats.get("top") or []
    _section(page, "top", "Most cited")
    log = stats.get("citation_log")

    count = _count_cell("top", log)

    def last(p: _Page, row, i) -> int:
        p.time(f"top.{i}.last_used", row.get("last_used"))
        return row.get("last_used") or 0

    _table(page, _caption("The ", ("len(top)", len(top)),
                          " most cited memories, by whichever count saw more"), [
        _Column("thread id", "id", False, _id_cell),
        _Column("label", "label", False, _label_cell, free=True),
        _Column("memcite", "memcite", True, count("usage_count")),
        _Column("Codex", "codex", True, count("codex_usage_count")),
        _Column("last used", "last", True, last),
        _Column("read it", "file", False, lambda p, row, i: _memory_link(
            p, extras, row["thread_id"])),
    ], top, sortable="top", filter_label="Filter the most cited memories",
        empty="none cited yet")
    page.close("section")


def _asked(page: _Page, stats: dict, extras: dict) -> None:
    asked = stats.get("asked_to_forget") or []
    if not asked:
        return
    _section(page, "asked", "Asked to forget, still in Codex")

    def caption(p: _Page) -> None:
        p.number("totals.asked_to_forget", stats["totals"]["asked_to_forget"])
        p.text(" memories memcite asked Codex to forget that Codex still has (until a sync "
               "finds them gone)")
        _more(p, stats, "totals.asked_to_forget", "asked_to_forget", "requests")

    _table(page, caption, [
        _Column("thread id", "id", False, _id_cell),
        _Column("label", "label", False, _label_cell, free=True),
        _Column("asked", "asked", True, lambda p, row, i: p.time(
            f"asked_to_forget.{i}.requested_at", row.get("requested_at")) or
            (row.get("requested_at") or 0)),
        _Column("how", "how", False, lambda p, row, i: p.text(
            "an ad-hoc note" if row.get("way") == "note" else
            "rows deleted from Codex's table") or row.get("way")),
        _Column("read it", "file", False, lambda p, row, i: _memory_link(
            p, extras, row["thread_id"])),
    ], asked, sortable="asked")
    page.close("section")


def _runs(page: _Page, stats: dict) -> None:
    """The timeline of consolidations ``memcite consolidation`` judged, newest first."""
    runs = (stats.get("consolidation") or {}).get("runs") or []
    if not runs:
        return
    _section(page, "runs", "Consolidations")

    def caption(p: _Page) -> None:
        p.number("len(consolidation.runs)", len(runs))
        p.text(" consolidations seen in memcite's snapshots of the memory folder, newest "
               "first, with what each did to the lines in use (as ")
        p.element("code", "memcite consolidation --history")
        p.text(" last judged them)")

    def counted(name: str):
        return lambda p, row, i: p.number(f"consolidation.runs.{i}.counts.{name}",
                                          (row.get("counts") or {}).get(name)) or \
            (row.get("counts") or {}).get(name)

    _table(page, caption, [
        _Column("seen", "seen", True, lambda p, row, i: p.time(
            f"consolidation.runs.{i}.after_taken_at", row.get("after_taken_at")) or
            (row.get("after_taken_at") or 0)),
        _Column("findings", "findings", True, lambda p, row, i: p.number(
            f"consolidation.runs.{i}.findings", row.get("findings")) or row.get("findings")),
        _Column("lost in use", "lost", True, counted("lost")),
        _Column("of which unexpected", None, True, counted("lost_unexpected")),
        _Column("rewritten", "rewritten", True, counted("rewritten")),
        _Column("unsupported", "unsupported", True, counted("unsupported")),
        _Column("came back", "came_back", True, counted("came_back")),
        _Column("notes absorbed", None, True, counted("notes_absorbed")),
        _Column("notes not absorbed", None, True, counted("notes_not_absorbed")),
    ], runs, sortable="runs")
    page.close("section")


def _entries(page: _Page, stats: dict) -> None:
    entries = stats.get("entries")
    if not entries or not entries.get("count"):
        return
    _section(page, "entries", "Entries and tiers")
    page.open("p")
    page.number("entries.count", entries["count"])
    page.text(" entries in MEMORY.md and memcite's notes, cited ")
    page.number("entries.citations", entries["citations"])
    page.text(" times (a cited range counts once for each entry it covers); ")
    page.number("entries.never_cited_count", entries["never_cited_count"])
    page.text(" never cited.")
    page.close("p")
    tiers = list(entries["tiers"].items())
    _table(page, _caption("Entries per tier"), [
        _Column("tier", None, False, lambda p, row, i: p.text(row[0])),
        _Column("entries", None, True, lambda p, row, i: p.number(
            f"entries.tiers.{row[0]}", row[1])),
    ], tiers)
    for file_index, item in enumerate(entries.get("files") or []):
        if item.get("problem"):
            page.open("p", {"class": "muted"})
            page.text("Not read: ")
            page.element("code", item["path"], free=True)
            page.text(": ")
            page.free(item["problem"])
            page.close("p")
        elif item.get("kind") == "codex" and (item.get("moved") or item.get("unattributed")):
            page.open("p", {"class": "muted"})
            page.number(f"entries.files.{file_index}.unattributed", item["unattributed"])
            page.text(" cited ranges cover no entry now; ")
            page.number(f"entries.files.{file_index}.moved", item["moved"])
            page.text(" were followed to lines that moved.")
            page.close("p")
    # Entries of MEMORY.md only: the notes' entries belong to their projects (counted in
    # "Notes per scope", never quoted).
    for list_key, title, what in (
            ("most_relevant", "Most relevant entries of MEMORY.md",
             "importance \u00d7 decay by days unused, highest first"),
            ("never_cited", "Entries of MEMORY.md never cited", "in file order")):
        rows = [(i, row) for i, row in enumerate(entries.get(list_key) or [])
                if row.get("kind") == "codex"]
        page.element("h3", title)

        def where(p: _Page, pair, _i, list_key=list_key) -> int:
            i, row = pair

            def text() -> None:
                p.text("MEMORY.md:")
                p.number(f"entries.{list_key}.{i}.line_start", row["line_start"])

            _link(p, row["path"], text)
            return row["line_start"]

        _table(page, _caption(what), [
            _Column("entry", "entry", False, lambda p, pair, _i: p.free(pair[1]["title"]) or "t"),
            _Column("line", "line", True, where),
            _Column("tier", "tier", False, lambda p, pair, _i: p.text(pair[1]["tier"] or "-")
                    or (pair[1]["tier"] or "-")),
            _Column("cited", "cited", True, lambda p, pair, _i, list_key=list_key: p.number(
                f"entries.{list_key}.{pair[0]}.citations", pair[1]["citations"])
                or pair[1]["citations"]),
            _Column("last cited", "last", True, lambda p, pair, _i, list_key=list_key: p.time(
                f"entries.{list_key}.{pair[0]}.last_cited", pair[1]["last_cited"])
                or (pair[1]["last_cited"] or 0)),
            _Column("relevance", "relevance", True, lambda p, pair, _i, list_key=list_key:
                    p.number(f"entries.{list_key}.{pair[0]}.relevance", pair[1]["relevance"])
                    or pair[1]["relevance"]),
        ], rows, sortable=f"entries_{list_key}")
    chains = entries.get("chains") or []
    if chains:
        page.open("p")
        page.number("len(entries.chains)", len(chains))
        page.text(" supersession chains (an entry replaced by another); `memcite stats` lists "
                  "them.")
        page.close("p")
    page.close("section")


def _notes(page: _Page, extras: dict) -> None:
    notes = extras.get("notes") or []
    _section(page, "notes", "Notes per scope")
    page.element("p", "memcite's own notes in this Codex home (global, per project, per "
                 "session): how many entries each holds and how old they are. Their text is "
                 "never shown here: each note belongs to its own project.", {"class": "muted"})

    def tiers(p: _Page, row, i) -> str:
        shown = [(tier, n) for tier, n in (row[1].get("tiers") or {}).items() if n]
        for index, (tier, n) in enumerate(shown):
            if index:
                p.text(", ")
            p.text(f"{tier} ")
            p.number(f"report.notes.{row[0]}.tiers.{tier}", n)
        if not shown:
            p.text("-")
        return None

    def date(field: str):
        def write(p: _Page, row, i):
            p.time(f"report.notes.{row[0]}.{field}", row[1].get(field))
            return row[1].get(field) or 0
        return write

    def name(p: _Page, row, i) -> str:
        p.element("code", row[1]["name"], free=True)
        if row[1].get("problem"):
            p.text(" (not read: ")
            p.free(row[1]["problem"])
            p.text(")")
        return row[1]["name"]

    _table(page, _caption("Notes: ", ("len(report.notes)", len(notes))), [
        _Column("scope", "scope", False, lambda p, row, i: p.text(row[1]["scope"])
                or row[1]["scope"]),
        _Column("name", "name", False, name),
        _Column("entries", "entries", True, lambda p, row, i: p.number(
            f"report.notes.{row[0]}.entries", row[1]["entries"]) or row[1]["entries"]),
        _Column("tiers", None, False, tiers),
        _Column("oldest entry", "oldest", True, date("oldest_entry")),
        _Column("newest entry", "newest", True, date("newest_entry")),
        _Column("file written", "modified", True, date("modified")),
    ], list(enumerate(notes)), sortable="notes", empty="no notes")
    page.close("section")


def _ids(page: _Page, stats: dict) -> None:
    unknown = stats.get("unknown_ids") or []
    not_uuid = stats.get("not_uuid_ids") or []
    if not unknown and not not_uuid:
        return
    _section(page, "ids", "Cited ids that are no memory")
    if unknown:
        def caption(p: _Page) -> None:
            p.text("Cited ids memcite does not know as memories: ")
            p.number("totals.unknown_ids", stats["totals"]["unknown_ids"])
            _more(p, stats, "totals.unknown_ids", "unknown_ids", "ids")

        _table(page, caption, [
            _Column("thread id", "id", False, _id_cell),
            _Column("citations", "citations", True, lambda p, row, i: p.number(
                f"unknown_ids.{i}.citations", row["citations"]) or row["citations"]),
        ], unknown, sortable="unknown")
    if not_uuid:
        def caption_not_uuid(p: _Page) -> None:
            p.text("Cited ids that are not UUIDs (never counted): ")
            p.number("totals.not_uuid_ids", stats["totals"]["not_uuid_ids"])
            _more(p, stats, "totals.not_uuid_ids", "not_uuid_ids", "ids")

        def rollout(p: _Page, row, i) -> str:
            p.element("code", row["rollout_id"], free=True)
            return row["rollout_id"]

        _table(page, caption_not_uuid, [
            _Column("cited as", "id", False, rollout),
            _Column("citations", "citations", True, lambda p, row, i: p.number(
                f"not_uuid_ids.{i}.citations", row["citations"]) or row["citations"]),
        ], not_uuid, sortable="not_uuid")
    page.close("section")


_SECTIONS = [("summary", "Summary"), ("weeks", "Citations per week"),
             ("ages", "Age of last use"), ("checks", "Citation checks"),
             ("entries", "Entries and tiers"), ("dead", "Dead memories"),
             ("top", "Most cited"), ("asked", "Asked to forget"), ("ids", "Unknown ids"),
             ("notes", "Notes per scope"), ("runs", "Consolidations")]


def render_report(stats: dict, extras: dict, *, version: str) -> str:
    """The whole page of one report: ``stats`` is ``StatsReport.to_dict()`` (``stats --json``
    without its ``_iso`` keys), ``extras`` ``memcite.retention.report_data.report_extras``
    (with ``generated_at``, when the page was written)."""
    page = _Page()
    present = {"asked": bool(stats.get("asked_to_forget")),
               "ids": bool(stats.get("unknown_ids") or stats.get("not_uuid_ids")),
               "entries": bool((stats.get("entries") or {}).get("count")),
               "runs": bool((stats.get("consolidation") or {}).get("runs"))}
    sections = [(anchor, title) for anchor, title in _SECTIONS if present.get(anchor, True)]
    page.raw('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    page.raw('<meta http-equiv="Content-Security-Policy" content="')
    page.text(CONTENT_SECURITY_POLICY)
    page.raw('">')
    page.raw('<meta name="viewport" content="width=device-width, initial-scale=1">'
             '<meta name="color-scheme" content="light dark">'
             '<meta name="referrer" content="no-referrer">'
             '<meta name="generator" content="memcite">'
             '<link rel="icon" href="data:,">')
    page.open("title")
    page.text("memcite report: ")
    page.free(stats.get("codex_home") or ("the fleet" if stats.get("fleet") else "Codex home"))
    page.text(f" ({_day(stats['as_of']) or ''})")
    page.close("title")
    page.raw("<style>" + STYLE + "</style></head><body>")
    _header(page, stats, {"sections": sections})
    page.raw("<main>")
    _summary(page, stats, extras)
    _weeks(page, stats)
    _ages(page, stats, extras)
    _checks(page, stats)
    _entries(page, stats)
    _dead(page, stats, extras)
    _top(page, stats, extras)
    _asked(page, stats, extras)
    _ids(page, stats)
    _notes(page, extras)
    _runs(page, stats)
    page.raw("</main><footer><p>")
    page.text("Written by memcite ")
    page.element("code", version)
    page.text(" at ")
    page.time("report.generated_at", extras.get("generated_at"), full=True)
    page.text(", from the same data as ")
    page.element("code", "memcite stats --json")
    page.text(". This page is one file: it loads nothing and sends nothing.")
    page.raw("</p></footer><script>" + SCRIPT + "</script></body></html>\n")
    return page.html()


__all__ = ["CONTENT_SECURITY_POLICY", "ROWS", "SCRIPT", "STYLE", "file_url", "render_report"]
