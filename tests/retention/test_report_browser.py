"""`memcite report`'s page in a real browser: Debian's headless Chromium, the network refused.

Each test starts Chromium once (a new profile in a temporary folder, no first-run, sync,
component or background traffic, every host name unresolvable and every proxied request
sent to a closed port) on the page written for the sample home, then reads what it left:

- ``--dump-dom``: the DOM after the page's script ran (sorting buttons added, a fragment's
  sort or filter applied);
- ``--enable-logging=stderr``: every console message (``CONSOLE`` lines): there must be
  none, so no script error and no refused resource (a Content-Security-Policy violation is
  a console error);
- ``--log-net-log``: every request the network stack saw; none may come from the page
  (Chromium's own, "not an origin", go nowhere either);
- ``--screenshot`` at a phone's width and a desktop's, light and dark: a PNG (decoded here
  with zlib) that is not blank.

Skipped, saying why, where Chromium is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from report_pages import HOSTILE, NOW, build_report_home

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium")
                                        else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium); "
    "the report's browser tests need it, .ci/run installs it")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
         "--hide-scrollbars", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The report of the sample home, written by the command."""
    from typer.testing import CliRunner

    from memcite.cli.app import app

    folder = tmp_path_factory.mktemp("browser-report")
    env = build_report_home(str(folder / "home"))
    path = folder / "report.html"
    result = CliRunner().invoke(app, ["report", "--html", str(path), "--as-of", str(NOW)],
                                env=env)
    assert result.exit_code == 0, result.output
    return path


class Run:
    """What one Chromium run left: its stdout (the DOM, with --dump-dom), the console lines
    of its log, and the URLs of the requests its network stack saw, by initiator."""

    def __init__(self, stdout: str, log: str, requests: list[tuple[str, str]]) -> None:
        self.stdout = stdout
        self.log = log
        self.requests = requests

    @property
    def console(self) -> list[str]:
        return [line for line in self.log.splitlines() if "CONSOLE" in line or "Uncaught" in line]

    @property
    def from_page(self) -> list[str]:
        """Requests the page made: every one whose initiator is an origin (a file page's is
        'null'); Chromium's own ('not an origin') are not the page's."""
        return [url for initiator, url in self.requests if initiator != "not an origin"]


def chromium(url: str, *args: str, timeout: float = 60) -> Run:
    with tempfile.TemporaryDirectory(prefix="memcite-chromium-") as profile:
        netlog = os.path.join(profile, "net.json")
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}",
             *args, url], capture_output=True, timeout=timeout)
        requests = _requests(netlog)
    return Run(done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"),
               requests)


def _requests(netlog: str) -> list[tuple[str, str]]:
    try:
        with open(netlog, encoding="utf-8") as handle:
            log = json.load(handle)
    except (OSError, ValueError):
        return [("unreadable net log", netlog)]
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    found = []
    for event in log["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params:
            found.append((params.get("initiator", ""), params["url"]))
    return found


# --------------------------------------------------------------------------- PNG


def decode_png(path: str) -> tuple[int, int, int, list[bytes]]:
    """``(width, height, bytes per pixel, rows)`` of an 8-bit RGB or RGBA PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _c, _f, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        if kind == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif kind == 2:
            for x in range(stride):
                line[x] = (line[x] + previous[x]) & 255
        elif kind == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + (left + previous[x]) // 2) & 255
        elif kind == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b, c = previous[x], previous[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, bpp, rows


def _pixels(rows: list[bytes], bpp: int, step: int = 3):
    for row in rows[::step]:
        for x in range(0, len(row), bpp * step):
            yield row[x:x + 3]


def _luminance(rgb: bytes) -> float:
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]


def _screenshot(page: Path, tmp_path: Path, size: str, *extra: str):
    shot = tmp_path / f"shot-{size.replace(',', 'x')}.png"
    run = chromium(page.as_uri(), f"--window-size={size}", f"--screenshot={shot}", *extra)
    assert shot.is_file(), run.log[-2000:]
    return run, decode_png(str(shot))


# --------------------------------------------------------------------------- the tests


def test_the_network_detector_sees_a_page_that_loads_something(tmp_path):
    """The check below can fail: a page with an external image and script is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<img src="http://example.com/x.png"><script src="https://cdn.example.org/a.js">'
                   "</script><script>missing()</script>")
    run = chromium(bad.as_uri(), "--dump-dom")
    assert "http://example.com/x.png" in run.from_page
    assert any("Uncaught" in line for line in run.console)


@pytest.fixture(scope="module")
def loaded(page) -> Run:
    """The page loaded once with no fragment (its DOM dump): three tests read the same run,
    one Chromium start instead of three."""
    return chromium(page.as_uri(), "--dump-dom")


def test_the_page_loads_with_no_console_message_and_no_request(loaded):
    run = loaded
    assert run.console == [], run.console
    assert run.from_page == [], run.from_page
    dom = run.stdout
    assert dom.lstrip().startswith(("<!DOCTYPE html>", "<html")) and "</html>" in dom
    # the script ran: every sortable header got its button, the filters their box
    assert dom.count("<th") > 30 and dom.count('<button type="button">') >= 20
    assert dom.count('data-filter-for="') == 2
    # the charts and the tables are in the DOM, filled
    for chart in ("weeks", "ages", "checks"):
        svg = re.search(rf'<svg[^>]*data-chart="{chart}".*?</svg>', dom, re.DOTALL)
        assert svg and svg.group().count("<rect") >= 3, chart
    body = re.search(r'<table[^>]*data-sortable="dead".*?</table>', dom, re.DOTALL).group()
    assert body.count('<tr data-order="') >= 10
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom and HOSTILE not in dom


def _dead_rows(dom: str) -> list[tuple[int, str]]:
    """``(days unused, label)`` of the dead memories' rows, in the DOM's order."""
    table = re.search(r'<table[^>]*data-sortable="dead".*?</table>', dom, re.DOTALL).group()
    rows = []
    for row in re.findall(r"<tr[ >].*?</tr>", table, re.DOTALL):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
        if 'class="hidden"' in row or len(cells) < 3:  # filtered out, or the header
            continue
        days = int(re.sub(r"<[^>]+>", "", cells[2]).replace(",", ""))
        rows.append((days, re.sub(r"<[^>]+>", "", cells[1]).strip()))
    return rows


def test_a_fragment_sorts_and_filters_the_dead_memories(page, loaded):
    stalest_first = _dead_rows(loaded.stdout)
    assert [days for days, _ in stalest_first] == sorted((d for d, _ in stalest_first),
                                                          reverse=True)
    run = chromium(page.as_uri() + "#sort=dead:days", "--dump-dom")
    assert run.console == []
    newest_first = _dead_rows(run.stdout)
    assert [d for d, _ in newest_first] == sorted(d for d, _ in stalest_first)
    assert 'aria-sort="ascending"' in run.stdout and 'data-sorted="days"' in run.stdout
    by_label = _dead_rows(chromium(page.as_uri() + "#sort=dead:-label", "--dump-dom").stdout)
    assert [label.lower() for _, label in by_label] == sorted(
        (label.lower() for _, label in stalest_first), reverse=True)
    filtered = chromium(page.as_uri() + "#filter=dead:jenkins&sort=dead:days", "--dump-dom")
    rows = _dead_rows(filtered.stdout)
    assert [label for _, label in rows] == ["old_jenkins_setup"]
    assert 'data-shown="1"' in filtered.stdout


@pytest.mark.parametrize("size", ["390,844", "1280,900"])
def test_screenshots_are_not_blank(page, tmp_path, size):
    run, (width, height, bpp, rows) = _screenshot(page, tmp_path, size)
    assert (width, height) == tuple(int(n) for n in size.split(","))
    assert run.console == []
    pixels = list(_pixels(rows, bpp))
    background = max(set(pixels), key=pixels.count)
    assert _luminance(background) > 200  # light by default
    inked = sum(1 for pixel in pixels if pixel != background) / len(pixels)
    assert inked > 0.03, inked  # text, cards, a chart: not an empty page
    assert len(set(pixels)) > 50  # anti-aliased text and several colours


def test_the_dark_scheme_is_dark(page, tmp_path):
    run, (_w, _h, bpp, rows) = _screenshot(page, tmp_path, "390,844", "--force-dark-mode")
    pixels = list(_pixels(rows, bpp))
    background = max(set(pixels), key=pixels.count)
    assert _luminance(background) < 40, background
    assert sum(1 for pixel in pixels if _luminance(pixel) > 150) / len(pixels) > 0.01  # text


def test_the_page_prints(page, tmp_path):
    pdf = tmp_path / "report.pdf"
    run = chromium(page.as_uri(), f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert run.console == []
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", data)) >= 3


def test_the_page_reads_whole_with_javascript_off(page, loaded, tmp_path):
    """The page as a browser with JavaScript off shows it: its script removed (Chromium's own
    switch for scripts also stops its DOM dump and screenshots). Every table, row, chart and
    number is there, in the file's order; only the sorting buttons and filters are not."""
    without = tmp_path / "no-script.html"
    text = page.read_text(encoding="utf-8")
    without.write_text(re.sub(r"<script>.*?</script>", "", text, flags=re.DOTALL),
                       encoding="utf-8")
    run = chromium(without.as_uri() + "#sort=dead:days", "--dump-dom")
    assert run.console == [] and run.from_page == []
    dom = run.stdout
    assert "<button" not in dom and 'data-filter-for="' not in dom
    with_script = loaded.stdout
    assert dom.count("data-key=") == with_script.count("data-key=") > 300
    assert dom.count("<td") == with_script.count("<td")
    for chart in ("weeks", "ages", "checks"):
        assert f'data-chart="{chart}"' in dom
    stalest = [days for days, _ in _dead_rows(dom)]
    assert len(stalest) >= 10 and stalest == sorted(stalest, reverse=True)  # the file's order
    _run, (_w, _h, bpp, rows) = _screenshot(without, tmp_path, "390,844")
    pixels = list(_pixels(rows, bpp))
    background = max(set(pixels), key=pixels.count)
    assert sum(1 for pixel in pixels if pixel != background) / len(pixels) > 0.03
