"""What ``--ship-data`` costs per domain, without a cluster: packing on the driver, unpacking on a node.

    python -m benchmarks.ship_data [DOMAIN ...] [--tau2-data DIR] [--repeat 3]

For each domain (default: every domain of the tau2 data folder): the files and bytes shipped, the archive's
size, the best of ``--repeat`` times to pack it (``parcel.pack_domain``) and to check and unpack it into an
empty folder (``parcel.extract``, what an actor does once per node).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tau_tui.domains import DomainRegistry
from tau_tui.workers.parcel import extract, pack_domain

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def best(repeat: int, work, *args):
    """(the least seconds of ``repeat`` calls of ``work(*args)``, its result)."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work(*args)
        times.append(time.perf_counter() - started)
    return min(times), result


def unpack(packed) -> int:
    with tempfile.TemporaryDirectory() as folder:
        return extract(packed.blob, Path(folder), packed.domain)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*")
    parser.add_argument("--tau2-data", default=os.environ.get("TAU2_DATA_DIR") or str(CORPUS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = Path(args.tau2_data)
    names = args.domains or sorted(p.name for p in (data / "domains").iterdir() if p.is_dir())
    registry = DomainRegistry(data)
    print(f"{'domain':18s} {'files':>6s} {'data MB':>8s} {'sent MB':>8s} {'pack s':>7s} {'unpack s':>8s}")
    for name in names:
        pack_s, packed = best(args.repeat, pack_domain, registry, name)
        unpack_s, _ = best(args.repeat, unpack, packed)
        mb = 1e6
        print(
            f"{name:18s} {packed.files:6d} {packed.data_bytes / mb:8.2f} {len(packed.blob) / mb:8.2f} "
            f"{pack_s:7.3f} {unpack_s:8.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
