"""A link in a folder we walk that leads outside it is never followed (issue 23, class 8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.model.io import scan_paths
from tau_tui.model.submission import open_submission
from tests.model.test_submission import BASELINES, build_submission, submission_meta

pytestmark = pytest.mark.corpus


def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A submission whose trajectories/ holds a link to a results file outside the folder, filed as airline."""
    secret = tmp_path / "private" / "secret_results.json"
    secret.parent.mkdir()
    shutil.copyfile(BASELINES["airline"], secret)
    meta = submission_meta(trajectory_files={"airline": "airline_results.json"}, results={"airline": {"pass_1": 1}})
    folder = build_submission(tmp_path / "s", meta)
    (folder / "trajectories" / "airline_results.json").unlink()
    (folder / "trajectories" / "airline_results.json").symlink_to(secret)
    (folder / "trajectories" / "inner_link.json").symlink_to(folder / "trajectories" / "retail_results.json")
    return folder, secret


def test_a_link_out_of_trajectories_is_never_read(tmp_path: Path) -> None:
    folder, secret = planted(tmp_path)
    link = folder / "trajectories" / "airline_results.json"
    unit = open_submission(folder)
    assert "airline" not in unit.runs
    assert all(run.path.resolve() != secret for run in unit.runs.values())
    assert f"{link}: a link leading outside the folder searched; not read" in unit.problems


@pytest.mark.parametrize("given", ["parent", "folder", "trajectories"])
def test_a_walk_never_follows_a_link_out_and_keeps_links_inside(tmp_path: Path, given: str) -> None:
    folder, secret = planted(tmp_path)
    start = {"parent": tmp_path / "s", "folder": folder, "trajectories": folder / "trajectories"}[given]
    scan = scan_paths([start])
    assert folder / "trajectories" / "airline_results.json" in scan.links_outside
    assert all(p.resolve() != secret for p in scan.files)
    assert folder / "trajectories" / "inner_link.json" in scan.files  # a link inside the folder is a file


@pytest.mark.parametrize("command", ["eval", "replay", "audit"])
def test_commands_say_so_and_never_read_the_outside_file(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    folder, secret = planted(tmp_path)
    data = json.loads(secret.read_text())
    data["simulations"][0]["id"] = "SECRET-SIM"
    secret.write_text(json.dumps(data))
    main([command, str(folder)])
    out, err = capsys.readouterr()
    assert "SECRET-SIM" not in out + err
    assert "a link leading outside the folder searched; not read" in err
    assert "Traceback" not in err


def test_the_tui_loader_notes_the_link_and_never_loads_its_target(tmp_path: Path) -> None:
    from tau_tui.session.events import FileLoaded, FolderNotice, LoadEvent
    from tau_tui.session.library import load_runs

    folder, secret = planted(tmp_path)
    events: list[LoadEvent] = []
    load_runs([folder], 1, events.append, lambda: False, index_workers=0)
    loaded = [e.run.path.resolve() for e in events if isinstance(e, FileLoaded)]
    assert loaded and secret not in loaded
    notices = [e for e in events if isinstance(e, FolderNotice)]
    assert [n.path for n in notices] == [folder / "trajectories" / "airline_results.json"]
