"""Tournament results: standings, crosstable, Elo, LOS, search statistics and adjudications.

`summarize` turns a spec and its game records into a `TournamentResult`; the format functions
write it as JSON values (`result_json`), terminal text (`text_summary`) or a self-contained HTML
page with an inline SVG Elo plot (`html_report`). `write_records` writes each game as JSON and,
for checkers, all games as one PDN file (games.records' PDN writer).

Points, crosstable, Elo and LOS come from competition.standings, the computation the server's
tournaments show too: Elo is competition.stats.fit_elo over all games (Davidson draws,
first-move advantage, profile-likelihood intervals widened by the colour-swapped pairs' design
effect, infinite where the games cannot bound them). When the games cannot be rated the result
keeps points and crosstable, and `elo_error` says why the ratings are missing.

The package is split by job, its public names all here: `result` (summarize, the JSON values),
`text`, `page` (HTML) and `records` (game files).
"""

from competition.report.page import elo_svg, html_report
from competition.report.records import write_records
from competition.report.result import (
    ADJUDICATIONS,
    BotSearch,
    TournamentResult,
    adjudication_of,
    result_json,
    summarize,
)
from competition.report.text import text_summary
from competition.standings import Standing

__all__ = [
    "ADJUDICATIONS",
    "BotSearch",
    "Standing",
    "TournamentResult",
    "adjudication_of",
    "elo_svg",
    "html_report",
    "result_json",
    "summarize",
    "text_summary",
    "write_records",
]
