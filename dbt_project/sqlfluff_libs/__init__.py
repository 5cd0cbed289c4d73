"""What sqlfluff's jinja templater needs to render the models without dbt: `var()` answers with the
defaults of dbt_project.yml (lists included, which sqlfluff's own dbt builtin cannot)."""

from pathlib import Path

import yaml

_VARS = yaml.safe_load((Path(__file__).parents[1] / "dbt_project.yml").read_text())["vars"]


def var(name, default=None):
    return _VARS.get(name, default)
