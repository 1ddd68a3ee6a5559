"""The static report at scale: ``tau-tui report`` over N generated simulations in K runs, timed and sized.

    python -m benchmarks.report_scale [-n 20000] [--runs 3] [--domain airline] [--recorded] [--keep DIR]

``benchmarks.make_corpus`` writes N real simulations of the domain over K files under a temporary folder,
one run each; the report is built of them in a child process (``tau-tui report``, recomputed rewards unless
``--recorded``). Printed: wall time, peak memory of the child, the number of files and bytes written, the size
of ``index.html`` and of the largest page, and the time headless chromium takes to load ``index.html`` from
``file://`` (when playwright and a chromium are installed), with the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.make_corpus import make

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def browser_load_seconds(index: Path) -> float | None:
    """Seconds from navigation to the load event of ``index`` in headless chromium; None without one."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if executable is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        started = time.monotonic()
        page.goto(index.as_uri(), wait_until="load")
        seconds = time.monotonic() - started
        assert page.locator("svg.chart .mark").count() > 0
        browser.close()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--domain", default="airline")
    parser.add_argument("--recorded", action="store_true", help="report the recorded rewards (no replay)")
    parser.add_argument("--keep", type=Path, help="build in this new folder and keep it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="tau-tui-report-"))
    try:
        files = make(args.domain, args.n, work / "runs", files=args.runs)
        out = work / "report"
        command = [sys.executable, "-m", "tau_tui", "report", *map(str, files), "--out", str(out)]
        command += ["--tau2-data", str(CORPUS)] + (["--recorded"] if args.recorded else [])
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        written = [p for p in out.rglob("*") if p.is_file()]
        sizes = [p.stat().st_size for p in written]
        largest = max((p for p in written if p.suffix == ".html"), key=lambda p: p.stat().st_size)
        index = out / "index.html"
        load = browser_load_seconds(index)
        print(
            f"{args.n} simulations of {args.domain} in {args.runs} runs, {'recorded' if args.recorded else 'recomputed'} rewards"
        )
        print(
            f"  report: {seconds:.1f} s ({seconds / args.n * 1000:.2f} ms per simulation), peak memory {peak_mb:.0f} MB"
        )
        print(
            f"  written: {len(written)} files, {sum(sizes) / 1e6:.1f} MB; index.html {index.stat().st_size / 1e3:.1f} kB"
        )
        print(f"  largest page: {largest.relative_to(out)} {largest.stat().st_size / 1e3:.1f} kB")
        print(
            "  chromium load of index.html: " + ("n/a (no playwright or chromium)" if load is None else f"{load:.2f} s")
        )
        print(f"  load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        print(f"  {done.stdout.strip()}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
