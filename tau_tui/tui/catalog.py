"""The runs catalog as the TUI uses it: the headless catalog (``tau_tui.catalog``) and the table's columns.

The store, rows, filters and sort keys live in ``tau_tui.catalog`` (no textual, no
rich); the columns (``tau_tui.tui.columns``) add how each field is drawn. This
module gathers both under the names the screens import.
"""

from tau_tui.catalog import (
    ANY_FLAG,
    FIELD_BY_KEY,
    FIELDS,
    FLAG_CODES,
    INFRA_TERMINATIONS,
    PASSED_BUT_VIOLATED,
    Catalog,
    EvalSummary,
    Notice,
    ReplaySummary,
    RowField,
    RunFilter,
    RunRow,
    SortSpec,
    file_label,
    flag_legend,
    flag_options,
    query_terms,
    sim_text,
    sort_rows,
    text_matches,
)
from tau_tui.tui.columns import (
    COLUMN_BY_KEY,
    COLUMNS,
    DASH,
    Column,
    agrees_cell,
    auth_cell,
    column_legend,
    flags_cell,
    notes_cell,
    recomputed_cell,
    review_cell,
    reward_cell,
)

__all__ = [
    "ANY_FLAG", "COLUMNS", "COLUMN_BY_KEY", "DASH", "FIELDS", "FIELD_BY_KEY", "FLAG_CODES", "INFRA_TERMINATIONS", "PASSED_BUT_VIOLATED",
    "Catalog", "Column", "EvalSummary", "Notice", "ReplaySummary", "RowField", "RunFilter", "RunRow", "SortSpec",
    "agrees_cell", "auth_cell", "column_legend", "file_label", "flag_legend", "flag_options", "flags_cell", "notes_cell",
    "query_terms", "recomputed_cell", "review_cell", "reward_cell", "sim_text", "sort_rows", "text_matches",
]
