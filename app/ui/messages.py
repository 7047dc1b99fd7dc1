"""Every user-visible string of the window, in one place so tests can assert on substrings."""

from __future__ import annotations

APP_TITLE = "NestScope"
PLACEHOLDER = "Open SMF 113 or MONWRITE files (Ctrl+O) or drop them here"
LOADING = "Reading the files..."
STARTING = "Starting NestScope..."
SMT_COMPUTING = "Computing the SMT tables of {nodes}..."
TREE_PLACEHOLDER = "No files open"
TREE_LOADING = "Loading {n} file(s)..."
FILTER_NO_MATCH = "No CEC, LPAR, class or CPU matches {text!r}"
TABLE_NO_ROWS = "No intervals for the selection and time window"
PARTITION_ONLY_TITLE = "{lpar}: no counters, partition data only"
PARTITION_ONLY_WHY = ("{lpar} sends no CPU MF counters (a coupling facility, or an LPAR not recording SMF 113), so "
                      "there are no intervals, CPI or sourcing for it. The z/VM monitor's partition data (D0R16) "
                      "of {source} tells what is known:")
PARTITION_FACTS = ("<table cellspacing=4><tr><td>LPAR number</td><td>{number}</td></tr>"
                   "<tr><td>Logical processors</td><td>{processors}</td></tr>"
                   "<tr><td>Weight</td><td>{weights}</td></tr>"
                   "<tr><td>Capped</td><td>{capped}</td></tr>"
                   "<tr><td>Busy (mean)</td><td>{busy}</td></tr>"
                   "<tr><td>Partition data</td><td>{first} - {last} UTC</td></tr></table>")
PARTITION_BUSY_TITLE = "{lpar}: busy, % of one CPU summed over its CPUs (D0R16)"
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
ACT_GUIDE = "&User Guide"
GUIDE_TITLE = "NestScope User Guide"
GUIDE_MISSING = "The user guide was not found at {path}. It is docs/user-guide.md in NestScope's source."
ACT_SAVE_WS = "&Save Workspace..."
ACT_SAVE_WS_TIP = "Save the open files, the selection, the time window and the comparison in a small JSON file"
ACT_OPEN_WS = "Open &Workspace..."
ACT_OPEN_WS_TIP = ("Reopen a saved workspace: its files, selection, time window and comparison (they replace "
                   "what is open)")
RECENT_WORKSPACES = "Workspaces"
STATUS_WS_SAVED = "Workspace saved to {path}"
STATUS_WS_OPENED = "Workspace {name}: {n} files"
STATUS_WS_MISSING = "Workspace {name}: {n} of its files were not found ({names})"
WS_ERROR_TITLE = "Cannot open the workspace"
WS_UNSAVED_TITLE = "Save the open workspace?"
WS_UNSAVED_NEW_TEXT = ("File > New closes every open file, the selection, time window and comparison. Save them as a "
                       "workspace first?")
WS_UNSAVED_TEXT = ("Opening {name} closes every open file: its files, selection, time window and comparison replace "
                   "what is open now. Save the open files, selection, time window and comparison first?")
STATUS_WS_CLOSED = "Closed {n} open file(s): the workspace {name} replaces them"
WS_SAVE_ERROR_TITLE = "Cannot save the workspace"
ACT_ABOUT = "&About NestScope"
ACT_NEW = "&New"
ACT_NEW_TIP = "An empty window: every file closed, no selection, no comparison"
ACT_CLOSE_FILES = "&Close Files..."
ACT_CLOSE_FILES_TIP = "Close some of the open files (those of the selected nodes are chosen) or all of them"
ACT_SAMPLE = "Open &Sample"
ACT_SAMPLE_TIP = "Open the bundled sample set (z15 and z16 SMF 113, z/VM MONWRITE)"
ACT_FORMULAS = "&Formula Sets..."
ACT_FORMULAS_TIP = "The formula sets in use and their versions; load a user formulas file (as --formulas)"
STATUS_NEW = "New: no files open"
STATUS_CLOSED = "Files closed: {n} still open"
STATUS_WAIT_JOB = "A computation is running: try again when it has ended"
STATUS_NO_SAMPLES = "No sample files in {path}"
CLOSE_FILES_TITLE = "Close Files"
CLOSE_FILES_TEXT = "Choose the files to close (those of the nodes selected in the tree are chosen):"
CLOSE_SELECTED = "Close Chosen"
CLOSE_ALL = "Close All"
FORMULAS_TITLE = "Formula Sets"
FORMULAS_BUILTIN = "NestScope's built-in sets"
FORMULAS_TEXT = ("<p>In use: {source}</p><table cellspacing=4><tr><td><b>Generation</b></td>"
                 "<td><b>Version</b></td></tr>{rows}</table><p>A user file overrides single formulas of a "
                 "generation, e.g. z16/z17 Rel Nest Intensity from IBM's current CPU MF Formulas document: see "
                 "docs/formulas-template.json and the user guide, section 9. Every table, report and export names "
                 "the version in use.</p>")
FORMULAS_LOAD = "Load File..."
FORMULAS_PICK = "Load a formulas file"
FORMULAS_ERROR_TITLE = "Cannot use the formulas file"
STATUS_FORMULAS = "Formulas from {name}: {versions}"

# the first (default) filter holds every name NestScope writes and reads, and names without an extension ("*" of a
# name filter matches them only as "All files": so the default filter is every file, its title says what it is for)
DATA_SUFFIXES = (".rdw", ".bdw", ".vbs", ".mondata", ".smf", ".gz", ".trs", ".bin", ".dat", ".mon", ".monwrite",
                 ".dump", ".raw", ".terse")
FILE_FILTERS = ";;".join([
    "SMF 113 and MONWRITE data: " + " ".join(DATA_SUFFIXES) + ", names without extension (*)",
    "SMF 113 (" + " ".join("*" + s for s in (".rdw", ".bdw", ".vbs", ".smf", ".trs", ".bin", ".dat", ".dump",
                                            ".raw", ".gz")) + ")",
    "z/VM MONWRITE (*.mondata *.mon *.monwrite *.bin *.dat *.gz)",
    "gzip compressed (*.gz)",
    "tersed with AMATERSE (*.trs *.terse *.pack *.spack)",
    "All files (*)",
])
OPEN_DIALOG_TITLE = "Open SMF 113 or MONWRITE files"
OPEN_FOLDER_TITLE = "Open a folder of SMF 113 or MONWRITE files"

# docks and tabs
DOCK_TREE = "Machines"
TOOLBAR_TITLE = "Time window"
TIMELINE_SEE_INTERVALS = "its busy over time, weight and processors are on the Intervals tab"
TAB_TABLE = "Intervals"
TAB_TIMELINE = "Timelines"
TAB_HEALTH = "Data health"
TAB_HEALTH_N = "Data health ({n})"
HEALTH_TAB_ERRORS_TIP = "Some files or records had errors: their data is missing or partial (see the findings)"
TAB_SMT = "SMT"
FILTER_PLACEHOLDER = "Filter (Ctrl+F): CEC, LPAR, class..."
TREE_HEADERS = ("Node", "CPUs", "Busy %", "CPI")
TREE_HEADER_TIPS = ("CEC, LPAR, processor class, logical CPU; CEC pools (every CPU of one processor type of the "
                    "CEC's LPARs) after the LPARs; SMT classes: core, then its threads. Click a header to sort "
                    "(numbers numerically, no value last; a third click: tree order)",
                    "Logical CPUs (for partition-only LPARs: from the partition data)",
                    "Busy in % of one CPU, summed over the node's logical CPUs (LPARCPU): 400 = four CPUs fully "
                    "busy. LPARs known only from partition data: the z/VM D0R16 busy in the same unit. "
                    "Over the time window when one is set, else the whole range",
                    "Cycles per instruction over the time window when one is set, else the whole range")
TREE_WINDOW_NOTE = "Busy and CPI over the time window {window}"
TREE_WHOLE_NOTE = "Busy and CPI over the whole range"
TREE_TIP_LINES = {"busy": "Busy: {v} % of one CPU (summed over CPUs)", "cpi": "CPI: {v}",
                  "n_cpus": "Logical CPUs: {v}", "generation": "Generation: {v}", "machine_type": "Machine type: {v}",
                  "model": "Model: {v}", "serial": "Serial: {v}", "os": "Operating system: {v}",
                  "system": "System: {v}", "formula_set": "Formula set: {v}", "workload_hint": "Workload hint: {v}",
                  "weight": "Weight: {v}", "capped": "Capped: {v}", "lpar_number": "LPAR number: {v}",
                  "partition_cpus": "Logical CPUs (partition data): {v}",
                  "partition_class": "Processors (partition data): {v}",
                  "busy_pct": "Busy per CPU (partition data): {v} %",
                  "n_lpars": "LPARs in the pool: {v}", "cores": "Cores (SMT): {v}", "core": "Core id: {v}",
                  "thread": "Thread {v} of its core", "threads": "Threads: {v} (the core row sums them)"}
TREE_POOL_TIP = ("CEC pool: every logical CPU of this processor type in the CEC's LPARs with counters, their "
                 "counter deltas summed (the numbers of report --by pool)")
TREE_COVERAGE = ("◔ partial coverage ({pct:.0f}%): {note}. A level step in this row's timeline is data "
                 "coverage, not a workload change.")
TREE_CEC_PENDING = "\u2026"
TREE_CEC_PENDING_TIP = ("Files are still being read: the CEC's busy and CPI show once all its LPARs are in "
                        "(until then they would be the sum of some of them)")
TREE_PARTITION_ONLY = "No counters: known only from partition data (z/VM D0R16)"

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
STATUS_WINDOW = "Time window {window}"
STATUS_WINDOW_CLEARED = "Time window cleared: whole range"
STATUS_LOAD_SUMMARY = "{read} of {total} files read: {errors} with errors, {warnings} with warnings{detail}"
STATUS_LOAD_SUMMARY_TIP = ("The last load: files with errors are missing data or could not be read at all; warnings "
                           "mark partial data (a cut last record...). Every finding is on the Data health tab")
STATUS_LOAD_ERRORS_DETAIL = " ({names}): see Data health"
STATUS_LOAD_WARNINGS = "; {n} warnings on Data health"
STATUS_LOAD_RUNNING = "Reading {n} file(s)..."
CHIP_TITLE = "Time window:"
CHIP_WHOLE_RANGE = "whole range"
CHIP_WINDOW = "{start} - {end} UTC"
CHIP_CLEAR_TIP = "Clear the time window: back to the whole range (Ctrl+Shift+T)"
CHIP_ACTIVE_TIP = ("The table, its summary row, the tree's Busy and CPI, the SMT tab and the partition view use this "
                   "window; it is shaded in every plot")
CHIP_IDLE_TIP = "No time window: every view shows the whole range. Drag the region under the timelines or press "\
                "Ctrl+T on selected table rows to choose one"
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
    "l1mp": "L1MP",
    "rni": "Relative Nest Intensity",
    "sourcing": "Sourcing % (stacked)",
    "lparcpu": "LPARCPU %",
    "mt": "MT",
    "cec": "CEC busy by LPAR (stacked)",
}
SOURCING_NODE_TITLE = "Sourcing %: {node}"   # one stacked plot per selected node
SOURCING_MORE = {1: "  (+1 more node not shown)", 2: "  (+{n} more nodes not shown)"}  # 2: any n > 1
PLOT_SHORT = {"cpi": "CPI", "l1mp": "L1MP", "rni": "RNI", "sourcing": "Sourcing %", "lparcpu": "LPARCPU",
              "mt": "MT"}
OVERVIEW_TITLE = "Drag the shaded region to choose the time window"
READOUT_EMPTY = "Move the mouse over a plot to read values"
TIME_AXIS_LABEL = "Interval end (UTC)"
Y_FROM_ZERO = "Axes from 0"
Y_FROM_ZERO_TIP = "Value axes start at zero, so small noise does not look dramatic (remembered)"
LEGEND_TIP = ("One colour per node in every plot; a metric's parts (Est Instr Cmplx CPI, Est Finite CPI) are drawn "
              "in the node's colour, lighter and dashed/dotted")
CEC_TITLE = "{cec}: busy by LPAR (stacked)"
CEC_LEGEND = "Stack of {cec}:"
CEC_TITLE_TIP = ("Who uses the machine: every LPAR's busy in % of one CPU (LPARCPU for LPARs with counters; the z/VM "
                 "D0R16 busy in the same unit for LPARs known only from partition data, marked D0R16), stacked on "
                 "the coarsest interval of the LPARs")
CEC_PARTITION_ONLY = "{lpar} (D0R16)"

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
GLOSSARY_NO_FORMULA = ("No formula configured: IBM's coefficients for {gen} {metric} are not in NestScope, so the "
                       "column stays empty (add them with --formulas FILE)")
GLOSSARY_HOWTO = ("{gen}: no IBM coefficients are configured for {metrics}, so the column stays empty. When you "
                  "have IBM's formula (e.g. from IBM's \"{gen} CPU MF Formulas\"), put it in a JSON file and start "
                  "NestScope with --formulas FILE (the window and every report then use it):<br><code>"
                  "{{\"{gen}\": {{\"version\": \"{gen} / site\", \"metrics\": {{\"RNI\": {{\"expr\": "
                  "\"K*(a*L3P+b*L4LP+c*L4RP+d*MEMP)/100\", \"status\": \"unconfirmed\"}}}}}}}}</code><br>"
                  "See docs/metric-glossary.md.")
ABOUT_TITLE = "About NestScope"
ABOUT_TEXT = ("<h3>NestScope {version}</h3><p>IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data.</p>"
              "<p>Formula sets:</p><ul>{formulas}</ul>")
ABOUT_OVERRIDE = "<p>Formula override file (--formulas): {path}</p>"
ERROR_TITLE = "NestScope: unexpected error"
ERROR_TEXT = "Something went wrong: {what}"

# implausible CPU-intervals (app.engine.plausibility, docs/physical-bounds.md)
ACT_KEEP_IMPLAUSIBLE = "Keep &implausible intervals"
ACT_KEEP_IMPLAUSIBLE_TIP = ("Keep CPU-intervals whose counter deltas break a physical bound in every sum (as "
                            "--keep-implausible); unchecked they are left out, each named in Data health")
STATUS_LEFT_OUT = ("\u26a0 {n} implausible CPU-interval(s) left out of every sum (counter deltas beyond physical "
                   "bounds; see Data health)")
STATUS_KEPT = "\u26a0 {n} implausible CPU-interval(s) kept in the sums (View > Keep implausible intervals)"
QUALITY_CODE_TIPS = {
    "implausible": ("implausible: a CPU-interval summed here has counter deltas no machine can count (a damaged "
                    "record?); Data health names file, offset, counter, value and bound"),
    "left-out": "left-out: that CPU-interval is left out of every sum (View > Keep implausible intervals keeps it)",
}
LEFT_OUT_TIP = "{n} implausible CPU-interval(s) left out of this row's sums"
READOUT_IMPLAUSIBLE = "\u26a0 implausible"
READOUT_LEFT_OUT = "\u26a0 {n} implausible CPU-interval(s) left out"
