"""Every user-visible string of the window, in one place so tests can assert on substrings."""

from __future__ import annotations

APP_TITLE = "NestScope"
PLACEHOLDER = "Open SMF 113 or MONWRITE files (Ctrl+O) or drop them here"
TREE_PLACEHOLDER = "No files open"
TABLE_NO_ROWS = "No intervals for the selection and time window"
TIMELINE_NO_DATA = "No intervals to plot for the selection"
HEALTH_CLEAN = "No data-health findings"

# menus and actions
MENU_FILE = "&File"
MENU_EDIT = "&Edit"
MENU_VIEW = "&View"
MENU_HELP = "&Help"
ACT_OPEN = "&Open..."
ACT_OPEN_TIP = "Open SMF 113 or z/VM MONWRITE files; they are added to what is open"
ACT_OPEN_FOLDER = "Open &Folder..."
ACT_RECENT = "Open &Recent"
ACT_RECENT_EMPTY = "(no recent files)"
ACT_RECENT_CLEAR = "Clear list"
ACT_EXPORT = "&Export..."
ACT_EXPORT_TIP = "Export arrives with the export issue"
ACT_QUIT = "&Quit"
ACT_COPY = "&Copy"
ACT_COPY_TIP = "Copy the selected cells as TSV and HTML (pastes into spreadsheets)"
ACT_FIND = "&Filter tree"
ACT_FIND_TIP = "Narrow the machine tree by name"
ACT_DARK = "&Dark mode"
ACT_WINDOW_FROM_ROWS = "Set time &window to selected intervals"
ACT_WINDOW_FROM_ROWS_TIP = ("Set the time window to the selected interval rows (earliest start to latest end); "
                            "table, summary row, SMT tab and timeline region follow")
ACT_RESET_WINDOW = "&Reset time window"
ACT_RESET_WINDOW_TIP = "Back to the whole time range"
STATUS_NO_ROWS_SELECTED = "Select interval rows in the Intervals table first"
ACT_HELP = "Metric &glossary"
ACT_ABOUT = "&About NestScope"

FILE_FILTERS = ";;".join([
    "SMF and MONWRITE data (*.smf *.bin *.dat *.mon *.monwrite *.gz *.dump *.raw)",
    "SMF 113 (*.smf *.bin *.dat *.dump *.raw)",
    "z/VM MONWRITE (*.mon *.monwrite *.bin *.dat)",
    "gzip compressed (*.gz)",
    "All files (*)",
])
OPEN_DIALOG_TITLE = "Open SMF 113 or MONWRITE files"
OPEN_FOLDER_TITLE = "Open a folder of SMF 113 or MONWRITE files"

# docks and tabs
DOCK_TREE = "Machines"
TAB_TABLE = "Intervals"
TAB_TIMELINE = "Timelines"
TAB_HEALTH = "Data health"
TAB_HEALTH_N = "Data health ({n})"
TAB_SMT = "SMT"
FILTER_PLACEHOLDER = "Filter (Ctrl+F): CEC, LPAR, class..."
TREE_HEADERS = ("Node", "CPUs", "Busy", "CPI")
TREE_PARTITION_ONLY = "known only from partition data (z/VM D0R16): busy {busy} %, weight {weight}"

# status bar and loading
STATUS_LOADING = "Reading {name}..."
STATUS_LOADED = "{name}: {n} intervals read"
STATUS_NOTHING = "{name}: nothing readable ({why})"
STATUS_FAILED = "{name}: could not be read: {why}"
STATUS_CANCELLED = "{name}: loading cancelled"
STATUS_DUPLICATE = "{name} is already open ({other}); not loaded again"
STATUS_QUEUED_DUP = "{name} is already being loaded"
STATUS_NO_FILES = "No files found in {name}"
STATUS_COPIED = "Copied {rows} rows x {cols} columns"
STATUS_COPIED_TREE = "Copied the selected tree rows"
STATUS_COPIED_HEALTH = "Copied the data-health findings"
STATUS_WINDOW = "Time window {start} - {end}"
STATUS_WINDOW_CLEARED = "Time window cleared: whole range"
CANCEL = "Cancel"
CANCEL_TIP = "Stop reading {name}"

# table
COL_SYSTEM = "System"
COL_NODE = "Node"
COL_DATE = "Date"
COL_END = "End"
SUMMARY_LABEL = "Summary"
SUMMARY_TIP = "Whole selection over the time window, computed from summed counter deltas"
SUMMARY_RANGE_TIP = "Summary of {start} - {end} UTC"
INTERVAL_TIP = "Interval {start} - {end} UTC"
COLUMN_CHOOSER = "Columns"
COLUMN_SHOW_ALL = "Show all columns"
COL_QUALITY = "Quality"
QUALITY_HEADER_TIP = "Data-health finding codes of the intervals summed in this row ('' = clean); see Data health"
QUALITY_TIP = "Data-health findings in this interval: {codes}"

# timeline
PLOTS_LABEL = "Plots"
PLOT_TITLES = {
    "cpi": "CPI",
    "l1mp": "L1MP (L1 misses per 100 instructions)",
    "rni": "Relative Nest Intensity",
    "sourcing": "L1 miss sourcing % (stacked)",
    "lparcpu": "LPARCPU %",
    "mt": "MT",
}
SOURCING_NODE_TITLE = "L1 miss sourcing %: {node}"   # one stacked plot per selected node
SOURCING_MORE = {1: "  (+1 more node not shown)", 2: "  (+{n} more nodes not shown)"}  # 2: any n > 1
PLOT_SHORT = {"cpi": "CPI", "l1mp": "L1MP", "rni": "RNI", "sourcing": "Sourcing %", "lparcpu": "LPARCPU",
              "mt": "MT"}
OVERVIEW_TITLE = "Drag the shaded region to choose the time window"
READOUT_EMPTY = "Move the mouse over a plot to read values"

# SMT
SMT_TYPE_TITLE = "By core type (mean rows on top)"
SMT_CORE_TITLE = "By core"
SMT_NO_DATA = ("No multithreading data for this selection: SMT metrics need z/OS MT-diagnostic counters "
               "(PROCVIEW CORE) or z/VM D0R2 records")
SMT_MEAN = "mean"
SMT_MEAN_TIP = "Mean of {lpar} {type} over the time window ({start} - {end} UTC)"
SMT_SOURCE_TIP = {"reported": "Every value as z/VM reports it (D0R2)",
                  "derived": "Every value computed by NestScope from the MT-diagnostic counters M448/M449",
                  "reported+derived": "Reported by z/VM, gaps filled by derivation from M448/M449"}

# health
HEALTH_HEADERS = ("File", "Offset", "Severity", "Code", "Message")
ALL_FILES = "All files"
HEALTH_DETAILS_EMPTY = "Select a finding to read it in full; double-click shows the node it affects"
ALL_SEVERITIES = "All severities"

# help / errors
GLOSSARY_TITLE = "Metric glossary"
GLOSSARY_HEADERS = ("Metric", "Header", "Formula", "Unit", "Status", "Formula set")
ABOUT_TITLE = "About NestScope"
ABOUT_TEXT = ("<h3>NestScope {version}</h3><p>IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data.</p>"
              "<p>Formula sets:</p><ul>{formulas}</ul>")
ABOUT_OVERRIDE = "<p>Formula override file (--formulas): {path}</p>"
ERROR_TITLE = "NestScope: unexpected error"
ERROR_TEXT = "Something went wrong: {what}"
