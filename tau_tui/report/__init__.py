"""The static HTML report of several runs (``tau-tui report``): summary, inline SVG charts, the task matrix and
one page per simulation, in a folder that opens from ``file://`` with no network."""

from tau_tui.report.build import MARKER, ReportError, ReportResult, build_report, check_target

__all__ = ["MARKER", "ReportError", "ReportResult", "build_report", "check_target"]
