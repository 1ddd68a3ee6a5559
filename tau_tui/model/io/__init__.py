"""Reading and writing recorded runs in every tau2 layout.

The modules, each importing only those before it:
  * ``reading``: a file's bytes and JSON within the read limit; ``RunFileError``, the one-line error of a file
    that cannot be read,
  * ``names``: file names from identifiers, a path kept inside its folder, the naming rule of new output files,
  * ``writing``: atomic writes, new files that never replace one, advisory locks; ``WriteError``,
  * ``runfile``: ``RunFile``, one loaded run, and ``SimEntry``, its index of simulations,
  * ``paths``: what a scan of folders finds, a run's names, the sidecars that are never runs, the domain a file
    beside a recording names,
  * ``layouts``: ``open_run`` and every file layout it reads.

What other code uses is re-exported here; a test that patches a module's attribute patches the module named.
"""

from tau_tui.model.io.layouts import SUBMISSION_LAYOUT, describe_empty, open_run
from tau_tui.model.io.names import contained, id_filename, id_from_filename, name_part, new_output_path, unused_path
from tau_tui.model.io.paths import (
    SUBMISSION_FILE,
    TRAJECTORIES_DIR,
    PathScan,
    expand_paths,
    is_submission_folder,
    is_tau2_data_folder,
    run_names,
    scan_paths,
    sidecar_domain,
)
from tau_tui.model.io.reading import (
    MAX_READ_SETTING,
    RunFileError,
    error_text,
    json_text,
    max_read_bytes,
    read_bytes,
    read_json,
)
from tau_tui.model.io.runfile import RUN_OPENERS, RecordedOnly, Recovered, RunFile, RunResolution, SimEntry
from tau_tui.model.io.writing import (
    WriteError,
    check_no_credentials,
    check_regular,
    file_lock,
    id_file,
    library_write_error,
    make_folder,
    save_results,
    write_atomic,
    write_new,
)

__all__ = [
    "MAX_READ_SETTING",
    "RUN_OPENERS",
    "SUBMISSION_FILE",
    "SUBMISSION_LAYOUT",
    "TRAJECTORIES_DIR",
    "PathScan",
    "RecordedOnly",
    "Recovered",
    "RunFile",
    "RunFileError",
    "RunResolution",
    "SimEntry",
    "WriteError",
    "check_no_credentials",
    "check_regular",
    "contained",
    "describe_empty",
    "error_text",
    "expand_paths",
    "file_lock",
    "id_file",
    "id_filename",
    "id_from_filename",
    "is_submission_folder",
    "is_tau2_data_folder",
    "json_text",
    "library_write_error",
    "make_folder",
    "max_read_bytes",
    "name_part",
    "new_output_path",
    "open_run",
    "read_bytes",
    "read_json",
    "run_names",
    "save_results",
    "scan_paths",
    "sidecar_domain",
    "unused_path",
    "write_atomic",
    "write_new",
]
