"""The page's HTML building blocks: an escaped table and a Plotly figure's div.

Every cell goes through `figures.esc`, so a value that comes from data (a prompt that contains
`<script>`) is shown as text. The page shell (page.py) and the sections' bodies (sections.py)
both build with these.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go

from .figures import esc

Column = tuple[str, str, Callable | None]  # (column, heading, formatter returning plain text)


def html_table(frame: pd.DataFrame, columns: list[Column], *, scroll: bool = False, table_id: str | None = None) -> str:
    """An escaped HTML table: numbers right-aligned, every cell passed through `esc`."""
    if frame.empty:
        return '<p class="note">Not computed in this run.</p>'
    head = "".join(
        f'<th class="num">{esc(title)}</th>' if fmt is not None else f"<th>{esc(title)}</th>" for _, title, fmt in columns
    )
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for column, _, fmt in columns:
            value = record.get(column)
            if fmt is not None:
                cells.append(f'<td class="num">{esc(fmt(value))}</td>')
            else:
                css = ' class="prompt"' if column == "example_prompt" else ""
                cells.append(f"<td{css}>{esc(value)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    table = f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>' if scroll else table


def figure_div(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config={"displaylogo": False, "responsive": True})
