"""The flight viewer in a real browser: Debian's Chromium, headless, driven
by Playwright. Each page is made by the release binary (LOCKSTEP_BIN, else
target/release/lockstep) from a real run, loaded from file:// with the
network cut off, and checked: no console error, the slider puts each
vehicle where its log says it was at that time, the screenshot has a
drawn scene."""

import csv
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("LOCKSTEP_BIN", ROOT / "target/release/lockstep"))
CHROMIUM = os.environ.get("LOCKSTEP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def lockstep(*args, cwd=ROOT):
    r = subprocess.run([str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def read_log(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def playwright():
    assert CHROMIUM, "Chromium is needed (apt-get install chromium)"
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright):
    # SwiftShader: WebGL without a GPU.
    b = playwright.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
    )
    yield b
    b.close()


@pytest.fixture(scope="module")
def browser_without_webgl(playwright):
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-3d-apis", "--disable-gpu"])
    yield b
    b.close()


class Page:
    """A page opened offline, its console and errors collected."""

    def __init__(self, browser, html):
        self.messages = []
        self.requests = []
        self.ctx = browser.new_context(viewport={"width": 1500, "height": 950}, offline=True)
        self.page = self.ctx.new_page()
        self.page.on("console", lambda m: self.messages.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.messages.append(("pageerror", str(e))))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(Path(html).as_uri())
        self.page.wait_for_function("window.lockstepViewer && window.lockstepViewer.ready", timeout=30000)

    def errors(self):
        return [m for m in self.messages if m[0] in ("error", "pageerror", "warning")]

    def state(self):
        return self.page.evaluate("window.lockstepViewer.state()")

    def slide_to(self, index):
        """Moves the slider as a hand does: its value, then its input event."""
        self.page.eval_on_selector(
            "#slider",
            "(s, i) => { s.value = String(i); s.dispatchEvent(new Event('input', {bubbles: true})); }",
            index,
        )

    def shot(self):
        return Image.open(io.BytesIO(self.page.screenshot())).convert("RGB")

    def close(self):
        self.ctx.close()


def scene_box(page):
    b = page.page.eval_on_selector("#scene canvas", "c => { const r = c.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }")
    return tuple(int(v) for v in (b[0], b[1], b[0] + b[2], b[1] + b[3]))


def assert_drawn(img, box):
    """The scene has content: many colours, not one background."""
    scene = img.crop(box)
    colours = scene.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200, f"{len(colours or [])} colours in the scene"
    commonest = max(colours)[0] / (scene.width * scene.height)
    assert commonest < 0.95, f"the scene is {commonest:.0%} one colour"


def only_local(requests):
    return [u for u in requests if not (u.startswith("file://") or u.startswith("blob:") or u.startswith("data:"))]


@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    out = tmp_path_factory.mktemp("fly")
    lockstep("fly", "--out", out)
    return out


def test_a_flight_page_shows_the_logged_position_at_each_slider_time(browser, flight):
    html = flight / "flight.html"
    assert html.exists()
    rows = read_log(flight / "log.csv")
    p = Page(browser, html)
    try:
        s = p.state()
        assert s["plots"] >= 6
        assert len(s["vehicles"]) == 1
        for index in (0, 1, 137, 200, 451, len(rows) - 1):
            p.slide_to(index)
            s = p.state()
            row = rows[index]
            v = s["vehicles"][0]
            assert s["index"] == index and s["time_us"] == int(row["time_us"])
            assert v["time_us"] == int(row["time_us"])
            # Exactly the logged numbers: no rounding on the way.
            assert v["position_ned"] == [float(row["x_m"]), float(row["y_m"]), float(row["z_m"])]
            q = [float(row[k]) for k in ("qw", "qx", "qy", "qz")]
            assert v["quaternion"] == pytest.approx(q, abs=1e-15)
            hud = p.page.inner_text("#hud")
            assert f"t {int(row['time_us']) / 1e6:.3f} s" in hud
            assert f"{int(row['time_us']) / 1e6:.3f} / 90.000 s" == p.page.inner_text("#clock")
        # The keyboard moves it too, one row a key.
        p.slide_to(200)
        p.page.focus("#slider")
        p.page.keyboard.press("ArrowRight")
        assert p.state()["index"] == 201
        # The verdict and the timeline bands are there.
        assert p.page.inner_text("#verdict").startswith("verdict: passed")
        assert p.page.locator("#timeline .band").count() >= 6
        assert "mission" in p.page.inner_text("#legend")
        # A screenshot with a drawn scene, and the vehicle moves in it.
        p.slide_to(200)
        a = p.shot()
        box = scene_box(p)
        assert_drawn(a, box)
        a.save(flight / "viewer.png")
        p.slide_to(330)
        b = p.shot()
        diff = sum(1 for x, y in zip(a.crop(box).getdata(), b.crop(box).getdata()) if x != y)
        assert diff > 50, f"{diff} pixels changed when the vehicle moved"
        assert p.errors() == []
        assert only_local(p.requests) == []
    finally:
        p.close()


def test_play_advances_the_clock(browser, flight):
    p = Page(browser, flight / "flight.html")
    try:
        p.page.select_option("#speed", "50")
        p.page.click("#play")
        p.page.wait_for_function("window.lockstepViewer.state().index > 20", timeout=10000)
        p.page.click("#play")
        i = p.state()["index"]
        p.page.wait_for_timeout(300)
        assert p.state()["index"] == i, "pause stops the clock"
        assert p.errors() == []
    finally:
        p.close()


def test_a_fleet_page_shows_every_vehicle_and_the_closest_pair(browser, tmp_path):
    lockstep("fly", "examples/scenarios/swarm.toml", "--out", tmp_path)
    html = tmp_path / "flight.html"
    assert html.exists()
    names = sorted(p.name[:-4] for p in tmp_path.glob("*.csv"))
    logs = {n: read_log(tmp_path / f"{n}.csv") for n in names}
    p = Page(browser, html)
    try:
        s = p.state()
        assert sorted(v["name"] for v in s["vehicles"]) == names
        for index in (0, 300, 538):
            p.slide_to(index)
            s = p.state()
            for v in s["vehicles"]:
                row = next(r for r in logs[v["name"]] if int(r["time_us"]) == s["time_us"])
                assert v["position_ned"] == [float(row["x_m"]), float(row["y_m"]), float(row["z_m"])]
        assert "all 16 vehicles passed" in p.page.inner_text("#verdict")
        # Proximity episodes are ticks on the timeline of a vehicle in them.
        p.page.select_option("#vehicle", label="lane15 (passed)")
        assert p.page.locator("#timeline .tick.bad").count() >= 1
        img = p.shot()
        assert_drawn(img, scene_box(p))
        img.save(tmp_path / "viewer.png")
        assert p.errors() == []
    finally:
        p.close()


def test_a_monte_carlo_page_lists_every_run_with_its_verdict(browser, tmp_path):
    lockstep("montecarlo", "examples/scenarios/montecarlo.toml", "--runs", "12", "--out", tmp_path)
    html = tmp_path / "montecarlo.html"
    assert html.exists()
    runs = read_log(tmp_path / "runs.csv")
    p = Page(browser, html)
    try:
        s = p.state()
        assert s["runs"] == len(runs) == s["shown"] == 12
        assert s["failed"] == sum(1 for r in runs if r["passed"] != "true")
        assert p.page.locator("table.runs tr.fail").count() == s["failed"]
        # Every figure decoded.
        assert p.page.eval_on_selector_all("figure img", "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)")
        assert s["figures"] >= 1
        assert p.errors() == []
    finally:
        p.close()


def test_without_webgl_the_page_says_so_and_the_rest_works(browser_without_webgl, flight):
    """A browser with no WebGL (a VM, a remote desktop, a hardened browser):
    the 3D pane says why; the plots, the timeline, the slider and the
    read-out work, and no error is thrown."""
    rows = read_log(flight / "log.csv")
    p = Page(browser_without_webgl, flight / "flight.html")
    try:
        assert p.page.evaluate("!document.createElement('canvas').getContext('webgl2')")
        s = p.state()
        assert s["scene"] is False and "WebGL" in s["sceneError"]
        assert p.page.inner_text("#scene").startswith("No 3D view: ")
        assert p.page.locator("#scene canvas").count() == 0
        assert s["plots"] >= 6 and p.page.locator(".uplot canvas").count() >= 6
        assert p.page.locator("#timeline .band").count() >= 6
        marks = "m => m.map(x => x.style.left)"
        before = p.page.eval_on_selector_all(".time-marker", marks)
        p.slide_to(451)
        s = p.state()
        assert s["index"] == 451 and s["time_us"] == int(rows[451]["time_us"])
        v = s["vehicles"][0]
        assert v["position_ned"] == [float(rows[451][k]) for k in ("x_m", "y_m", "z_m")]
        assert f"t {int(rows[451]['time_us']) / 1e6:.3f} s" in p.page.inner_text("#hud")
        after = p.page.eval_on_selector_all(".time-marker", marks)
        assert len(after) == s["plots"] and after != before
        assert p.errors() == []
    finally:
        p.close()


def test_a_monte_carlo_page_counts_runs_not_crashes(browser, tmp_path):
    """A run that crashed twice is one run that crashed; a run that did not
    complete is not one that failed its verdict (the CLI's words)."""
    lockstep("montecarlo", "examples/scenarios/montecarlo.toml", "--runs", "4", "--out", tmp_path)
    path = tmp_path / "runs.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header, runs = reader.fieldnames, list(reader)
    runs[0].update(passed="false", reason="crash: 1.0 m/s at 12.0 s; crash: 0.6 m/s at 15.5 s")
    runs[1].update(passed="false", reason="crash: 2.0 m/s at 3.0 s; max_tilt_deg: 61.0 > 45.0")
    runs[2].update(status="failed", passed="", reason="the worker was killed by signal SIGSEGV")
    runs[3].update(status="completed", passed="true", reason="")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(runs)
    lockstep("view", tmp_path)
    p = Page(browser, tmp_path / "montecarlo.html")
    try:
        s = p.state()
        assert (s["failed"], s["failedVerdict"], s["incomplete"]) == (3, 2, 1)
        assert s["why"] == {"crash": 2, "max_tilt_deg": 1, "the worker was killed by signal SIGSEGV": 1}
        text = p.page.inner_text("#verdict")
        assert "2 of 4 runs failed their verdict, 1 of 4 did not complete" in text
        assert "crash: 2 runs" in text and "max_tilt_deg: 1 run" in text
        assert p.errors() == []
    finally:
        p.close()


def test_view_rebuilds_a_page_from_a_directory_and_from_a_log(browser, flight, tmp_path):
    out = tmp_path / "again.html"
    lockstep("view", flight, "--out", out)
    assert out.read_bytes() == (flight / "flight.html").read_bytes()
    lockstep("view", flight / "log.csv")
    p = Page(browser, flight / "log.html")
    try:
        assert p.page.inner_text("#verdict").startswith("verdict: passed")
        assert p.errors() == []
    finally:
        p.close()


def test_a_prediction_page_shows_each_horizon_and_its_figure(browser, tmp_path):
    log = tmp_path / "identify.ulg"
    lockstep("fly", "examples/scenarios/identify.toml", "--ulog", log, "--quiet")
    lockstep("predict", log, "--out", tmp_path / "predict")
    html = tmp_path / "predict" / "predict.html"
    p = Page(browser, html)
    try:
        s = p.state()
        assert s["horizons"] == s["rows"] == s["figures"] == 3, s
        # The iris replays its own log: the plant beats the baselines in
        # all 12 errors (4 quantities, 3 horizons).
        assert s["better"] == s["compared"] == 12, s
        assert p.page.eval_on_selector_all("figure img", "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)")
        assert p.page.locator("table.errors tr").count() == 4
        assert p.errors() == []
    finally:
        p.close()
