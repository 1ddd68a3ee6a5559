"""The runs catalog, headless: rows (``rows``), filters and sort keys (``query``), the store (``store``)."""

from tau_tui.catalog.query import (
    FIELD_BY_KEY,
    FIELDS,
    RowField,
    RunFilter,
    SortSpec,
    query_terms,
    sort_rows,
    text_matches,
)
from tau_tui.catalog.rows import (
    ANY_FLAG,
    FLAG_CODES,
    INFRA_TERMINATIONS,
    PASSED_BUT_VIOLATED,
    EvalSummary,
    ReplaySummary,
    RunRow,
    file_label,
    flag_legend,
    flag_options,
    sim_text,
)
from tau_tui.catalog.store import Catalog, Notice

__all__ = [
    "ANY_FLAG",
    "FIELDS",
    "FIELD_BY_KEY",
    "FLAG_CODES",
    "INFRA_TERMINATIONS",
    "PASSED_BUT_VIOLATED",
    "Catalog",
    "EvalSummary",
    "Notice",
    "ReplaySummary",
    "RowField",
    "RunFilter",
    "RunRow",
    "SortSpec",
    "file_label",
    "flag_legend",
    "flag_options",
    "query_terms",
    "sim_text",
    "sort_rows",
    "text_matches",
]
